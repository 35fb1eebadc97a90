"""The WebShop reward (`engine/goal.py`), term by term, each returned as a named component.

R = r_type · (N_attr + N_opt + 1[price ≤ price_upper]) / (|goal attrs| + |goal options| + 1)

Title nouns come from the lexicon extractor (`title_nouns`): a title word is a noun iff it is a head-noun word of
some product type (`lexicon.TITLE_NOUNS`). For generated titles this is exact by construction; spaCy is not used
(its `en_core_web_sm` model is not on PyPI under that name, and loading a re-upload costs ~4 s and ~38 ms/title).
The one deliberate deviation: an empty goal attribute list (a ZeroDivisionError in the original) counts as
attribute score 1 with nothing added to the sum.

`shop_reward` is what the env pays (docs/reward-contract.md): 1 for a purchase WebShop scores 1, else only
`PARTIAL_OPTIONS` x the share of goal options matched on a purchase that is otherwise right. WebShop's own
partial credit (type, attributes, price) is what searching the instruction text and buying the first result
collects without reading the goal (0.5-0.6 on our catalog, WebShop's rule baseline scores 0.46 in the paper), so
it stays a component (`webshop_reward`), never a reward.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .catalog import Product
from .lexicon import TITLE_NOUNS
from .matching import THRESHOLD, normalize_color, token_set_score


@dataclass(frozen=True)
class Goal:
    """What the shopper wants; `name`, `query` and `product_category` are the goal product's."""

    asin: str
    instruction: str
    attributes: tuple[str, ...]
    options: tuple[tuple[str, str], ...]  # (option name, value) pairs the shopper wants
    price_upper: float
    name: str
    query: str
    product_category: str
    # How the reward compares options: "pairs" as the original's synthetic goals ((name, value) tuples, scored on
    # their string form), "values" as its human goals (`instruction_options`: the value strings alone).
    option_form: str = "pairs"

    def goal_options(self) -> list[tuple[str, str] | str]:
        """The goal options as the original's reward receives them."""
        return list(self.options) if self.option_form == "pairs" else [v for _, v in self.options]

    def as_dict(self) -> dict[str, Any]:
        return {
            "asin": self.asin,
            "instruction": self.instruction,
            "attributes": list(self.attributes),
            "options": [list(o) for o in self.options],
            "price_upper": self.price_upper,
            "name": self.name,
            "query": self.query,
            "product_category": self.product_category,
            "option_form": self.option_form,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Goal:
        return cls(
            asin=str(data["asin"]),
            instruction=str(data["instruction"]),
            attributes=tuple(str(a) for a in data["attributes"]),
            options=tuple((str(n), str(v)) for n, v in data["options"]),
            price_upper=float(data["price_upper"]),
            name=str(data["name"]),
            query=str(data["query"]),
            product_category=str(data["product_category"]),
            option_form=str(data.get("option_form", "pairs")),
        )


def title_nouns(title: str) -> list[str]:
    """Lexicon noun extractor: lower-cased words of the title that are head-noun words (duplicates kept)."""
    words = "".join(c if c.isalnum() else " " for c in title.lower()).split()
    return [w for w in words if w in TITLE_NOUNS]


def title_score(purchased_name: str, goal_name: str) -> float:
    goal_nouns = title_nouns(goal_name)
    if not goal_nouns:
        return 0.2
    return len(set(title_nouns(purchased_name)) & set(goal_nouns)) / len(goal_nouns)


def type_reward(product: Product, goal: Goal) -> dict[str, float]:
    query_match = product.query == goal.query
    cats = {c.strip() for c in product.product_category.split("›")}
    goal_cats = {c.strip() for c in goal.product_category.split("›")}
    category_match = len(cats & goal_cats) >= 2
    score = title_score(product.Title, goal.name)
    r_type = 1.0
    if not (query_match or category_match or score > 0.2):
        r_type = 0.5
    if score < 0.1:
        r_type = 0.1
    if score == 0.0:
        r_type = 0.0
    return {
        "r_type": r_type,
        "query_match": float(query_match),
        "category_match": float(category_match),
        "title_score": score,
    }


def attribute_matches(product: Product, goal: Goal) -> int:
    title, bullets, description = (
        product.Title.lower(),
        " ".join(product.BulletPoints).lower(),
        product.Description.lower(),
    )
    count = 0
    for g_attr in goal.attributes:
        if any(token_set_score(p_attr, g_attr) > THRESHOLD for p_attr in product.Attributes):
            count += 1
        elif g_attr in title or g_attr in bullets or g_attr in description:
            count += 1
    return count


def option_matches(chosen: dict[str, str], goal: Goal) -> int:
    purchased = [normalize_color(v) for v in chosen.values()]
    count = 0
    for g_option in goal.goal_options():
        target = normalize_color(g_option)
        if any(token_set_score(p, target) > THRESHOLD for p in purchased):
            count += 1
    return count


def webshop_reward(product: Product, chosen: dict[str, str], goal: Goal) -> tuple[float, dict[str, float]]:
    """The reward and its named parts: r_type (with its inputs), attribute/option/price scores."""
    types = type_reward(product, goal)
    n_attr = attribute_matches(product, goal)
    n_opt = option_matches(chosen, goal)
    price_ok = float(product.price <= goal.price_upper)
    total = (n_attr + n_opt + price_ok) / (len(goal.attributes) + len(goal.options) + 1)
    reward = total * types["r_type"]
    components = {
        **types,
        "attribute_score": n_attr / len(goal.attributes) if goal.attributes else 1.0,
        "option_score": n_opt / len(goal.options) if goal.options else 1.0,
        "price_score": price_ok,
        "match_fraction": total,
    }
    return reward, components


PARTIAL_OPTIONS = 0.05  # the most a purchase short of the goal earns: options chosen on an otherwise right product


def shop_reward(product: Product, chosen: dict[str, str], goal: Goal) -> tuple[float, dict[str, float]]:
    """The env's reward: 1 on a full WebShop match; else a small option credit on an otherwise right purchase."""
    original, parts = webshop_reward(product, chosen, goal)
    if original >= 1.0 - 1e-9:
        return 1.0, {**parts, "webshop_reward": original}
    rest_right = parts["r_type"] == 1.0 and parts["attribute_score"] == 1.0 and parts["price_score"] == 1.0
    partial = PARTIAL_OPTIONS * parts["option_score"] if rest_right and goal.options else 0.0
    return partial, {**parts, "webshop_reward": original}
