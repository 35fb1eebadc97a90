"""Reference policies for the shop, measured side by side (`baseline_summary`, benchmarks/webshop_baselines.py).

- oracle: the task's reference plan (search the goal product's title, open it, pick the goal options, buy).
- random: searches a few words of the instruction, then clicks uniformly among the page's clickables (Buy Now
  included) until the episode ends; what the shop gives away by chance.
- rule: WebShop's rule baseline (paper, Table 2: score 45.6, success 9.6%): search the instruction text, buy the
  first result without choosing options.
- keyword: the rule baseline plus one step of reading: on the first result, click every option value the
  instruction names. The heuristic most keyword agents reduce to.
Each episode reports the env's reward and WebShop's own score of the purchase (the `webshop_reward` component).
"""

from __future__ import annotations

import random
import re
import statistics
from collections.abc import Callable

from rlvr_gym import StepResult

from .env import WebShopEnv

Episode = tuple[float, float]  # (env reward, WebShop's score of the purchase; 0 without one)


def _finish(result: StepResult) -> Episode:
    verdict = result.verdict
    if verdict is None:
        return 0.0, 0.0
    return verdict.reward, float(verdict.components.get("webshop_reward", 0.0))


def _run(env: WebShopEnv, actions: list[str]) -> Episode:
    result = None
    for action in actions:
        result = env.step_result(action)
        if result.verdict is not None:
            return _finish(result)
    return 0.0, 0.0 if result is None else _finish(env.step_result("click[Buy Now]"))[1]


def random_episode(env: WebShopEnv, index: int, rng: random.Random) -> Episode:
    env.reset(options={"task_index": index})
    assert env.session is not None and env.task is not None
    words = env.task.metadata["instruction"].split()
    while True:
        page = env.session.page()
        if page.has_search_bar:
            action = "search[" + " ".join(rng.sample(words, min(4, len(words)))) + "]"
        else:
            action = f"click[{rng.choice(list(page.clickables()))}]"
        result = env.step_result(action)
        if result.verdict is not None:
            return _finish(result)


def oracle_episode(env: WebShopEnv, index: int) -> Episode:
    env.reset(options={"task_index": index})
    assert env.task is not None
    return _run(env, list(env.task.reference_actions or []))


def _first_result(env: WebShopEnv, index: int) -> tuple[str, str] | None:
    """Reset, search the instruction, open the first result: (instruction, its ASIN), or None on no results."""
    env.reset(options={"task_index": index})
    assert env.session is not None and env.task is not None
    instruction = env.task.metadata["instruction"]
    env.step_result(f"search[{instruction}]")
    if not env.session.results:
        return None
    asin = env.session.results[0]
    env.step_result(f"click[{asin}]")
    return instruction, asin


def rule_episode(env: WebShopEnv, index: int) -> Episode:
    if _first_result(env, index) is None:
        return 0.0, 0.0
    return _finish(env.step_result("click[Buy Now]"))


def named_options(instruction: str, options: dict[str, list[str]]) -> list[str]:
    """Option values the instruction names as whole words (per group, the longest such value)."""
    text = instruction.lower()
    chosen = []
    for values in options.values():
        hits = [v for v in values if re.search(rf"(?<![\w-]){re.escape(v)}(?![\w-])", text)]
        if hits:
            chosen.append(max(hits, key=len))
    return chosen


def keyword_episode(env: WebShopEnv, index: int) -> Episode:
    found = _first_result(env, index)
    if found is None:
        return 0.0, 0.0
    assert env.session is not None
    product = env.session.catalog.by_asin[found[1]]
    actions = [f"click[{v}]" for v in named_options(found[0], product.options)]
    return _run(env, [*actions, "click[Buy Now]"])


def mean_ci(values: list[float]) -> tuple[float, float, float]:
    """Mean and its normal-approximation 95% interval."""
    mean = statistics.fmean(values)
    half = 1.96 * statistics.stdev(values) / len(values) ** 0.5 if len(values) > 1 else 0.0
    return mean, mean - half, mean + half


def run_policies(env: WebShopEnv, n: int, seed: int = 0) -> dict[str, list[Episode]]:
    """Every reference policy's episodes on tasks 0..n-1 (the random policy seeded by `seed`)."""
    rng = random.Random(seed)
    policies: dict[str, Callable[[int], Episode]] = {
        "oracle": lambda i: oracle_episode(env, i),
        "random": lambda i: random_episode(env, i, rng),
        "rule": lambda i: rule_episode(env, i),
        "keyword": lambda i: keyword_episode(env, i),
    }
    return {name: [policy(i) for i in range(n)] for name, policy in policies.items()}


def baseline_summary(env: WebShopEnv, n: int, seed: int = 0) -> dict[str, float]:
    """Success rate, mean env reward and mean WebShop score of each policy over tasks 0..n-1."""
    out: dict[str, float] = {"tasks": n}
    for name, episodes in run_policies(env, n, seed).items():
        out[f"{name}_success"] = sum(r >= 1.0 - 1e-9 for r, _ in episodes) / n
        out[f"{name}_mean_reward"] = statistics.fmean(r for r, _ in episodes)
        out[f"{name}_webshop_score"] = statistics.fmean(s for _, s in episodes)
    return out
