"""The product catalog: a deterministic, seeded generator of WebShop-shaped products, and a loader for the
original WebShop JSON files (`items_shuffle*.json` + optional `items_ins_v2*.json`).

No WebShop product data ships in any installable package (ENVS-NEXT §1.6), so the default catalog is generated:
product `i` of catalog `(seed, size)` is a pure function of those three numbers. Products keep WebShop's derived
field names (`Title`, `Description`, `BulletPoints`, `Attributes`, `options`, `price`, `query`,
`product_category`) so the reward reads them exactly as the original does.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import random
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

from rlvr_gym.family import stable_seed

from .lexicon import BRAND_PARTS, CATEGORY_ATTRIBUTES, CATEGORY_NAMES, MODIFIERS, OPTIONS, TYPES, ProductType
from .matching import normalize_color, option_matches

CATALOG_VERSION = 5  # bump when generation changes: it keys the on-disk index cache
DEFAULT_SIZE = 10_000  # products in the default catalog (the original's search indexes: 100, 1k, 100k, all)
OPTION_VALUES_PER_DIM = (3, 8)  # values a product offers per option dimension (fewer when the pool runs out)
RANGE_SHARE = 0.15  # products listed with a price range ("$a to $b")
NO_REVIEW_SHARE = 0.12  # products without reviews (shown as "Rating: N.A.", as every product in the original)
SHOWN_REVIEWS = 5
VARIANT_SHARE = 0.3  # products that relist an earlier product of their type (see `listing`)
CROSS_SELL_SHARE = 0.5  # descriptions that name another product type of the category (as real listings do)
REVIEW_TEXT = {
    1: ("Very disappointed", "This {head} was not {attr} at all. Returned it."),
    2: ("Not as described", "The {head} is okay but I expected it to be more {attr}."),
    3: ("It's fine", "Average {head}. {attr} is true, but the quality could be better."),
    4: ("Good value", "Nice {head}, {attr} as advertised. Would buy again."),
    5: ("Love it!", "Exactly what I wanted: a {attr} {head}. Highly recommend."),
}
DATA_ENV = "WEBSHOP_DATA"


@dataclass
class Product:
    """One product with WebShop's derived fields (see `load_products` in the original's engine)."""

    asin: str
    Title: str
    Description: str
    BulletPoints: list[str]
    Attributes: list[str]
    options: dict[str, list[str]]  # option name -> values, lower-cased, in display order
    price: float
    query: str
    product_category: str
    category: str
    Reviews: list[dict[str, Any]] = field(default_factory=list)  # {"score", "title", "body"}
    Rating: float | None = None  # mean stars; None shows as "N.A." (the original's loader sets every product so)
    price_range: tuple[float, float] | None = None  # a listed "$a to $b"; `price` then lies inside it
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def price_text(self) -> str:
        """The listed price, WebShop's `Price` field: "$a", or "$a to $b" for a range."""
        if self.price_range:
            return f"${self.price_range[0]:.2f} to ${self.price_range[1]:.2f}"
        return f"${self.price:.2f}"

    @property
    def rating_text(self) -> str:
        return "N.A." if self.Rating is None else f"{self.Rating:.1f}"

    def contents(self) -> str:
        """The search document, WebShop's recipe: lower(title, description, first bullet, options)."""
        opts = ", and ".join(f"{name}: {', '.join(values)}" for name, values in self.options.items())
        bullet = self.BulletPoints[0] if self.BulletPoints else ""
        return f"{self.Title} {self.Description} {bullet} {opts}".lower()


@dataclass
class Catalog:
    """Products plus an ASIN index; `digest` identifies the content (it keys the on-disk search index)."""

    products: list[Product]
    source: str  # "generated:<seed>:<size>" or the data path
    by_asin: dict[str, Product] = field(init=False)
    digest: str = field(init=False)

    def __post_init__(self) -> None:
        self.by_asin = {p.asin: p for p in self.products}
        h = hashlib.sha256(f"v{CATALOG_VERSION}|".encode())
        for p in self.products:
            h.update(p.asin.encode())
            h.update(b"\0")
            h.update(p.contents().encode("utf-8", "surrogatepass"))
            h.update(b"\1")
        self.digest = h.hexdigest()[:24]

    def __len__(self) -> int:
        return len(self.products)


# ---- generation ----------------------------------------------------------------------------------------------------
def _asin(seed: int, index: int) -> str:
    digest = hashlib.blake2b(f"asin|{seed}|{index}".encode(), digest_size=8).digest()
    alphabet = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ"
    n = int.from_bytes(digest, "big")
    chars = []
    for _ in range(8):
        n, r = divmod(n, 36)
        chars.append(alphabet[r])
    return "B0" + "".join(chars)


def _brand(rng: random.Random) -> str:
    return "".join(rng.choice(BRAND_PARTS) for _ in range(rng.randint(2, 3))).capitalize()


def _shelf_price(value: float, rng: random.Random) -> float:
    """A shelf price: whole dollars plus a retail ending (.99 most often), never below $1."""
    return round(max(1.0, math.floor(value)) + rng.choice((0.99, 0.99, 0.49, 0.95, 0.0)), 2)


def draw_price(rng: random.Random, low: float, high: float) -> tuple[float, tuple[float, float] | None]:
    """(price, display range or None). Prices are lognormal with `low`/`high` as the 2.5% / 97.5% points (retail
    prices are right-skewed); `RANGE_SHARE` of products list a range ("$a to $b") and then, as in the original's
    loader, the price used for goals and reward is uniform in that range, drawn once."""
    mu, sigma = (math.log(low) + math.log(high)) / 2, (math.log(high) - math.log(low)) / 3.92
    base = _shelf_price(rng.lognormvariate(mu, sigma), rng)
    if rng.random() >= RANGE_SHARE:
        return base, None
    top = _shelf_price(base * rng.uniform(1.1, 1.8), rng)
    if top <= base:
        return base, None
    return round(rng.uniform(base, top), 2), (base, top)


@lru_cache(maxsize=64)
def option_pool(dim: str) -> tuple[tuple[str, ...], frozenset[tuple[str, str]]]:
    """A vocabulary's usable values and its confusable pairs, under WebShop's option score with tuple goals.

    A value the score cannot match even against its own goal `(name, value)` is dropped; a pair is confusable when
    buying one satisfies a goal naming the other (e.g. "large" satisfies "x-large", "pack of 1" satisfies "pack of
    12", "navy blue" satisfies "blue": the original's token-set score and `normalize_color`), so no product offers
    both and a wrong choice never scores.
    """
    name, values = OPTIONS[dim]
    usable = tuple(v for v in values if option_matches(v, (name, v)))
    clash = frozenset(
        (a, b) for a in usable for b in usable if a != b and (option_matches(a, (name, b)) or option_matches(a, b))
    )
    return usable, clash


_color_key = lru_cache(maxsize=None)(normalize_color)  # over the finite option vocabulary only


def distinct_values(rng: random.Random, dim: str, k: int, taken: frozenset[str] = frozenset()) -> list[str]:
    """Up to `k` option values of vocabulary `dim`, no two of which the WebShop option score confuses, and none
    that another option group of the product already offers (`taken`, compared after `normalize_color`): a value
    in two groups is one clickable on the page, so one of its groups could never be chosen."""
    pool, clash = option_pool(dim)
    chosen: list[str] = []
    for value in rng.sample(pool, min(len(pool), k + 4)):
        if _color_key(value) in taken:
            continue
        if all((value, other) not in clash and (other, value) not in clash for other in chosen):
            chosen.append(value)
        if len(chosen) == k:
            break
    return chosen


def draw_reviews(rng: random.Random, kind: ProductType, attrs: list[str]) -> tuple[list[dict[str, Any]], float | None]:
    """Reviews and the mean star rating. Review counts are heavy-tailed (lognormal, many products with none) and
    stars J-shaped (mostly 5, then 1), the shape of retail review data; a product's quality shifts the stars. Up
    to `SHOWN_REVIEWS` are shown. They may name attributes the product lacks: the reward never reads reviews."""
    count = 0 if rng.random() < NO_REVIEW_SHARE else max(1, int(rng.lognormvariate(3.0, 1.5)))
    if not count:
        return [], None
    quality = rng.betavariate(5, 1.6)  # mean ~0.76: most products are liked
    weights = (0.5 * (1 - quality) + 0.02, 0.3 * (1 - quality), 0.4 * (1 - quality) + 0.05, 0.3 * quality, quality)
    shown = min(count, SHOWN_REVIEWS)
    stars = rng.choices((1, 2, 3, 4, 5), weights=weights, k=max(shown, min(count, 200)))
    pool = [*attrs, *kind.attributes]
    reviews = []
    for score in stars[:shown]:
        attr = rng.choice(pool)
        title, body = REVIEW_TEXT[score]
        reviews.append(
            {
                "score": score,
                "title": title,
                "body": body.format(head=kind.head, attr=attr),
            }
        )
    return reviews, round(sum(stars) / len(stars), 1)


_SAME_CATEGORY = {c: [t for t in TYPES if t.category == c] for c in CATEGORY_NAMES}


def listing(seed: int, index: int, kind: ProductType, stride: int = 0) -> tuple[str, str, list[str]]:
    """Brand, modifier and attributes of product `index`. With `stride` (the distance to the previous product of
    the same type), `VARIANT_SHARE` of products are another seller's listing of an earlier product: same brand,
    title and attributes, their own options, price and reviews (near duplicates, as in real catalogs)."""
    while True:
        rng = random.Random(stable_seed("webshop-listing", CATALOG_VERSION, seed, index))
        if not (stride and index >= stride and rng.random() < VARIANT_SHARE):
            break
        index -= stride
    brand, modifier = _brand(rng), rng.choice(MODIFIERS)
    own = rng.sample(kind.attributes, rng.randint(2, min(3, len(kind.attributes))))
    shared = rng.sample(CATEGORY_ATTRIBUTES[kind.category], rng.randint(1, 2))
    attrs = [*own, *(a for a in shared if a not in own)]
    rng.shuffle(attrs)
    return brand, modifier, attrs


def generate_product(seed: int, index: int, kind: ProductType | None = None, stride: int = 0) -> Product:
    rng = random.Random(stable_seed("webshop-product", CATALOG_VERSION, seed, index))
    kind = kind or rng.choice(TYPES)
    brand, modifier, attrs = listing(seed, index, kind, stride)
    options: dict[str, list[str]] = {}
    taken: frozenset[str] = frozenset()
    for dim in kind.options:
        values = distinct_values(rng, dim, rng.randint(*OPTION_VALUES_PER_DIM), taken)
        if values:
            options[OPTIONS[dim][0]] = values
            taken |= {_color_key(v) for v in values}
    title = f"{brand} {modifier.title()} {attrs[0].title()} {kind.head.title()}"
    if len(attrs) > 1:
        title += f", {attrs[1].title()}"
    bullets = [f"{a.capitalize()}: this {kind.head} is made to be {a}." for a in attrs[1:]]
    bullets.append(f"Satisfaction guaranteed: {brand} stands behind every {kind.head}.")
    description = (
        f"The {brand} {modifier} {kind.head} is a {attrs[0]} choice for everyday use. "
        f"Designed with care and tested for quality."
    )
    if rng.random() < CROSS_SELL_SHARE:  # listing noise: another type of the category named in the text
        other = rng.choice(_SAME_CATEGORY[kind.category])
        if other.query != kind.query:
            description += f" Pairs well with our {other.query}."
    price, price_range = draw_price(rng, *kind.price)
    reviews, rating = draw_reviews(rng, kind, attrs)
    path = " › ".join((CATEGORY_NAMES[kind.category], *kind.path))
    return Product(
        asin=_asin(seed, index),
        Title=title,
        Description=description,
        BulletPoints=bullets,
        Attributes=attrs,
        options=options,
        price=price,
        query=kind.query,
        product_category=path,
        category=kind.category,
        Reviews=reviews,
        Rating=rating,
        price_range=price_range,
    )


@lru_cache(maxsize=4)
def generated_catalog(size: int = DEFAULT_SIZE, seed: int = 0) -> Catalog:
    """`size` products; types are dealt round-robin over a seeded permutation so every type is represented."""
    if size < 1:
        raise ValueError("catalog size must be >= 1")
    order = list(TYPES)
    random.Random(stable_seed("webshop-types", seed)).shuffle(order)
    products = [generate_product(seed, i, order[i % len(order)], len(order)) for i in range(size)]
    return Catalog(products, source=f"generated:{seed}:{size}")


# ---- loader for the original files ---------------------------------------------------------------------------------
REQUIRED_FIELDS = ("asin", "name", "product_category", "query", "pricing")


class CatalogFormatError(ValueError):
    """The WebShop data file is missing or lacks the fields the env needs."""


def _prices(pricing: Any) -> list[float]:
    """WebShop's rule: split the pricing string on `$` and keep the parseable numbers (1 or 2 floats)."""
    out = []
    for part in str(pricing or "").split("$")[1:]:
        digits = "".join(c for c in part.strip().split(" ")[0] if c.isdigit() or c == ".").strip(".")
        try:
            out.append(float(digits))
        except ValueError:
            continue
    return out


def product_from_record(record: dict[str, Any], attributes: list[str] | None, rng: random.Random) -> Product:
    missing = [k for k in REQUIRED_FIELDS if k not in record]
    if missing:
        raise CatalogFormatError(f"product record {str(record.get('asin', '?'))[:20]!r} lacks fields {missing}")
    bullets = record.get("small_description") or []
    bullets = [bullets] if isinstance(bullets, str) else [str(b) for b in bullets]
    options: dict[str, list[str]] = {}
    for name, values in (record.get("customization_options") or {}).items():
        if values:
            options[str(name).lower()] = [str(v.get("value", "")).lower().replace("/", " | ") for v in values]
    prices = _prices(record.get("pricing"))
    price = prices[0] if len(prices) == 1 else (rng.uniform(prices[0], prices[1]) if len(prices) >= 2 else 100.0)
    return Product(
        asin=str(record["asin"]),
        Title=str(record["name"]),
        Description=str(record.get("full_description") or ""),
        BulletPoints=bullets,
        Attributes=list(attributes or ["DUMMY_ATTR"]),
        options=options,
        price=price,  # unrounded, as the original's loader keeps it
        query=str(record["query"]).lower().strip(),
        product_category=str(record["product_category"]),
        category=str(record.get("category", "")),
        price_range=(prices[0], prices[1]) if len(prices) >= 2 else None,
    )


def load_webshop(
    path: str | os.PathLike[str], attributes_path: str | os.PathLike[str] | None = None, seed: int = 0
) -> Catalog:
    """Load `items_shuffle*.json` (a JSON list) and, when given, `items_ins_v2*.json` (attributes per ASIN)."""
    file = Path(path)
    if file.is_dir():
        candidates = sorted(file.glob("items_shuffle*.json"))
        ins = sorted(file.glob("items_ins_v2*.json"))
        if not candidates:
            raise CatalogFormatError(f"{file}: no items_shuffle*.json in this folder")
        file, attributes_path = candidates[0], attributes_path or (ins[0] if ins else None)
    if not file.is_file():
        raise CatalogFormatError(f"{file}: not a file (set {DATA_ENV} to WebShop's items_shuffle*.json)")
    try:
        records = json.loads(file.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise CatalogFormatError(f"{file}: not readable JSON ({exc})") from exc
    if not isinstance(records, list) or not records or not all(isinstance(r, dict) for r in records):
        raise CatalogFormatError(f"{file}: expected a non-empty JSON list of product objects")
    attrs: dict[str, Any] = {}
    if attributes_path is not None:
        attrs = json.loads(Path(attributes_path).read_text(encoding="utf-8"))
    rng = random.Random(stable_seed("webshop-load", seed))
    products, seen = [], set()
    for record in records:
        product = product_from_record(record, (attrs.get(str(record.get("asin"))) or {}).get("attributes"), rng)
        if product.asin not in seen:
            seen.add(product.asin)
            products.append(product)
    return Catalog(products, source=str(file))


@lru_cache(maxsize=2)
def _cached_load(path: str) -> Catalog:
    return load_webshop(path)


def get_catalog(size: int = DEFAULT_SIZE, seed: int = 0, data: str | None = None) -> Catalog:
    """The catalog an env uses: the WebShop files at `data` (or $WEBSHOP_DATA) when set, else a generated one."""
    data = data or os.environ.get(DATA_ENV) or None
    return _cached_load(str(Path(data).resolve())) if data else generated_catalog(size, seed)
