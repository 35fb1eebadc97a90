"""WebShop goals over a catalog: each task asks to buy a product with some of its attributes, one value per option
and a price bound drawn as WebShop does (two picks among the first four steps of {10, 20, ..., 990} above the
price, the larger one kept; no bound when fewer than two steps remain).

Splits are disjoint by the goal instruction's hash (`rlvr_gym.family.split_of`); the generator is unbounded per
split. No repeats: index i keeps only instructions whose hash is i mod the split's window (`WINDOWS`), so no instruction
repeats within a window of consecutive indices, and two indices share one only if they are a multiple of it apart.
The task's reference actions are the scripted oracle's plan (search the goal product's title, page to it, choose
the options, buy), computed against the env's own search engine.

Goals must be unreachable without reading them (docs/reward-contract.md): the goal product offers at least
`MIN_OPTION_SPACE` option combinations (so a blind pick matches all options about 1 time in 30 or less), and a
goal that WebShop's rule baseline or one of its relatives (`planner.blind_plans`: search the instruction, buy one
of the first three results with no, the first or the last option values) would fully satisfy is not drawn.
"""

from __future__ import annotations

import math
import random
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from rlvr_gym import Task
from rlvr_gym.family import TaskSource, split_of, stable_seed

from .catalog import DEFAULT_SIZE, Catalog, Product, get_catalog
from .planner import blind_plans, plan_purchase
from .reward import Goal
from .search import DEFAULT_ENGINE, SearchEngine, get_engine
from .shop import ShopSession

# Index i keeps goals whose instruction hash is i mod the window: no repeat within a window of indices. Eval keeps
# 1 draw in 10 already, so its window is smaller at the same cost per task.
WINDOWS = {"train": 256, "eval": 32}
MAX_ATTEMPTS = 200_000
MIN_OPTION_SPACE = 30  # option combinations the goal product offers (a blind choice is right 1 time in 30)
NO_PRICE_BOUND = 1_000_000.0
# Instruction bases in the style of the original's `items_ins_v2` instructions: lower case, first person, the type
# with the goal's attributes before it or in a relative clause, no final period. `{a}` is the article.
TEMPLATES = (
    "i am looking for {a} {head} that is {attrs}",
    "i am looking for {a} {attrs} {head}",
    "i'm looking for {a} {head} which is {attrs}",
    "i'm looking for {a} {attrs} {head}",
    "i need {a} {head} that is {attrs}",
    "i need {a} {attrs} {head}",
    "i want {a} {attrs} {head}",
    "i want {a} {head} that is {attrs}",
    "i would like {a} {attrs} {head}",
    "i would like {a} {head} that is {attrs}",
    "i'd like to buy {a} {head} which is {attrs}",
    "i want to buy {a} {head}, it should be {attrs}",
    "i am searching for {a} {attrs} {head}",
    "i'm searching for {a} {head} that is {attrs}",
    "find me {a} {attrs} {head}",
    "find {a} {head} that is {attrs}",
    "can you find me {a} {attrs} {head}",
    "help me find {a} {head} that is {attrs}",
    "please get me {a} {attrs} {head}",
    "looking for {a} {attrs} {head}",
    "i'm in need of {a} {attrs} {head}",
    "show me {a} {head} which is {attrs}",
    "get me {a} {head} that's {attrs}",
    "i want to find {a} {attrs} {head}",
)
RULES = (
    "You are shopping in WebShop. Reach the product that fits the instruction and buy it.\n"
    "Act with exactly one action per turn, on one line: search[keywords] (on the search page) or "
    "click[text of a clickable] (a button, a product ID, an option value, or Buy Now)."
)


def price_upper(price: float, rng: random.Random) -> float:
    first = max(1, int(price // 10) + 1)  # the first grid step strictly above the price
    above = list(range(10 * first, min(10 * first + 40, 1000), 10))
    if len(above) < 2:
        return NO_PRICE_BOUND
    return float(max(rng.sample(above, 2)))


def join_words(items: list[str], rng: random.Random) -> str:
    """ "a", "a and b", "a, b and c" or "a, b, and c" (both comma styles occur in the original's instructions)."""
    if len(items) == 1:
        return items[0]
    last = ", and " if len(items) > 2 and rng.random() < 0.5 else " and "
    return ", ".join(items[:-1]) + last + items[-1]


def article(words: str) -> str:
    return "an" if words[0] in "aeiou" else "a"


def instruction_base(head: str, attrs: list[str], rng: random.Random) -> str:
    """One paraphrase of "buy a `head` with `attrs`" in the original's instruction style."""
    template = rng.choice(TEMPLATES)
    attr_text = join_words(attrs, rng)
    first = attr_text if template.index("{attrs}") < template.index("{head}") else head
    return template.format(a=article(first), head=head, attrs=attr_text)


# How people name an option inside a sentence (the original's human instructions weave options in).
OPTION_PHRASES = {
    "color": ("in {v}", "in {v} color", "{v} colored", "in the color {v}"),
    "size": ("in size {v}", "size {v}", "in {v}", "{v} size"),
    "flavor name": ("{v} flavor", "in {v} flavor", "with {v} flavor"),
    "scent": ("{v} scented", "with a {v} scent", "in {v} scent"),
    "material": ("made of {v}", "in {v}"),
    "style": ("in {v} style", "{v} style"),
    "pattern name": ("with a {v} pattern", "in {v} pattern"),
    "capacity": ("with {v} capacity", "{v}"),
    "wattage": ("{v}", "rated {v}"),
}


def option_text(options: tuple[tuple[str, str], ...], style: str, rng: random.Random) -> str:
    """The options part of an instruction: the original's synthetic " with name: value, and ..." or a human
    phrasing (", in navy blue and size x-large")."""
    if not options:
        return ""
    if style == "synthetic":
        return " with " + ", and ".join(f"{n}: {v}" for n, v in options)
    phrases = [rng.choice(OPTION_PHRASES.get(n, ("{v}",))).format(v=v) for n, v in options]
    return ", " + join_words(phrases, rng)


def make_goal(product: Product, rng: random.Random, style: str = "synthetic") -> Goal:
    """A goal as the original builds one: `synthetic` (`get_synthetic_goals`: the instruction base, " with name:
    value, and ..." over the option names *sorted*, the price text; options compared as (name, value) tuples) or
    `human` (`get_human_goals`: options named in the sentence, compared as plain values)."""
    attrs = rng.sample(product.Attributes, rng.randint(1, min(3, len(product.Attributes))))
    options = tuple((name, rng.choice(product.options[name])) for name in sorted(product.options))
    text = instruction_base(product.query, attrs, rng).strip(".") + option_text(options, style, rng)
    upper = price_upper(product.price, rng)
    if upper != NO_PRICE_BOUND:
        text += f", and price lower than {upper:.2f} dollars"
    return Goal(
        asin=product.asin,
        instruction=text,
        attributes=tuple(attrs),
        options=options,
        price_upper=upper,
        name=product.Title,
        query=product.query,
        product_category=product.product_category,
        option_form="pairs" if style == "synthetic" else "values",
    )


def option_space(product: Product) -> int:
    return math.prod(len(values) for values in product.options.values()) if product.options else 0


def goal_products(catalog: Catalog) -> list[Product]:
    """Products a goal may name: enough option combinations to make blind picks rare (all, if none has them)."""
    rich = [p for p in catalog.products if option_space(p) >= MIN_OPTION_SPACE]
    return rich or list(catalog.products)


def blindly_solved(catalog: Catalog, engine: SearchEngine, goal: Goal) -> bool:
    """Whether a purchase that never reads the goal (`planner.blind_plans`) would satisfy it fully."""
    for plan in blind_plans(engine, catalog, goal.instruction).values():
        session = ShopSession(catalog, engine, goal)
        for action in plan:
            session.act(action)
        if session.purchase is not None and session.purchase.reward >= 1.0 - 1e-9:
            return True
    return False


def _split_and_window(instruction: str, eval_fraction: float) -> tuple[str, int]:
    split = split_of(instruction, eval_fraction)
    return split, stable_seed("webshop-window", instruction) % WINDOWS[split]


class ShopConfig(BaseModel):
    """The catalog a task set is drawn from: generated (`catalog_size`, `catalog_seed`) or WebShop's files (`data`)."""

    model_config = ConfigDict(extra="forbid")

    catalog_size: int = DEFAULT_SIZE
    catalog_seed: int = 0
    data: str | None = None
    engine: str = DEFAULT_ENGINE
    goal_style: Literal["synthetic", "human"] = "synthetic"  # the original's two goal kinds (`make_goal`)


class WebShopTasks(TaskSource):
    """Goals over one catalog (generated by default, or the original files via `data` / $WEBSHOP_DATA)."""

    family = "webshop"

    def __init__(self, *, split: str = "train", seed: int = 0, **config: Any) -> None:
        super().__init__(split=split, seed=seed)
        self.config = ShopConfig(**config)
        self.catalog: Catalog = get_catalog(self.config.catalog_size, self.config.catalog_seed, self.config.data)
        self.engine = get_engine(self.catalog, self.config.engine)
        self.products = goal_products(self.catalog)

    def _draw_goal(self, index: int) -> tuple[Goal, list[str]]:
        """The first goal drawn for `index` that is in this split, in the index's window class, and reachable."""
        rng = self.rng(index)  # one stream per index: a draw costs microseconds, so the window stays cheap
        for _ in range(MAX_ATTEMPTS):
            goal = make_goal(rng.choice(self.products), rng, self.config.goal_style)
            if _split_and_window(goal.instruction, self.eval_fraction) != (self.split, index % WINDOWS[self.split]):
                continue
            plan = plan_purchase(self.engine, self.catalog.by_asin[goal.asin], dict(goal.options))
            if plan is not None and not blindly_solved(self.catalog, self.engine, goal):
                return goal, plan
        raise RuntimeError(f"webshop: no {self.split} goal for index {index} in {MAX_ATTEMPTS} draws")

    def task(self, index: int) -> Task:
        goal, plan = self._draw_goal(index)
        n_terms = len(goal.attributes) + len(goal.options)
        return self.make_task(
            index,
            prompt=f"{RULES}\n\nInstruction: {goal.instruction}",
            ground_truth=goal.as_dict(),
            reference_actions=plan,
            difficulty=max(1, min(5, n_terms)),
            instruction=goal.instruction,
            catalog=self.catalog.source,
            catalog_digest=self.catalog.digest,
            **self.config.model_dump(),
        )
