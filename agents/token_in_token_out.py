"""Token-in/token-out bookkeeping for multi-turn chats, so training never re-tokenizes history.

Re-rendering a whole conversation each turn and tokenizing it again drifts from what the model actually saw and
produced (the decoded text of sampled tokens does not always re-tokenize to the same ids, stop strings and
truncation change the text). Instead, the next prompt is the previous prompt + the sampled ids, then the template's
end-of-turn glue and the new messages rendered as a *delta* of the chat template. Only the delta is tokenized.

The resulting sequence per episode is `token_ids` with `assistant_mask` (1 = sampled by the model, 0 = prompt,
template glue or env observation) and per-token `logprobs` (0.0 where the mask is 0).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from rlvr_gym import Message, Turn

from .templates import encode_text, render_chat

_PROBE = "\u2063rlvr-probe\u2063"  # a marker no model writes, to find where the template puts assistant content


@dataclass
class TokenTrajectory:
    """One episode's token sequence as the model saw it, with the mask of the tokens it sampled."""

    token_ids: list[int] = field(default_factory=list)
    assistant_mask: list[int] = field(default_factory=list)
    logprobs: list[float] = field(default_factory=list)

    def extend(self, prompt_ids: list[int], generated: list[int], logprobs: list[float] | None) -> None:
        """Record one turn; `prompt_ids` must start with the sequence so far (checked)."""
        if prompt_ids[: len(self.token_ids)] != self.token_ids:
            raise ValueError("prompt does not extend the episode's token sequence (token-in/token-out broken)")
        new_prompt = len(prompt_ids) - len(self.token_ids)
        self.token_ids = list(prompt_ids) + list(generated)
        self.assistant_mask += [0] * new_prompt + [1] * len(generated)
        lp = list(logprobs) if logprobs is not None and len(logprobs) == len(generated) else [0.0] * len(generated)
        self.logprobs += [0.0] * new_prompt + lp

    def as_dict(self) -> dict[str, list[Any]]:
        return {"token_ids": self.token_ids, "assistant_mask": self.assistant_mask, "logprobs": self.logprobs}


def end_of_turn_suffix(tokenizer: Any, history: list[Message], tools: list[dict[str, Any]] | None = None) -> str:
    """What the template writes after an assistant message's content (e.g. `<|im_end|>\\n`)."""
    probe = render_chat(tokenizer, [*history, Message(role="assistant", content=_PROBE)],
                        add_generation_prompt=False, tools=tools)
    at = probe.rfind(_PROBE)
    if at < 0:
        raise ValueError("the chat template drops assistant content; cannot continue token-in/token-out")
    return probe[at + len(_PROBE):]


def continuation_text(
    tokenizer: Any,
    history: list[Message],
    new_messages: list[Message],
    *,
    ended_with: str | None,
    tools: list[dict[str, Any]] | None = None,
) -> str | None:
    """Text to append after the last sampled token so the sequence continues as the template would render it.

    `history` ends with the assistant message just generated; `ended_with` is the text of the end-of-turn token the
    model sampled itself (EOS), if it did. Returns None when the template is not prefix-stable for this
    conversation (the caller then falls back to re-rendering).
    """
    before = render_chat(tokenizer, history, add_generation_prompt=False, tools=tools)
    after = render_chat(tokenizer, [*history, *new_messages], add_generation_prompt=True, tools=tools)
    if not after.startswith(before):
        return None
    glue = end_of_turn_suffix(tokenizer, history[:-1], tools)
    if ended_with and glue.startswith(ended_with):
        glue = glue[len(ended_with):]
    return glue + after[len(before):]


def next_prompt_ids(
    tokenizer: Any,
    previous_ids: list[int],
    history: list[Message],
    new_messages: list[Message],
    *,
    ended_with: str | None,
    tools: list[dict[str, Any]] | None = None,
) -> list[int] | None:
    """previous prompt + sampled ids (`previous_ids`) + tokens of the template delta; None if not prefix-stable."""
    text = continuation_text(tokenizer, history, new_messages, ended_with=ended_with, tools=tools)
    if text is None:
        return None
    return list(previous_ids) + encode_text(tokenizer, text)


def trajectory_from_turns(turns: list[Turn]) -> TokenTrajectory:
    """Rebuild an episode's token sequence and assistant mask from its recorded turns (prompt ids + token ids).

    Raises ValueError when a turn's prompt does not extend the previous turn (an agent without token-in/token-out).
    """
    trajectory = TokenTrajectory()
    for turn in turns:
        if turn.prompt_token_ids is None or turn.token_ids is None:
            raise ValueError(f"turn {turn.index} has no token ids")
        trajectory.extend(turn.prompt_token_ids, turn.token_ids, turn.logprobs)
    return trajectory
