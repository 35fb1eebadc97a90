"""Text judges for rubric and checklist rewards (K2V, SRaR): a function from a prompt to the judge's reply.

Why one small protocol: the methods that ask an LLM whether a criterion holds differ in their prompts and in how
they read the reply, not in how the model is called, so they share this and tests pass a plain function instead.

A judge is named in a config as
- `py:<module>:<attr>`: an importable callable `(prompt: str) -> str` (or a factory, see `resolve_judge`);
- any agent spec (`openai:<model>@<url>`, `hf:<path>`, `smollm2`, `constant:yes`): one chat turn per prompt at the
  method's sampling settings.
"""

from __future__ import annotations

import asyncio
import importlib
from collections.abc import Callable
from typing import Any

from rlvr_gym.types import Message, TaskView

Judge = Callable[[str], str]


def agent_judge(spec: str, *, temperature: float = 0.0, max_new_tokens: int = 256) -> Judge:
    """A judge that asks an agent (one fresh conversation per prompt)."""
    from rlvr_gym.agent import make_agent

    agent = make_agent(spec, temperature=temperature, max_new_tokens=max_new_tokens)

    def ask(prompt: str) -> str:
        ctx = agent.start(TaskView(id="judge", prompt=prompt))
        return asyncio.run(agent.act(ctx, [Message(role="user", content=prompt)])).text

    return ask


def resolve_judge(spec: str | Judge, **sampling: Any) -> Judge:
    """A callable judge from a config value; `py:` targets that are classes are instantiated with `sampling`."""
    if callable(spec):
        return spec
    if spec.startswith("py:"):
        module, _, attr = spec[3:].partition(":")
        obj = getattr(importlib.import_module(module), attr)
        return obj(**sampling) if isinstance(obj, type) else obj
    return agent_judge(spec, **sampling)


def says_yes(reply: str) -> bool:
    """A yes/no judge reply read as yes when its first word is "yes" (case and punctuation ignored)."""
    words = reply.strip().lower().replace(".", " ").replace(",", " ").split()
    return bool(words) and words[0] == "yes"
