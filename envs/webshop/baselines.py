"""Reference policies for the shop: the scripted oracle (the task's reference plan) and a random clicker.

The random baseline searches a few words of the instruction, then clicks uniformly among the page's clickables
(Buy Now included) until the episode ends; it measures how much reward the shop gives away by chance.
"""

from __future__ import annotations

import random
import statistics

from .env import WebShopEnv


def random_episode(env: WebShopEnv, index: int, rng: random.Random) -> float:
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
            return result.verdict.reward


def oracle_episode(env: WebShopEnv, index: int) -> float:
    env.reset(options={"task_index": index})
    assert env.task is not None
    for action in env.task.reference_actions or []:
        result = env.step_result(action)
        if result.verdict is not None:
            return result.verdict.reward
    return 0.0


def baseline_summary(env: WebShopEnv, n: int, seed: int = 0) -> dict[str, float]:
    rng = random.Random(seed)
    oracle = [oracle_episode(env, i) for i in range(n)]
    rand = [random_episode(env, i, rng) for i in range(n)]
    return {
        "tasks": n,
        "oracle_success": sum(r >= 1.0 - 1e-9 for r in oracle) / n,
        "oracle_mean_reward": statistics.fmean(oracle),
        "random_success": sum(r >= 1.0 - 1e-9 for r in rand) / n,
        "random_mean_reward": statistics.fmean(rand),
    }
