"""Chat-template rendering shared by the in-process backends (HF, vLLM) and the token-in/token-out ChatAgent.

Tokenizer chat templates expect plain dicts with string content; our `Message` models may carry content parts
(images are dropped here: the embedded models are text-only), `None` content and structured tool calls.
"""

from __future__ import annotations

import json
from typing import Any

from rlvr_gym import GenerationRequest, Message


def message_dict(message: Message) -> dict[str, Any]:
    """A `Message` as the dict HF chat templates read (tool-call arguments parsed to objects, as templates expect)."""
    out: dict[str, Any] = {"role": message.role, "content": message.text()}
    if message.tool_calls:
        calls = []
        for call in message.tool_calls:
            try:
                arguments: Any = json.loads(call.arguments or "{}")
            except ValueError:
                arguments = call.arguments
            calls.append({"id": call.id, "type": "function", "function": {"name": call.name, "arguments": arguments}})
        out["tool_calls"] = calls
    if message.tool_call_id:
        out["tool_call_id"] = message.tool_call_id
    if message.name:
        out["name"] = message.name
    return out


def render_chat(
    tokenizer: Any,
    messages: list[Message],
    *,
    add_generation_prompt: bool,
    tools: list[dict[str, Any]] | None = None,
) -> str:
    """The tokenizer's chat template applied to `messages`, as text."""
    kwargs: dict[str, Any] = {"tokenize": False, "add_generation_prompt": add_generation_prompt}
    if tools:
        kwargs["tools"] = tools
    return tokenizer.apply_chat_template([message_dict(m) for m in messages], **kwargs)


def encode_text(tokenizer: Any, text: str) -> list[int]:
    """Token ids of already-templated text (the template wrote any special tokens itself)."""
    return list(tokenizer(text, add_special_tokens=False)["input_ids"])


def encode_chat(
    tokenizer: Any, messages: list[Message], *, tools: list[dict[str, Any]] | None = None
) -> list[int]:
    """Prompt ids for a chat: template with the generation prompt, then tokenize."""
    return encode_text(tokenizer, render_chat(tokenizer, messages, add_generation_prompt=True, tools=tools))


def request_prompt_ids(tokenizer: Any, request: GenerationRequest) -> list[int]:
    """The exact prompt tokens: given ids as-is, else the chat template (with generation prompt), else the text."""
    if request.prompt_token_ids is not None:
        return list(request.prompt_token_ids)
    if request.messages is not None:
        return encode_chat(tokenizer, request.messages, tools=request.tools)
    if request.prompt is not None:
        return list(tokenizer(request.prompt)["input_ids"])
    raise ValueError("a GenerationRequest needs prompt_token_ids, messages or prompt")


def eos_token_ids(tokenizer: Any, generation_config: Any = None) -> set[int]:
    """Every id that ends a turn: the tokenizer's EOS plus the generation config's (often a list)."""
    ids: set[int] = set()
    for value in (getattr(generation_config, "eos_token_id", None), tokenizer.eos_token_id):
        if isinstance(value, int):
            ids.add(value)
        elif isinstance(value, (list, tuple)):
            ids.update(int(v) for v in value)
    return ids
