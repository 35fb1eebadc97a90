"""Rollout allocation: M contexts x K rollouts per problem, each rollout dropped to the plain prompt w.p. p_drop.

Every rollout becomes its own `Task` (a copy of the problem with a unique id and, unless dropped, the hint block
appended to the last user message), so the ordinary runner plays it and the env scores it against the unchanged
ground truth. What the trainer needs later rides in the copy's metadata under `nudge`: the problem's id (the
advantage group), the context id (None = dropped), the hint, and the plain prompt (for distillation).
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Any

from rlvr_gym.types import Message, Task

CONTEXT_BLOCK = (
    "\n\nContext (exploration condition): Use this hint/approach: {hint}\n"
    "Important: Follow this approach as your primary strategy."
)
META_KEY = "nudge"


@dataclass(frozen=True)
class Slot:
    """One rollout of a problem: `context` indexes the problem's hints, None when dropped to the plain prompt."""

    rollout: int
    context: int | None


def allocate(num_contexts: int, rollouts_per_context: int, p_drop: float, rng: random.Random) -> list[Slot]:
    """M x K slots; each independently dropped with probability p_drop (so per-context group sizes vary)."""
    if not 0.0 <= p_drop <= 1.0:
        raise ValueError("p_drop must be in [0, 1]")
    slots = []
    for c in range(num_contexts):
        for _ in range(rollouts_per_context):
            dropped = rng.random() < p_drop
            slots.append(Slot(len(slots), None if dropped else c))
    return slots


def with_context(prompt: str | list[Message], hint: str) -> str | list[Message]:
    """The prompt with the hint block appended to its last user message (the question stays first)."""
    block = CONTEXT_BLOCK.format(hint=hint)
    if isinstance(prompt, str):
        return prompt + block
    messages = list(prompt)
    for i in range(len(messages) - 1, -1, -1):
        if messages[i].role == "user":
            messages[i] = Message(role="user", content=messages[i].text() + block)
            return messages
    return [*messages, Message(role="user", content=block.strip())]


def rollout_tasks(task: Task, hints: list[str], slots: list[Slot]) -> list[Task]:
    """One task copy per slot; a slot whose context has no hint (the source gave fewer than M) is dropped."""
    plain = [m.as_dict() for m in task.prompt_messages()]
    out = []
    for slot in slots:
        ctx = slot.context if slot.context is not None and slot.context < len(hints) else None
        tag = f"c{ctx}" if ctx is not None else "drop"
        meta: dict[str, Any] = {
            "problem_id": task.id,
            "context_id": ctx,
            "rollout": slot.rollout,
            "hint": hints[ctx] if ctx is not None else None,
            "plain_prompt": plain,
        }
        out.append(
            task.model_copy(
                update={
                    "id": f"{task.id}#nudge-{tag}-r{slot.rollout}",
                    "prompt": with_context(task.prompt, hints[ctx]) if ctx is not None else task.prompt,
                    "metadata": {**task.metadata, META_KEY: meta},
                },
                deep=True,
            )
        )
    return out


def nudge_meta(episode: Any) -> dict[str, Any]:
    """The allocation record of an episode (empty for episodes not made by `rollout_tasks`)."""
    meta = (getattr(episode, "task_metadata", None) or {}).get(META_KEY)
    return meta if isinstance(meta, dict) else {}
