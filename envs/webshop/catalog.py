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

from .lexicon import BRAND_PARTS, CATEGORY_NAMES, MODIFIERS, OPTION_VALUES, TYPES, ProductType
from .matching import option_matches

CATALOG_VERSION = 4  # bump when generation changes: it keys the on-disk index cache
OPTION_VALUES_PER_DIM = (3, 8)  # values a product offers per option dimension (fewer when the pool runs out)
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
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def price_text(self) -> str:
        return f"${self.price:.2f}"

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


def _price(rng: random.Random, low: float, high: float) -> float:
    mu, sigma = (math.log(low) + math.log(high)) / 2, (math.log(high) - math.log(low)) / 4
    value = min(max(rng.lognormvariate(mu, sigma), low * 0.6), high * 1.6)
    return round(math.floor(value) + rng.choice((0.99, 0.49, 0.95, 0.0)), 2)


@lru_cache(maxsize=64)
def option_pool(dim: str) -> tuple[tuple[str, ...], frozenset[tuple[str, str]]]:
    """A dimension's usable values and its confusable pairs, under WebShop's option score with tuple goals.

    A value the score cannot match even against its own goal `(dim, value)` (e.g. "blueberry", which
    `normalize_color` turns into "blue" on the purchased side only) is dropped; a pair is confusable when buying
    one satisfies a goal naming the other, so no product offers both.
    """
    usable = tuple(v for v in OPTION_VALUES[dim] if option_matches(v, (dim, v)))
    clash = frozenset(
        (a, b) for a in usable for b in usable if a != b and (option_matches(a, (dim, b)) or option_matches(a, b))
    )
    return usable, clash


def distinct_values(rng: random.Random, dim: str, k: int) -> list[str]:
    """Up to `k` option values of `dim`, no two of which the WebShop option score confuses."""
    pool, clash = option_pool(dim)
    chosen: list[str] = []
    for value in rng.sample(pool, min(len(pool), k + 2)):
        if all((value, other) not in clash and (other, value) not in clash for other in chosen):
            chosen.append(value)
        if len(chosen) == k:
            break
    return chosen


def generate_product(seed: int, index: int, kind: ProductType | None = None) -> Product:
    rng = random.Random(stable_seed("webshop-product", CATALOG_VERSION, seed, index))
    kind = kind or rng.choice(TYPES)
    brand, modifier = _brand(rng), rng.choice(MODIFIERS)
    attrs = rng.sample(kind.attributes, rng.randint(2, min(4, len(kind.attributes))))
    options = {dim: distinct_values(rng, dim, rng.randint(*OPTION_VALUES_PER_DIM)) for dim in kind.options}
    title = f"{brand} {modifier.title()} {attrs[0].title()} {kind.head.title()}"
    if len(attrs) > 1:
        title += f", {attrs[1].title()}"
    bullets = [f"{a.capitalize()}: this {kind.head} is made to be {a}." for a in attrs[1:]]
    bullets.append(f"Satisfaction guaranteed: {brand} stands behind every {kind.head}.")
    description = (
        f"The {brand} {modifier} {kind.head} is a {attrs[0]} choice for everyday use. "
        f"Designed with care and tested for quality."
    )
    path = " › ".join((CATEGORY_NAMES[kind.category], *kind.path))
    return Product(
        asin=_asin(seed, index),
        Title=title,
        Description=description,
        BulletPoints=bullets,
        Attributes=list(attrs),
        options={k: v for k, v in options.items() if v},
        price=_price(rng, *kind.price),
        query=kind.query,
        product_category=path,
        category=kind.category,
    )


@lru_cache(maxsize=4)
def generated_catalog(size: int = 1000, seed: int = 0) -> Catalog:
    """`size` products; types are dealt round-robin over a seeded permutation so every type is represented."""
    if size < 1:
        raise ValueError("catalog size must be >= 1")
    order = list(TYPES)
    random.Random(stable_seed("webshop-types", seed)).shuffle(order)
    products = [generate_product(seed, i, order[i % len(order)]) for i in range(size)]
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
        price=round(price, 2),
        query=str(record["query"]).lower().strip(),
        product_category=str(record["product_category"]),
        category=str(record.get("category", "")),
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


def get_catalog(size: int = 1000, seed: int = 0, data: str | None = None) -> Catalog:
    """The catalog an env uses: the WebShop files at `data` (or $WEBSHOP_DATA) when set, else a generated one."""
    data = data or os.environ.get(DATA_ENV) or None
    return _cached_load(str(Path(data).resolve())) if data else generated_catalog(size, seed)
