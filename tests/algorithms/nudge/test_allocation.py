"""Rollout allocation: M x K slots, seeded drops, prompts with/without the hint block, recorded metadata."""

from __future__ import annotations

import random

from rlvr_gym.algorithms.nudge.allocation import CONTEXT_BLOCK, allocate, rollout_tasks, with_context
from rlvr_gym.types import Message, Task


def test_allocate_counts_and_seeding():
    slots = allocate(2, 4, 0.5, random.Random("s"))
    assert len(slots) == 8 and [s.rollout for s in slots] == list(range(8))
    assert slots == allocate(2, 4, 0.5, random.Random("s"))
    assert all(s.context is None for s in allocate(3, 2, 1.0, random.Random(0)))
    assert [s.context for s in allocate(2, 2, 0.0, random.Random(0))] == [0, 0, 1, 1]
    drops = sum(s.context is None for seed in range(200) for s in allocate(2, 4, 0.5, random.Random(seed)))
    assert 700 < drops < 900  # ~Binomial(1600, 0.5)


def test_rollout_tasks_record_groups_and_keep_the_ground_truth():
    task = Task(id="math/train/3", prompt="What is 2 + 3?", ground_truth="5", metadata={"topic": "arithmetic"})
    slots = allocate(2, 2, 0.5, random.Random(1))
    copies = rollout_tasks(task, ["Count on", "Use a number line"], slots)
    assert len({c.id for c in copies}) == 4 and all(c.ground_truth == "5" for c in copies)
    for slot, copy in zip(slots, copies, strict=True):
        meta = copy.metadata["nudge"]
        assert meta["problem_id"] == task.id and meta["context_id"] == slot.context
        assert meta["plain_prompt"] == [{"role": "user", "content": "What is 2 + 3?"}]
        if slot.context is None:
            assert copy.prompt == task.prompt and meta["hint"] is None
        else:
            hint = ["Count on", "Use a number line"][slot.context]
            assert copy.prompt == "What is 2 + 3?" + CONTEXT_BLOCK.format(hint=hint)
    assert task.metadata == {"topic": "arithmetic"}  # the original is untouched


def test_missing_hint_drops_the_slot_and_chat_prompts_get_the_block_in_the_last_user_turn():
    task = Task(id="p", prompt="q", ground_truth="1")
    copies = rollout_tasks(task, ["only one"], allocate(2, 1, 0.0, random.Random(0)))
    assert [c.metadata["nudge"]["context_id"] for c in copies] == [0, None]
    chat = [
        Message(role="user", content="ex"),
        Message(role="assistant", content="a"),
        Message(role="user", content="q"),
    ]
    out = with_context(chat, "h")
    assert out[0].content == "ex" and out[2].content.startswith("q\n\nContext") and chat[2].content == "q"
