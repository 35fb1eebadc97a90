"""Action plans through the shop: the scripted oracle's route to a product, reused for wrong-answer trajectories.

A plan searches the product's own title, pages through the results to it, clicks it, picks the options and buys.
It is computed against the same search engine the env uses, so it holds for that engine's ranking.
"""

from __future__ import annotations

from .catalog import Catalog, Product
from .search import SEARCH_RETURN_N, SearchEngine
from .shop import PRODUCT_WINDOW

BLIND_RANKS = (1, 2, 3)  # results WebShop's rule baseline and its relatives buy


def query_for(product: Product) -> str:
    return " ".join("".join(c if c.isalnum() else " " for c in product.Title.lower()).split())


def plan_purchase(engine: SearchEngine, product: Product, options: dict[str, str]) -> list[str] | None:
    """Actions that buy `product` with `options` (name -> value), or None when search cannot reach it."""
    query = query_for(product)
    results = engine.search(query)[:SEARCH_RETURN_N]
    if product.asin not in results:
        return None
    position = results.index(product.asin)
    actions = [f"search[{query}]"] + ["click[Next >]"] * (position // PRODUCT_WINDOW)
    actions.append(f"click[{product.asin}]")
    for name, value in options.items():
        if value in product.options.get(name, []):
            actions.append(f"click[{value}]")
    actions.append("click[Buy Now]")
    return actions


def goal_options_for(product: Product, wanted: dict[str, str]) -> dict[str, str]:
    """The goal's option values where `product` offers them, else the product's first value (a real choice)."""
    return {
        name: (wanted[name] if wanted.get(name) in values else values[0]) for name, values in product.options.items()
    }


def siblings(catalog: Catalog, product: Product) -> list[Product]:
    """Products of the same type (WebShop's `query`), the natural near misses."""
    return [p for p in catalog.products if p.query == product.query and p.asin != product.asin]


def blind_plans(engine: SearchEngine, catalog: Catalog, instruction: str) -> dict[str, list[str]]:
    """WebShop's rule baseline and its relatives: search the instruction text, open the k-th result, pick no
    option, every group's first value or every group's last value, buy. They never read the goal's options."""
    results = engine.search(instruction.lower())
    plans = {"buy_without_opening": [f"search[{instruction}]", "click[Buy Now]"]}
    for rank in BLIND_RANKS[: len(results)]:
        product = catalog.by_asin[results[rank - 1]]
        opening = [f"search[{instruction}]", f"click[{product.asin}]"]
        plans[f"buy_result_{rank}"] = [*opening, "click[Buy Now]"]
        for which, pick in (("first", 0), ("last", -1)):
            chosen = [f"click[{values[pick]}]" for values in product.options.values() if values]
            plans[f"buy_result_{rank}_{which}_options"] = [*opening, *chosen, "click[Buy Now]"]
    return plans
