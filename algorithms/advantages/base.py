"""Advantage-estimator data model and registry.

An estimator is a pure function `fn(inp: AdvantageInput, **params) -> AdvantageOutput` known by name (an entry point
of the `rlvr_gym.estimators` group, see below). Inputs are episode groups (the G rollouts of one task share a `group_id`); outputs
carry advantages at the finest shape the estimator produces: per episode, per turn, or per token. The trainer asks
for a per-token array with `AdvantageOutput.token_advantages`, which broadcasts coarser shapes down, so episode-level
estimators (GRPO) and turn/token-level ones (ReBel, GiGPO, CEPO-like shaping) plug into the same loss.

Cross-step state (e.g. AVSPO's running ACR) lives in `AdvantageInput.state`, a dict the trainer owns, keeps across
steps and stores in checkpoints, so estimators stay free of hidden globals and resume exactly.

Adding an estimator is one file plus one line: write the function

    from rlvr_gym.algorithms.advantages.base import AdvantageInput, AdvantageOutput

    def my_method(inp: AdvantageInput, *, scale: float = 1.0) -> AdvantageOutput:
        return AdvantageOutput(episode=scale * (inp.rewards - inp.group_means()))

and name it in the `rlvr_gym.estimators` entry-point group of your package's `pyproject.toml`
(`my_method = "my_pkg.my_method:my_method"`). `get_estimator` imports only the estimator asked for.
`@register_estimator("name")` registers a function at run time (tests, notebooks).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from rlvr_gym.types import Episode

EPS = 1e-6
COLLAPSE_VAR = 1e-6  # a group whose reward variance is below this gives (near-)zero group-relative advantages


@dataclass
class AdvantageInput:
    """Rollout data an estimator sees.

    `episodes[i]` belongs to group `group_ids[i]`; `rewards[i]` is its scalar learning reward. Optional per-episode
    side information: `seq_logprobs` (length-normalised behaviour log-prob, LamPO), `answers` (extracted final
    answer, EDAS), `task_keys` (task type, TMN and per-task normalisation), `correct` (verifier pass flag).
    """

    episodes: list[Episode]
    group_ids: list[str]
    rewards: np.ndarray
    seq_logprobs: np.ndarray | None = None
    answers: list[str | None] | None = None
    task_keys: list[str] | None = None
    correct: np.ndarray | None = None
    state: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.rewards = np.asarray(self.rewards, dtype=np.float64)
        if len(self.group_ids) != len(self.rewards) or len(self.episodes) not in (0, len(self.rewards)):
            raise ValueError("episodes, group_ids and rewards must have the same length")
        if not np.all(np.isfinite(self.rewards)):
            raise ValueError("rewards must be finite")
        if self.correct is None:
            self.correct = np.array([ep.passed for ep in self.episodes] if self.episodes else self.rewards > 0.5)
        if self.seq_logprobs is None and self.episodes:
            self.seq_logprobs = np.array([mean_token_logprob(ep) for ep in self.episodes])

    @classmethod
    def from_episodes(cls, episodes: Sequence[Episode], **kwargs: Any) -> AdvantageInput:
        """Build from runner episodes: reward = `Episode.reward`, group = `Episode.group_id`.

        Infrastructure-error episodes have no reward and must be dropped by the caller (they are not zeros).
        """
        eps = list(episodes)
        errored = [ep.episode_id for ep in eps if ep.error is not None]
        if errored:
            raise ValueError(f"{len(errored)} episode(s) ended in an infrastructure error, e.g. {errored[0]}")
        if "answers" not in kwargs:
            kwargs["answers"] = [extract_answer(ep) for ep in eps]
        if "task_keys" not in kwargs:
            kwargs["task_keys"] = [ep.env_id + ":" + str(ep.task_metadata.get("task_type", "")) for ep in eps]
        return cls(
            episodes=eps, group_ids=[ep.group_id for ep in eps], rewards=np.array([ep.reward for ep in eps]), **kwargs
        )

    @classmethod
    def from_rewards(cls, groups: Sequence[Sequence[float]], **kwargs: Any) -> AdvantageInput:
        """Episode-free input for tests and offline use: one inner list of rewards per group."""
        gids = [f"g{g}" for g, rs in enumerate(groups) for _ in rs]
        rewards = np.array([r for rs in groups for r in rs], dtype=np.float64)
        return cls(episodes=[], group_ids=gids, rewards=rewards, **kwargs)

    def __len__(self) -> int:
        return len(self.rewards)

    def groups(self) -> list[np.ndarray]:
        """Index arrays of each group, in first-appearance order."""
        order: dict[str, list[int]] = {}
        for i, gid in enumerate(self.group_ids):
            order.setdefault(gid, []).append(i)
        return [np.array(ix, dtype=np.int64) for ix in order.values()]

    def group_means(self) -> np.ndarray:
        """Per-episode mean reward of its own group."""
        out = np.zeros(len(self))
        for ix in self.groups():
            out[ix] = self.rewards[ix].mean()
        return out


@dataclass
class AdvantageOutput:
    """Advantages at one or more shapes, plus which episodes enter the loss and metrics to log.

    - `episode`: shape (N,), always present (turn/token estimators put a summary here, e.g. the episode term).
    - `turn`: optional list of N arrays, one value per turn of that episode.
    - `token`: optional list of N lists (per turn) of arrays, one value per generated token.
    - `keep`: bool (N,), False = dropped from the loss (DAPO dynamic sampling).
    - `loss_overrides`: loss settings the method prescribes (Mu-GRPO's veto and relaxed clip).
    """

    episode: np.ndarray
    turn: list[np.ndarray] | None = None
    token: list[list[np.ndarray]] | None = None
    keep: np.ndarray | None = None
    metrics: dict[str, float] = field(default_factory=dict)
    loss_overrides: dict[str, float] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.episode = np.nan_to_num(np.asarray(self.episode, dtype=np.float64), nan=0.0, posinf=0.0, neginf=0.0)
        if self.keep is None:
            self.keep = np.ones(len(self.episode), dtype=bool)

    def token_advantages(self, i: int, turn: int, n_tokens: int) -> np.ndarray:
        """Per-token advantages of episode i, turn `turn`: the finest shape available, broadcast to n_tokens."""
        if self.token is not None:
            arr = np.asarray(self.token[i][turn], dtype=np.float64)
            if arr.shape != (n_tokens,):
                raise ValueError(f"token advantages of episode {i} turn {turn}: {arr.shape} vs {n_tokens} tokens")
            return arr
        if self.turn is not None:
            return np.full(n_tokens, float(self.turn[i][turn]))
        return np.full(n_tokens, float(self.episode[i]))


Estimator = Callable[..., AdvantageOutput]
_REGISTRY: dict[str, Estimator] = {}  # estimators registered at run time (tests, notebooks) and loaded plug-ins


def register_estimator(name: str) -> Callable[[Estimator], Estimator]:
    """Decorator registering `fn(inp: AdvantageInput, **params) -> AdvantageOutput` under `name` at run time.

    Packaged estimators are found through the `rlvr_gym.estimators` entry-point group instead (one line in
    `pyproject.toml`); a run-time name may not shadow a packaged one.
    """

    def deco(fn: Estimator) -> Estimator:
        known = _REGISTRY.get(name)
        plugin = _plugins().get(name)
        if known is None and plugin is not None and (plugin.module, plugin.attr) != (fn.__module__, fn.__name__):
            known = _load_plugin(name)  # (a plug-in module decorating its own entry point is not a clash)
        if known is not None and known is not fn:
            raise ValueError(f"advantage estimator {name!r} is already registered")
        _REGISTRY[name] = fn
        return fn

    return deco


def _plugins() -> dict[str, Any]:
    from rlvr_gym.plugins import ESTIMATORS, entry_points

    return entry_points(ESTIMATORS)


def _plugin_names() -> set[str]:
    return set(_plugins())


def _load_plugin(name: str) -> Estimator:
    from rlvr_gym.plugins import ESTIMATORS, load

    fn = load(ESTIMATORS, name)
    _REGISTRY[name] = fn
    return fn


def get_estimator(name: str) -> Estimator:
    """The estimator registered under `name`: run-time registrations first, then the entry-point plug-ins."""
    if name in _REGISTRY:
        return _REGISTRY[name]
    if name in _plugin_names():
        return _load_plugin(name)
    raise KeyError(f"unknown advantage estimator {name!r}; known: {', '.join(list_estimators())}")


def list_estimators() -> list[str]:
    """Names of every estimator (plug-ins are listed without being imported)."""
    return sorted(set(_REGISTRY) | _plugin_names())


def compute_advantages(name: str, inp: AdvantageInput, **params: Any) -> AdvantageOutput:
    """Run estimator `name` and add the metrics every run logs (ACR, reward stats, kept fraction)."""
    out = get_estimator(name)(inp, **params)
    if len(out.episode) != len(inp):
        raise ValueError(f"estimator {name!r} returned {len(out.episode)} advantages for {len(inp)} episodes")
    out.metrics.setdefault("acr", advantage_collapse_rate(inp))
    out.metrics.setdefault("reward_mean", float(inp.rewards.mean()) if len(inp) else 0.0)
    out.metrics.setdefault("reward_std", float(inp.rewards.std()) if len(inp) else 0.0)
    out.metrics.setdefault("adv_abs_mean", float(np.abs(out.episode).mean()) if len(inp) else 0.0)
    out.metrics.setdefault("kept_fraction", float(out.keep.mean()) if len(inp) else 0.0)
    return out


# ---- shared helpers --------------------------------------------------------------------------------------------
def advantage_collapse_rate(inp: AdvantageInput, threshold: float = COLLAPSE_VAR) -> float:
    """Fraction of groups whose reward variance is below `threshold` (AVSPO's ACR; all-equal groups)."""
    groups = inp.groups()
    if not groups:
        return 0.0
    return float(np.mean([inp.rewards[ix].var() < threshold for ix in groups]))


def mean_token_logprob(ep: Episode) -> float:
    """Length-normalised behaviour log-prob of all generated tokens (0.0 when none were recorded)."""
    lps = [lp for t in ep.turns for lp in (t.logprobs or [])]
    return float(np.mean(lps)) if lps else 0.0


def extract_answer(ep: Episode) -> str | None:
    """The episode's final answer for error-diversity grouping: env-reported if present, else last \\boxed{}."""
    for turn in reversed(ep.turns):
        for key in ("answer", "parsed_answer", "extracted_answer"):
            val = turn.info.get(key)
            if val is not None:
                return str(val).strip()
    if ep.turns:
        return last_boxed(ep.turns[-1].action)
    return None


def last_boxed(text: str) -> str | None:
    """Content of the last `\\boxed{...}` in text, with nested braces handled; None if absent."""
    start = text.rfind("\\boxed{")
    if start < 0:
        return None
    i, depth = start + len("\\boxed{"), 1
    for j in range(i, len(text)):
        if text[j] == "{":
            depth += 1
        elif text[j] == "}":
            depth -= 1
            if depth == 0:
                return text[i:j].strip()
    return None
