"""Non-solving shop policies for `rlvr-gym check-env`'s reward floor (the env hook `floor_policies`).

WebShop's own rule baseline and its relatives: search the instruction text, open the k-th result, pick the first
(or last) value of every option group or none, buy. They read the page, never the goal: what they earn is what the
shop gives away for not shopping. The reward contract (docs/reward-contract.md) allows them at most 5% of the
oracle's mean.
"""

from __future__ import annotations

from rlvr_gym import Task

from .planner import blind_plans
from .verifier import shop_for


def floor_policies(task: Task) -> dict[str, list[str]]:
    """WebShop's rule baseline and relatives (`planner.blind_plans`), plus one blind pick the generator does not
    exclude (every group's second value on the first result): its rate of luck is what the floor measures."""
    catalog, engine = shop_for(task)
    instruction = task.ground_truth["instruction"]
    policies = blind_plans(engine, catalog, instruction)
    results = engine.search(instruction.lower())
    if results:
        product = catalog.by_asin[results[0]]
        chosen = [f"click[{values[min(1, len(values) - 1)]}]" for values in product.options.values() if values]
        policies["buy_result_1_second_options"] = [
            f"search[{instruction}]",
            f"click[{product.asin}]",
            *chosen,
            "click[Buy Now]",
        ]
    return policies
