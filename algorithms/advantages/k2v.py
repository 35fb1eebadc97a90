"""K2V: knowledge-to-verification reward for fill-in-the-blank questions built from a knowledge graph (arXiv
2605.18261; github SeedScientist/K2V; docs/algorithms-more.md).

Why: an exact-match answer says nothing about whether the reasoning that led to it was sound; K2V adds, for correct
answers only, the share of a per-question checklist (written offline by a large model from general reasoning
criteria) that a judge LLM finds satisfied by the <think> text, plus a small format term.

[CODE] (read from the source: `custom_reward_fn/K2V.py`): reward = 6 * 1[<answer> text == answer]
+ 1[correct] * (share of checklist items the judge answers "yes" for, judge at T = 0.7, 8 new tokens)
+ format, where format = 0.25 + 0.125 per tag of <think>, </think>, <answer>, </answer> present exactly once
- 0.001 per character after </answer> when the reply matches ^<think>.*?</think>\\s*<answer>.*?</answer>, else 0.
[INFERRED]: "correct" is the same exact match (stripped); the answer is the first <answer> block; "after </answer>"
counts from the end of that matched pattern; the judge prompt wording; a reply without a <think> block gets no
checklist credit. Gold comes from the task metadata key `k2v`: `{"answer": str, "checklist": [str, ...]}`; the
question is the episode's first user message. The estimator replaces the env reward with this one, then GRPO.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import replace
from functools import lru_cache

import numpy as np

from rlvr_gym.algorithms.judge import Judge, resolve_judge, says_yes
from rlvr_gym.types import Episode

from .base import AdvantageInput, AdvantageOutput
from .group import group_normalise

EXACT_WEIGHT = 6.0
TAGS = ("<think>", "</think>", "<answer>", "</answer>")
_SHAPE = re.compile(r"^<think>(.*?)</think>\s*<answer>(.*?)</answer>", re.S)
_ANSWER = re.compile(r"<answer>(.*?)</answer>", re.S)
_THINK = re.compile(r"<think>(.*?)</think>", re.S)
CHECK_PROMPT = (
    "Question:\n{question}\n\nReasoning:\n{think}\n\nCriterion: {item}\n"
    "Does the reasoning satisfy the criterion? Reply with yes or no."
)


def format_score(reply: str) -> float:
    """0.25 + 0.125 per tag seen exactly once - 0.001 per trailing character, for a reply of the required shape."""
    m = _SHAPE.match(reply)
    if m is None:
        return 0.0
    return 0.25 + 0.125 * sum(reply.count(tag) == 1 for tag in TAGS) - 0.001 * len(reply[m.end() :])


def answer_text(reply: str) -> str | None:
    m = _ANSWER.search(reply)
    return None if m is None else m.group(1).strip()


def checklist_share(question: str, think: str, checklist: Sequence[str], judge: Judge) -> float:
    """Share of checklist items the judge says the reasoning satisfies (one judge call per item)."""
    if not checklist:
        return 0.0
    prompts = [CHECK_PROMPT.format(question=question, think=think, item=item) for item in checklist]
    return sum(says_yes(judge(p)) for p in prompts) / len(checklist)


def k2v_reward(reply: str, answer: str, checklist: Sequence[str], question: str, judge: Judge) -> dict[str, float]:
    """The reward of one reply and its parts (`exact`, `checklist`, `format`)."""
    exact = float(answer_text(reply) == answer.strip())
    think = _THINK.search(reply)
    share = checklist_share(question, think.group(1).strip(), checklist, judge) if exact and think else 0.0
    fmt = format_score(reply)
    return {"reward": EXACT_WEIGHT * exact + exact * share + fmt, "exact": exact, "checklist": share, "format": fmt}


@lru_cache(maxsize=4)
def _cached_judge(spec: str, temperature: float, max_new_tokens: int) -> Judge:
    return resolve_judge(spec, temperature=temperature, max_new_tokens=max_new_tokens)


def _question(ep: Episode) -> str:
    first = ep.turns[0].observation if ep.turns else []
    users = [m.content for m in first if m.role == "user" and isinstance(m.content, str)]
    return users[-1] if users else ""


def k2v(
    inp: AdvantageInput,
    *,
    judge: str | Callable[[str], str] = "smollm2",
    judge_temperature: float = 0.7,
    judge_max_new_tokens: int = 8,
    scale_std: bool = True,
) -> AdvantageOutput:
    """GRPO on K2V's reward of each episode's last reply (task metadata `k2v` holds answer and checklist)."""
    if not inp.episodes:
        raise ValueError("k2v scores each episode's reply against its task metadata: it needs episodes")
    missing = [ep.task_id for ep in inp.episodes if "k2v" not in ep.task_metadata]
    if missing:
        raise ValueError(f"k2v: task {missing[0]!r} has no `k2v` gold (answer, checklist) in its metadata")
    ask = judge if callable(judge) else _cached_judge(judge, judge_temperature, judge_max_new_tokens)
    parts = [
        k2v_reward(
            ep.turns[-1].action if ep.turns else "",
            str(ep.task_metadata["k2v"]["answer"]),
            list(ep.task_metadata["k2v"].get("checklist", [])),
            _question(ep),
            ask,
        )
        for ep in inp.episodes
    ]
    rewards = np.array([p["reward"] for p in parts])
    adv = group_normalise(replace(inp, rewards=rewards), scale_std=scale_std)
    metrics = {f"k2v_{k}": float(np.mean([p[k] for p in parts])) for k in ("exact", "checklist", "format")}
    return AdvantageOutput(episode=adv, metrics=metrics)
