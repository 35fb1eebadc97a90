"""SRaR: step-level rubric advantages (arXiv 2605.17291; github akarinmoe/SRaR; docs/algorithms-more.md).

Why: a rubric judged over the whole answer (RaR) gives every token the same credit; SRaR asks the judge *which step*
satisfied each rubric item, so a step that falls into a pitfall is pushed down even inside a correct answer, and a
step that follows a suggestion is pushed up even inside a wrong one.

[CODE] (from the source: `recipe/SRaR/srar_advantage.py`, `reward_manager.py`): answers are written in
"### Step N:" sections ending in \\boxed{}; rubric lines are tagged <SUGGEST>/<PITFALL>/<BONUS>/<ANSWER>; one judge
call per rollout (T = 0) returns, per item, {satisfied, step} (step 0 = the whole answer, -1 = none). Step delta
d_k = sum over satisfied items tied to step k of +0.8/n_SUG, -1.0/n_PIT, +1.0/n_BON (ANSWER items ignored);
r_base = 0.9 acc + 0.1 format. Token advantage = group z-score of r_base (unbiased std) + z_k on step k's tokens
(z_0 on all tokens), z_k = (d_k - mean)/(std + 1e-6) over the prompt's rollouts that hold a d_k entry (a step with no
satisfied item has no entry, not 0; z_k = 0 with fewer than 2 entries or std <= 1e-6). RaR baseline (`mode: rar`):
GRPO on r_base + sum_k d_k.
[INFERRED]: acc = the env verdict's `passed`; format = 1 when the answer has a "### Step 1:" header and a \\boxed{};
the z_k std is the unbiased one, as the r_base one; tokens before the first header belong to no step (z_0 only);
a step index the judge names that the answer does not have shifts no token; the judge prompt wording and the reply
format (a JSON list of {"item", "satisfied", "step"}; items it leaves out count as unsatisfied); only the episode's
last turn is judged and split into steps (SRaR answers in one turn), earlier turns keep the r_base term.
Rubric lines come from the task metadata key `rubric` (a string or a list of lines).

`SrarTrainer` (algorithm name `srar`) replaces the estimator: it needs the tokenizer to map steps onto tokens.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from rlvr_gym.types import Episode

from .advantages import AdvantageInput, AdvantageOutput
from .advantages.base import EPS, advantage_collapse_rate, last_boxed
from .advantages.group import group_normalise
from .judge import Judge, resolve_judge
from .trainer import Trainer

ITEM_WEIGHTS = {"SUGGEST": 0.8, "PITFALL": -1.0, "BONUS": 1.0, "ANSWER": 0.0}  # spread over the items of a kind
ACC_WEIGHT, FORMAT_WEIGHT = 0.9, 0.1
STD_FLOOR = 1e-6
_TAG = re.compile(r"^\s*<(SUGGEST|PITFALL|BONUS|ANSWER)>\s*(.*?)\s*(?:</\1>)?\s*$")
_HEADER = re.compile(r"^###\s*Step\s+(\d+)\s*:", re.M)
JUDGE_PROMPT = (
    "You grade a solution against a rubric. For every rubric item say whether the solution satisfies it and in which "
    "step (the N of its '### Step N:' header; 0 = the answer as a whole, -1 = nowhere).\n\nProblem:\n{question}\n\n"
    "Solution:\n{answer}\n\nRubric:\n{items}\n\n"
    'Reply with a JSON list only: [{{"item": 1, "satisfied": true, "step": 2}}, ...]'
)


@dataclass(frozen=True)
class RubricItem:
    kind: str
    text: str


def parse_rubric(rubric: str | Sequence[str]) -> list[RubricItem]:
    """Tagged rubric lines ("<PITFALL> divides by zero"); untagged lines are skipped."""
    lines = rubric.splitlines() if isinstance(rubric, str) else list(rubric)
    return [RubricItem(m.group(1), m.group(2)) for line in lines if (m := _TAG.match(line))]


def step_spans(text: str) -> list[tuple[int, int, int]]:
    """(step number, start, end) character spans of the "### Step N:" sections; a section runs to the next header."""
    heads = [(int(m.group(1)), m.start()) for m in _HEADER.finditer(text)]
    return [(k, start, heads[j + 1][1] if j + 1 < len(heads) else len(text)) for j, (k, start) in enumerate(heads)]


def step_deltas(items: Sequence[RubricItem], verdicts: Sequence[Mapping[str, Any]]) -> dict[int, float]:
    """d_k from the judge's per-item verdicts (aligned with `items`): only steps with a satisfied item appear."""
    count = {kind: sum(it.kind == kind for it in items) for kind in ITEM_WEIGHTS}
    deltas: dict[int, float] = {}
    for item, verdict in zip(items, verdicts, strict=True):
        step = int(verdict.get("step", -1))
        if not verdict.get("satisfied") or step < 0 or item.kind == "ANSWER":
            continue
        deltas[step] = deltas.get(step, 0.0) + ITEM_WEIGHTS[item.kind] / count[item.kind]
    return deltas


def parse_judge_reply(reply: str, n_items: int) -> list[dict[str, Any]]:
    """Per-item verdicts from the judge's JSON list (1-based `item`); unparsable or missing items are unsatisfied."""
    out: list[dict[str, Any]] = [{"satisfied": False, "step": -1} for _ in range(n_items)]
    start, end = reply.find("["), reply.rfind("]")
    try:
        listed = json.loads(reply[start : end + 1]) if 0 <= start < end else []
    except json.JSONDecodeError:
        listed = []
    for pos, entry in enumerate(listed if isinstance(listed, list) else []):
        if not isinstance(entry, dict):
            continue
        idx = int(entry.get("item", pos + 1)) - 1
        if 0 <= idx < n_items:
            out[idx] = {"satisfied": bool(entry.get("satisfied")), "step": int(entry.get("step", -1))}
    return out


def format_ok(text: str) -> bool:
    return bool(_HEADER.search(text)) and last_boxed(text) is not None


def step_z(deltas: Sequence[Mapping[int, float]]) -> list[dict[int, float]]:
    """z_k per rollout of one group, over the rollouts holding a d_k entry (0 when < 2 entries or no spread)."""
    out: list[dict[int, float]] = [{} for _ in deltas]
    for k in sorted({k for d in deltas for k in d}):
        holders = [i for i, d in enumerate(deltas) if k in d]
        vals = np.array([deltas[i][k] for i in holders])
        std = vals.std(ddof=1) if len(vals) > 1 else 0.0
        for i, v in zip(holders, vals, strict=True):
            out[i][k] = 0.0 if len(vals) < 2 or std <= STD_FLOOR else float((v - vals.mean()) / (std + EPS))
    return out


def token_steps(piece_lengths: Sequence[int], spans: Sequence[tuple[int, int, int]]) -> np.ndarray:
    """Step number of each token (by where the token starts in the text; -1 before the first header)."""
    starts = np.concatenate([[0], np.cumsum(piece_lengths)[:-1]]) if len(piece_lengths) else np.zeros(0)
    out = np.full(len(piece_lengths), -1, dtype=np.int64)
    for k, lo, hi in spans:
        out[(starts >= lo) & (starts < hi)] = k
    return out


def srar_token_advantages(base: float, z: Mapping[int, float], steps: np.ndarray) -> np.ndarray:
    """A_t = base + z_0 + z_{step(t)} (z of a step without an entry is 0)."""
    per_step = np.array([z.get(int(k), 0.0) if k > 0 else 0.0 for k in steps])
    return base + z.get(0, 0.0) + per_step


def srar_advantages(
    inp: AdvantageInput, deltas: Sequence[Mapping[int, float]], steps: Sequence[np.ndarray], mode: str = "srar"
) -> tuple[np.ndarray, list[np.ndarray]]:
    """Episode-level base advantages and token-level SRaR advantages (`inp.rewards` = r_base, `steps[i]` = the step
    of each judged token). `mode: rar` folds sum_k d_k into the reward instead (the whole-answer rubric baseline)."""
    if mode == "rar":
        summed = inp.rewards + np.array([sum(d.values()) for d in deltas])
        base = group_normalise(replace(inp, rewards=summed))
        return base, [np.full(len(s), base[i]) for i, s in enumerate(steps)]
    base = group_normalise(inp)
    zs: list[dict[int, float]] = [{} for _ in deltas]
    for ix in inp.groups():
        for i, z in zip(ix, step_z([deltas[i] for i in ix]), strict=True):
            zs[i] = z
    return base, [srar_token_advantages(base[i], zs[i], s) for i, s in enumerate(steps)]


class SrarSettings(BaseModel):
    """`algorithm: {name: srar, judge: ..., ...}` keys."""

    model_config = ConfigDict(extra="forbid")

    judge: str  # a judge spec (algorithms/judge.py): no default, the rubric judge is a deliberate choice
    judge_temperature: float = Field(0.0, ge=0.0)
    judge_max_new_tokens: int = Field(512, ge=1)
    mode: Literal["srar", "rar"] = "srar"


class SrarTrainer(Trainer):
    """The shared trainer with SRaR's judged, step-level token advantages in place of the estimator's."""

    settings_model = SrarSettings

    @classmethod
    def settings_from(cls, cfg: Any) -> BaseModel | None:
        if cfg.estimator != "grpo" or cfg.estimator_params:
            raise ValueError(
                f"algorithm srar computes its own advantages (GRPO on r_base + step z-scores); estimator "
                f"{cfg.estimator!r} with {dict(cfg.estimator_params)} would be ignored: leave `estimator` unset"
            )
        return super().settings_from(cfg)

    def __init__(self, cfg: Any, **kwargs: Any) -> None:
        super().__init__(cfg, **kwargs)
        s: SrarSettings = self.settings  # type: ignore[assignment]
        self.judge: Judge = resolve_judge(
            s.judge, temperature=s.judge_temperature, max_new_tokens=s.judge_max_new_tokens
        )

    def judge_episode(self, ep: Episode) -> dict[int, float]:
        """d_k of one episode: one judge call on its last reply against its task's rubric."""
        items = parse_rubric(ep.task_metadata.get("rubric", ""))
        if not items or not ep.turns:
            return {}
        question = next((m.content for m in ep.turns[0].observation if m.role == "user"), "")
        lines = "\n".join(f"{j + 1}. <{it.kind}> {it.text}" for j, it in enumerate(items))
        reply = self.judge(JUDGE_PROMPT.format(question=question, answer=ep.turns[-1].action, items=lines))
        return step_deltas(items, parse_judge_reply(reply, len(items)))

    def turn_steps(self, ids: Sequence[int]) -> np.ndarray:
        """Step of each generated token, from the decoded pieces (the text the headers are found in)."""
        pieces = [self.tokenizer.decode([i], skip_special_tokens=True) for i in ids]
        return token_steps([len(p) for p in pieces], step_spans("".join(pieces)))

    def advantages(self, episodes: Sequence[Episode]) -> AdvantageOutput:
        eps = list(episodes)
        if not eps:
            return AdvantageOutput(episode=np.zeros(0))
        inp = AdvantageInput.from_episodes(eps, state=self.estimator_state)
        acc = np.array([float(ep.passed) for ep in eps])
        fmt = np.array([float(bool(ep.turns) and format_ok(ep.turns[-1].action)) for ep in eps])
        base_in = replace(inp, rewards=ACC_WEIGHT * acc + FORMAT_WEIGHT * fmt)
        deltas = [self.judge_episode(ep) for ep in eps]
        steps = [self.turn_steps(ep.turns[-1].token_ids or []) if ep.turns else np.zeros(0, int) for ep in eps]
        mode = self.settings.mode  # type: ignore[union-attr]
        base, last = srar_advantages(base_in, deltas, steps, mode)
        token = [
            [np.full(len(t.token_ids or []), base[i]) for t in ep.turns[:-1]] + ([last[i]] if ep.turns else [])
            for i, ep in enumerate(eps)
        ]
        spread = [float(np.ptp(t)) for t in last if len(t)]
        return AdvantageOutput(
            episode=base,
            token=token,
            metrics={
                "srar_r_base": float(base_in.rewards.mean()),
                "srar_steps_judged": float(np.mean([len(d) for d in deltas])),
                "srar_token_spread": float(np.mean(spread)) if spread else 0.0,
                "acr": advantage_collapse_rate(base_in),
                "reward_mean": float(inp.rewards.mean()),
                "adv_abs_mean": float(np.abs(base).mean()),
            },
        )
