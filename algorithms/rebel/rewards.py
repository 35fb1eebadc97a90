"""ReBel's dense belief-consistency reward (docs/alfworld.md), as pure functions of a belief and env evidence.

The env side supplies a ground-truth snapshot per step (built from observations only, after the step, so o_{t+1}
is included): `{"objects": {obj: location | "in_hand"}, "inventory": [obj], "states": {obj: state},
"visited": [receptacle], "receptacles": [receptacle]}` plus the admissible commands and the next observation.

    r_intr = α·r_state + β·r_task + γ·r_pred + δ·r_format      (α, β, γ, δ = 0.40, 0.30, 0.20, 0.10)

Beliefs about things the tracker has not observed are never penalised (observability masking): only contradictions
of observed facts and observed facts missing from the belief cost score.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from rlvr_gym.envs.alfworld.belief import Belief, gt_phase  # noqa: F401  (re-exported: the phase rule is the env's)

# Verbs/words that appear in almost every ALFWorld observation: matching them says nothing about a prediction.
NOISE_WORDS = frozenset(
    {
        "closed",
        "open",
        "opened",
        "pick",
        "picked",
        "put",
        "heat",
        "heated",
        "cool",
        "cooled",
        "clean",
        "cleaned",
        "take",
        "move",
        "moved",
        "arrive",
        "nothing",
        "look",
        "looking",
        "around",
        "expect",
        "would",
        "should",
        "will",
        "then",
        "there",
        "here",
        "that",
        "this",
        "with",
        "from",
        "into",
        "onto",
        "your",
        "turn",
    }
)
STOPWORDS = frozenset(
    {
        "about",
        "above",
        "after",
        "again",
        "also",
        "been",
        "being",
        "before",
        "below",
        "between",
        "both",
        "could",
        "does",
        "doing",
        "down",
        "each",
        "have",
        "having",
        "just",
        "more",
        "most",
        "once",
        "only",
        "other",
        "over",
        "same",
        "some",
        "such",
        "than",
        "their",
        "them",
        "these",
        "they",
        "those",
        "through",
        "under",
        "until",
        "very",
        "were",
        "what",
        "when",
        "where",
        "which",
        "while",
        "whom",
        "why",
        "able",
        "i'll",
        "it's",
        "next",
        "observation",
        "execute",
        "action",
        "expect",
    }
)
_TOKEN_RE = re.compile(r"[a-z][a-z'\-]*")
_ARTICLE_RE = re.compile(r"\b(a|an|the)\b")


@dataclass(frozen=True)
class RewardWeights:
    """Mixing weights of the intrinsic reward; defaults are the paper scripts' (class defaults were 0.3/0.4/0.3/0.1)."""

    state: float = 0.40
    task: float = 0.30
    prediction: float = 0.20
    format: float = 0.10


@dataclass(frozen=True)
class FormatRewards:
    valid: float = 0.01
    invalid: float = -0.05
    inadmissible: float = -0.02


@dataclass
class StepReward:
    """One step's intrinsic reward and its components (all logged)."""

    total: float
    state: float
    task: float
    prediction: float
    format: float


def norm_name(text: str) -> str:
    """Lower-case, drop articles and punctuation, squeeze spaces; instance numbers are kept ("apple 1" != "apple 2")."""
    text = _ARTICLE_RE.sub(" ", str(text).lower())
    text = re.sub(r"[^a-z0-9_ ]+", " ", text)
    return " ".join(text.split())


# ---- r_format ---------------------------------------------------------------------------------------------------
def format_reward(format_ok: bool, admissible: bool, rewards: FormatRewards = FormatRewards()) -> float:
    """+0.01 accepted, −0.05 rejected, and −0.02 more when well-formed but the action is not admissible."""
    if not format_ok:
        return rewards.invalid
    return rewards.valid + (0.0 if admissible else rewards.inadmissible)


# ---- r_task -----------------------------------------------------------------------------------------------------
def task_reward(belief: Belief, phase: str) -> float:
    return 1.0 if belief.phase == phase else 0.0


# ---- r_pred -----------------------------------------------------------------------------------------------------
def prediction_features(prediction: str) -> list[str]:
    """Content unigrams (minus noise words) and consecutive bigrams of the clause after "I expect"."""
    text = prediction.lower()
    if "i expect" in text:
        text = text.split("i expect", 1)[1]
    tokens = [t for t in _TOKEN_RE.findall(text) if len(t) > 3 and t not in STOPWORDS]
    unigrams = [t for t in tokens if t not in NOISE_WORDS]
    bigrams = [f"{a} {b}" for a, b in zip(tokens, tokens[1:], strict=False)]
    return unigrams + bigrams


def prediction_reward(prediction: str, next_observation: str | None) -> float:
    """Fraction of prediction features found verbatim in the next observation; 0 without one."""
    if not next_observation:
        return 0.0
    features = prediction_features(prediction)
    if not features:
        return 0.0
    obs = next_observation.lower()
    return sum(f in obs for f in features) / len(features)


# ---- r_state ----------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class StateWeights:
    objects: float = 0.35
    states: float = 0.25
    visited: float = 0.25
    unvisited: float = 0.15
    unknown_gt: float = 0.7  # GT knows nothing about this component yet
    early_steps: int = 2  # [INFERRED] steps 0..1 score an uninformed component leniently
    early_value: float = 0.5


def _locations_agree(belief_loc: str, gt_loc: str) -> bool:
    b, g = norm_name(belief_loc), norm_name(gt_loc)
    return bool(b) and bool(g) and (b == g or b in g or g in b)


def _conflict_score(belief: Mapping[str, str], gt: Mapping[str, str], agree: Any, empty_gt: float) -> float:
    """max(0, 1 − (contradictions + missing)/|GT|) over GT-known keys; beliefs about unobserved keys are free."""
    if not gt:
        return empty_gt
    if not belief:
        return 0.0
    bel = {norm_name(k): v for k, v in belief.items()}
    bad = 0
    for key, value in gt.items():
        claim = bel.get(norm_name(key))
        if claim is None or not agree(claim, value):
            bad += 1
    return max(0.0, 1.0 - bad / len(gt))


def objects_score(belief: Belief, gt: Mapping[str, Any], empty_gt: float) -> float:
    """Location conflicts (fuzzy) with "in_hand" checked against the inventory, plus GT facts missing from belief."""
    inventory = {norm_name(o) for o in gt.get("inventory", [])}
    gt_objects = {
        norm_name(o): ("in_hand" if norm_name(o) in inventory else loc) for o, loc in gt.get("objects", {}).items()
    }
    for obj in inventory:
        gt_objects[obj] = "in_hand"

    def agree(claim: str, truth: str) -> bool:
        if "in_hand" in claim or truth == "in_hand":
            return "in_hand" in claim and truth == "in_hand"
        return _locations_agree(claim, truth)

    return _conflict_score(belief.objects, gt_objects, agree, empty_gt)


def states_score(belief: Belief, gt: Mapping[str, Any], empty_gt: float) -> float:
    return _conflict_score(belief.states, gt.get("states", {}), lambda c, t: c.strip() == str(t).strip(), empty_gt)


def visited_score(belief: Belief, gt: Mapping[str, Any], empty_gt: float) -> float:
    """F1(belief visited, GT visited) − 0.1·false positives, clipped to [0, 1]."""
    truth = {norm_name(r) for r in gt.get("visited", [])}
    claim = {norm_name(r) for r in belief.visited}
    if not truth:
        return empty_gt if not claim else 0.0
    tp = len(claim & truth)
    f1 = 2 * tp / (len(claim) + len(truth)) if claim else 0.0
    return min(1.0, max(0.0, f1 - 0.1 * len(claim - truth)))


def unvisited_score(belief: Belief, gt: Mapping[str, Any]) -> float:
    """1 − share of claimed-unvisited receptacles that the GT has in fact visited."""
    claim = {norm_name(r) for r in belief.unvisited}
    if not claim:
        return 1.0
    truth = {norm_name(r) for r in gt.get("visited", [])}
    return 1.0 - len(claim & truth) / len(claim)


def state_reward(belief: Belief, gt: Mapping[str, Any], step: int, weights: StateWeights = StateWeights()) -> float:
    """r_state = 0.35·objects + 0.25·states + 0.25·visited + 0.15·unvisited."""
    empty = weights.early_value if step < weights.early_steps else weights.unknown_gt
    return (
        weights.objects * objects_score(belief, gt, empty)
        + weights.states * states_score(belief, gt, empty)
        + weights.visited * visited_score(belief, gt, empty)
        + weights.unvisited * unvisited_score(belief, gt)
    )


# ---- combination ------------------------------------------------------------------------------------------------
def intrinsic_reward(
    belief: Belief | None,
    *,
    format_ok: bool,
    admissible: bool,
    gt: Mapping[str, Any],
    phase: str,
    next_observation: str | None,
    step: int,
    weights: RewardWeights = RewardWeights(),
    state_weights: StateWeights = StateWeights(),
    format_rewards: FormatRewards = FormatRewards(),
) -> StepReward:
    """One step's r_intr. `belief` is the cumulative belief after this step's merge; None = this output unparseable."""
    r_format = format_reward(format_ok, admissible, format_rewards)
    if belief is None:
        return StepReward(total=weights.format * r_format, state=0.0, task=0.0, prediction=0.0, format=r_format)
    r_state = state_reward(belief, gt, step, state_weights)
    r_task = task_reward(belief, phase)
    r_pred = prediction_reward(belief.prediction, next_observation)
    total = weights.state * r_state + weights.task * r_task + weights.prediction * r_pred + weights.format * r_format
    return StepReward(total=total, state=r_state, task=r_task, prediction=r_pred, format=r_format)
