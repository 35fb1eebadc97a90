"""The shop itself: one session's state machine over pages, shared by the text env, the verifier and the web site.

A session holds the current page and reacts to `search[...]` / `click[...]` actions exactly as WebShop's text env
does (ENVS-NEXT §1.4), with one tightening shared with its browser variant: `search` needs the search page.
Every page is built as a `Page` (a list of typed elements); `render_text` turns it into the `text` / `text_rich`
observations, and the web site renders the same `Page` as HTML, so both front ends show one model.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from .catalog import Catalog, Product
from .reward import Goal, shop_reward
from .search import SearchEngine

PRODUCT_WINDOW = 10
MAX_ACTION_CHARS = 2000  # longer actions are invalid before any parsing (bounded work on 1 MB inputs)
SUB_PAGES = ("description", "features", "reviews")
BACK, PREV, NEXT, BUY = "back to search", "< prev", "next >", "buy now"

ElementKind = Literal["title", "text", "button", "option_group", "option", "product_link", "search_box", "price"]


@dataclass(frozen=True)
class Element:
    kind: ElementKind
    label: str
    key: str = ""  # the clickable text (lower-cased) for buttons, options and product links
    selected: bool = False


@dataclass
class Page:
    kind: Literal["search", "results", "item", "sub_page", "done"]
    elements: list[Element]
    instruction: str

    def clickables(self) -> dict[str, Element]:
        return {e.key: e for e in self.elements if e.key}

    @property
    def has_search_bar(self) -> bool:
        return any(e.kind == "search_box" for e in self.elements)


@dataclass
class Outcome:
    valid: bool
    message: str = ""
    done: bool = False
    clicked: str = ""


@dataclass
class Purchase:
    asin: str
    options: dict[str, str]
    reward: float
    components: dict[str, float]


def parse_action(text: str) -> tuple[str, str] | None:
    """`search[kw]` / `click[x]` -> (verb, argument); None for anything else. Bounded: O(MAX_ACTION_CHARS)."""
    if not isinstance(text, str) or len(text) > MAX_ACTION_CHARS:
        return None
    s = text.strip()
    if "\n" in s or "\r" in s or not s.endswith("]"):
        return None
    i = s.find("[")
    if i <= 0:
        return None
    verb, arg = s[:i].strip().lower(), s[i + 1 : -1].strip()
    if verb not in ("search", "click") or not arg:
        return None
    return verb, arg


@dataclass
class ShopSession:
    """One episode in the shop: navigation state, chosen options and, after Buy Now, the purchase."""

    catalog: Catalog
    engine: SearchEngine
    goal: Goal
    kind: str = "search"
    keywords: str = ""
    results: list[str] = field(default_factory=list)
    page_num: int = 1
    asin: str = ""
    options: dict[str, str] = field(default_factory=dict)
    sub_page: str = ""
    purchase: Purchase | None = None

    @property
    def done(self) -> bool:
        return self.purchase is not None

    # ---- actions -------------------------------------------------------------------------------------------------
    def act(self, action: str) -> Outcome:
        if self.done:
            return Outcome(False, "The purchase is complete.", done=True)
        parsed = parse_action(action)
        if parsed is None:
            return Outcome(False, "Invalid action: use search[keywords] or click[text of a clickable].")
        verb, arg = parsed
        if verb == "search":
            return self.search(arg)
        return self.click(arg)

    def search(self, keywords: str) -> Outcome:
        if self.kind != "search":
            return Outcome(False, "There is no search bar on this page; click[Back to Search] first.")
        self.keywords = keywords.lower()
        self.results = self.engine.search(self.keywords)
        self.kind, self.page_num = "results", 1
        return Outcome(True)

    def click(self, target: str) -> Outcome:
        key = target.lower()
        element = self.page().clickables().get(key)
        if element is None:
            return Outcome(False, f"Invalid action: {target[:80]!r} is not clickable on this page.")
        if key == BACK:
            self.kind, self.keywords, self.results, self.asin, self.options = "search", "", [], "", {}
        elif key == NEXT:
            self.page_num += 1
        elif key == PREV:
            if self.kind == "results":
                self.page_num -= 1
            elif self.kind == "item":
                self.kind, self.asin, self.options = "results", "", {}
            else:
                self.kind = "item"
        elif key == BUY:
            product = self.catalog.by_asin[self.asin]
            reward, components = shop_reward(product, self.options, self.goal)
            self.purchase = Purchase(self.asin, dict(self.options), reward, components)
            self.kind = "done"
            return Outcome(True, done=True, clicked=element.label)
        elif self.kind == "results":
            self.kind, self.asin, self.options = "item", element.label, {}
        elif element.kind == "option":
            name = self._option_name(key)
            self.options[name] = key
        elif key in SUB_PAGES:
            self.kind, self.sub_page = "sub_page", key
        return Outcome(True, clicked=element.label)

    def _option_name(self, value: str) -> str:
        product = self.catalog.by_asin[self.asin]
        found = ""
        for name, values in product.options.items():
            if value in values:
                found = name  # the last group wins, as in the original's text_to_clickable dict
        return found

    # ---- pages ---------------------------------------------------------------------------------------------------
    def page(self) -> Page:
        builders = {
            "search": self._search_page,
            "results": self._results_page,
            "item": self._item_page,
            "sub_page": self._sub_page,
            "done": self._done_page,
        }
        return Page(self.kind, builders[self.kind](), self.goal.instruction)  # type: ignore[arg-type]

    def _search_page(self) -> list[Element]:
        return [
            Element("title", "WebShop"),
            Element("text", "Instruction:"),
            Element("text", self.goal.instruction),
            Element("search_box", "Search"),
        ]

    def _header(self) -> list[Element]:
        return [
            Element("text", "Instruction:"),
            Element("text", self.goal.instruction),
            Element("button", "Back to Search", BACK),
        ]

    def _results_page(self) -> list[Element]:
        start = (self.page_num - 1) * PRODUCT_WINDOW
        shown = self.results[start : start + PRODUCT_WINDOW]
        elements = [*self._header(), Element("text", f"Page {self.page_num} (Total results: {len(self.results)})")]
        if self.page_num > 1:
            elements.append(Element("button", "< Prev", PREV))
        if start + PRODUCT_WINDOW < len(self.results):
            elements.append(Element("button", "Next >", NEXT))
        for asin in shown:
            product = self.catalog.by_asin[asin]
            elements += [
                Element("product_link", asin, asin.lower()),
                Element("text", product.Title),
                Element("price", product.price_text),
            ]
        return elements

    def _item_page(self) -> list[Element]:
        product = self.catalog.by_asin[self.asin]
        elements = [*self._header(), Element("button", "< Prev", PREV)]
        for name, values in product.options.items():
            elements.append(Element("option_group", name))
            elements += [Element("option", v, v, self.options.get(name) == v) for v in values]
        elements += [
            Element("text", product.Title),
            Element("price", f"Price: {product.price_text}"),
            Element("text", f"Rating: {product.rating_text}"),
        ]
        elements += [Element("button", s.capitalize(), s) for s in SUB_PAGES]
        elements.append(Element("button", "Buy Now", BUY))
        return elements

    def _sub_page(self) -> list[Element]:
        product: Product = self.catalog.by_asin[self.asin]
        reviews = [f"{r['title']} [SEP] {r['score']} out of 5 [SEP] {r['body']}" for r in product.Reviews]
        body = {"description": [product.Description], "features": list(product.BulletPoints), "reviews": reviews}
        return [*self._header(), Element("button", "< Prev", PREV), *(Element("text", t) for t in body[self.sub_page])]

    def _done_page(self) -> list[Element]:
        assert self.purchase is not None
        return [
            Element("title", "Thank you for shopping with us!"),
            Element("text", "Your score (min 0.0, max 1.0)"),
            Element("text", f"{self.purchase.reward:.4f}"),
        ]


def render_text(page: Page, mode: str = "text", clicked: str = "") -> str:
    """WebShop's `text` (visible strings joined by ` [SEP] `) or `text_rich` (buttons marked) observation."""
    if mode == "text":
        parts = [e.label for e in page.elements if e.kind != "search_box"]
        if page.has_search_bar:
            parts.append("Search")
        return " [SEP] ".join(parts)
    lines = [f"You have clicked {clicked}."] if clicked else []
    for e in page.elements:
        if e.kind == "option" and e.selected:
            lines.append(f"[clicked button] {e.label} [clicked button_]")
        elif e.kind in ("button", "option", "product_link"):
            lines.append(f"[button] {e.label} [button_]")
        elif e.kind == "search_box":
            lines.append("[button] Search [button_]")
        else:
            lines.append(e.label)
    return "\n".join(lines)
