"""The WebShop verifier: replay the trajectory in a fresh shop session and score the purchase.

The verdict is decided only from what the replay itself produced (which product page Buy Now was clicked on, with
which options), never from text the policy wrote about it. No purchase within the turn limit is reward 0.
`wrong_answers` buys near misses: a sibling lacking a goal attribute, the goal product with a wrong option, a
product over the price bound, and a product of another type.
"""

from __future__ import annotations

import random
from collections.abc import Sequence

from rlvr_gym import Task, Verdict

from .catalog import DEFAULT_SIZE, Catalog, Product, get_catalog
from .planner import goal_options_for, plan_purchase, siblings
from .reward import Goal, attribute_matches
from .search import DEFAULT_ENGINE, SearchEngine, get_engine
from .shop import ShopSession

DEFAULT_MAX_TURNS = 15


def shop_for(task: Task) -> tuple[Catalog, SearchEngine]:
    meta = task.metadata
    size = int(meta.get("catalog_size", DEFAULT_SIZE))
    catalog = get_catalog(size, int(meta.get("catalog_seed", 0)), meta.get("data"))
    if meta.get("catalog_digest") and catalog.digest != meta["catalog_digest"]:
        raise ValueError(f"task {task.id} was made on catalog {meta['catalog_digest']}, this one is {catalog.digest}")
    return catalog, get_engine(catalog, str(meta.get("engine", DEFAULT_ENGINE)))


def new_session(task: Task) -> ShopSession:
    catalog, engine = shop_for(task)
    return ShopSession(catalog, engine, Goal.from_dict(task.ground_truth))


def purchase_verdict(session: ShopSession, steps: int, invalid: int) -> Verdict:
    counts = {"steps": float(steps), "invalid_actions": float(invalid)}
    if session.purchase is None:
        return Verdict(
            reward=0.0,
            passed=False,
            valid=steps > invalid,
            components={"purchased": 0.0, **counts},
            feedback="No purchase was made.",
        )
    p = session.purchase
    return Verdict(
        reward=p.reward,
        passed=p.reward >= 1.0 - 1e-9,
        components={"purchased": 1.0, **p.components, **counts},
        feedback=f"Bought {p.asin} with options {p.options}: score {p.reward:.4f}.",
    )


def verify(task: Task, trajectory: Sequence[str], max_turns: int = DEFAULT_MAX_TURNS) -> Verdict:
    session = new_session(task)
    steps = invalid = 0
    for action in list(trajectory)[:max_turns]:
        steps += 1
        outcome = session.act(action if isinstance(action, str) else str(action))
        invalid += not outcome.valid
        if outcome.done:
            break
    return purchase_verdict(session, steps, invalid)


def _plan(engine: SearchEngine, product: Product, goal: Goal) -> list[str] | None:
    return plan_purchase(engine, product, goal_options_for(product, dict(goal.options)))


def wrong_answers(task: Task, rng: random.Random) -> list[list[str]]:
    catalog, engine = shop_for(task)
    goal = Goal.from_dict(task.ground_truth)
    target = catalog.by_asin[goal.asin]
    kin = siblings(catalog, target)
    out: list[list[str]] = []
    missing_attr = [p for p in kin if attribute_matches(p, goal) < len(goal.attributes)]
    over_budget = [p for p in kin if p.price > goal.price_upper]
    other_type = [p for p in catalog.products if p.query != goal.query]
    for pool in (missing_attr, over_budget, other_type):
        for product in rng.sample(pool, min(3, len(pool))):
            plan = _plan(engine, product, goal)
            if plan:
                out.append(plan)
                break
    for name, value in goal.options:  # the goal product with one option changed
        others = [v for v in target.options.get(name, []) if v != value]
        if others:
            plan = plan_purchase(engine, target, {**dict(goal.options), name: rng.choice(others)})
            if plan:
                out.append(plan)
    if task.reference_actions:
        out.append(task.reference_actions[:-1])  # everything but Buy Now: no purchase
    return out
