"""GRID: rule rewards for security-knowledge-graph extraction from CTI articles (arXiv 2605.16714;
docs/algorithms-more.md).

Why: an extractor trained by RL needs a reward it cannot argue with; GRID scores the text inside
<myresult>...</myresult> against regexes and option sets built offline from article <-> graph alignments, so every
task of its bank is checked by rules, not a judge.

[CODE] (read from the source: `train-data/code/reward/kg_reward.py`): payload = the <myresult> text, NFKC-normalised,
whitespace collapsed; multi-select (4 options) read from the last "#### [..]" JSON list: exact set 1, overlap 0.5,
else 0; single choice <mychoice>X</mychoice>: 1/0; triples: share of gold triples whose subject, relation and object
regexes all match the payload; entities alike; +0.1 when the prompt asks for <mythink>/<myresult> and both appear;
clipped to [0, 1].
[INFERRED]: "overlap" = a non-empty intersection that is not the exact set; regexes match case-insensitively with
`re.search`; without a <myresult> block the whole reply is the payload (the last block when there are several);
option letters compare after stripping and upper-casing. Gold comes from the task's metadata key `grid` (no env of
rlvr-gym ships GRID's task bank): `{"kind": "multi_select" | "single_choice" | "triples" | "entities",
"answer": ..., "triples": [{"sub": re, "rel": re, "obj": re}], "entities": [re], "tagged": bool}`.

The estimator replaces the env's reward with this one and applies GRPO to it.
"""

from __future__ import annotations

import json
import re
import unicodedata
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

import numpy as np

from .base import AdvantageInput, AdvantageOutput
from .group import group_normalise

FORMAT_BONUS = 0.1
OVERLAP_CREDIT = 0.5
_RESULT = re.compile(r"<myresult>(.*?)</myresult>", re.S)
_CHOICE = re.compile(r"<mychoice>\s*(.*?)\s*</mychoice>", re.S)
_OPTION_LIST = re.compile(r"####\s*(\[[^\]]*\])")


def normalise(text: str) -> str:
    return " ".join(unicodedata.normalize("NFKC", text).split())


def payload(reply: str) -> str:
    """The scored text: the last <myresult> block (the whole reply if there is none), normalised."""
    blocks = _RESULT.findall(reply)
    return normalise(blocks[-1] if blocks else reply)


def _options(values: Sequence[Any]) -> set[str]:
    return {str(v).strip().upper() for v in values}


def multi_select_score(text: str, gold: Sequence[str]) -> float:
    """1 for the exact option set, 0.5 for a partial overlap, 0 otherwise (or when no list parses)."""
    found = _OPTION_LIST.findall(text)
    if not found:
        return 0.0
    try:
        picked = json.loads(found[-1])
    except json.JSONDecodeError:
        return 0.0
    if not isinstance(picked, list):
        return 0.0
    chosen, want = _options(picked), _options(gold)
    if chosen == want:
        return 1.0
    return OVERLAP_CREDIT if chosen & want else 0.0


def single_choice_score(text: str, gold: str) -> float:
    found = _CHOICE.findall(text)
    return float(bool(found) and found[-1].strip().upper() == str(gold).strip().upper())


def _hits(pattern: str, text: str) -> bool:
    return re.search(pattern, text, flags=re.IGNORECASE) is not None


def triple_score(text: str, triples: Sequence[Mapping[str, str]]) -> float:
    """Share of gold triples whose subject, relation and object regexes all match."""
    if not triples:
        return 0.0
    return sum(all(_hits(t[k], text) for k in ("sub", "rel", "obj")) for t in triples) / len(triples)


def entity_score(text: str, entities: Sequence[str]) -> float:
    return sum(_hits(p, text) for p in entities) / len(entities) if entities else 0.0


def grid_reward(reply: str, gold: Mapping[str, Any]) -> float:
    """GRID's rule reward of one reply for one task's gold spec, in [0, 1]."""
    text = payload(reply)
    kind = gold["kind"]
    if kind == "multi_select":
        score = multi_select_score(text, gold["answer"])
    elif kind == "single_choice":
        score = single_choice_score(text, gold["answer"])
    elif kind == "triples":
        score = triple_score(text, gold["triples"])
    elif kind == "entities":
        score = entity_score(text, gold["entities"])
    else:
        raise ValueError(f"grid: unknown task kind {kind!r}")
    if gold.get("tagged") and "<mythink>" in reply and "<myresult>" in reply:
        score += FORMAT_BONUS
    return float(min(max(score, 0.0), 1.0))


def grid(inp: AdvantageInput, *, scale_std: bool = True) -> AdvantageOutput:
    """GRPO on GRID's rule reward of each episode's last reply (task metadata `grid` holds the gold)."""
    if not inp.episodes:
        raise ValueError("grid scores each episode's reply against its task metadata: it needs episodes")
    missing = [ep.task_id for ep in inp.episodes if "grid" not in ep.task_metadata]
    if missing:
        raise ValueError(f"grid: task {missing[0]!r} has no `grid` gold in its metadata")
    rewards = np.array(
        [grid_reward(ep.turns[-1].action if ep.turns else "", ep.task_metadata["grid"]) for ep in inp.episodes]
    )
    adv = group_normalise(replace(inp, rewards=rewards), scale_std=scale_std)
    return AdvantageOutput(
        episode=adv,
        metrics={
            "grid_reward": float(rewards.mean()),
            "grid_env_reward_gap": float(np.abs(rewards - inp.rewards).mean()),
        },
    )
