"""WebShop semantics from the spec's facts (ENVS-NEXT §1.1-1.5), one test per point; each names the case the
previous version got wrong (38-colour set, 40 types, 1k products, empty reviews, k1 1.2 / b 0.75, 5 templates,
option names unsorted, no html mode)."""

import math
import random
import re
import statistics
from collections import Counter

import pytest

from rlvr_gym import make
from rlvr_gym.envs.webshop.catalog import DEFAULT_SIZE, Catalog, Product, generated_catalog, load_webshop
from rlvr_gym.envs.webshop.lexicon import (
    CATEGORY_ATTRIBUTES,
    COLOR_SET,
    OPTIONS,
    SIZE_OPTION_KEYS,
    SIZE_SET,
    TYPES,
    is_size,
)
from rlvr_gym.envs.webshop.matching import normalize_color, option_matches
from rlvr_gym.envs.webshop.reward import Goal, webshop_reward
from rlvr_gym.envs.webshop.search import (
    K1,
    LENGTH_TABLE,
    STOP_WORDS,
    B,
    LuceneEngine,
    analyze,
    document_terms,
    stored_length,
)
from rlvr_gym.envs.webshop.tasks import TEMPLATES, WebShopTasks, make_goal, price_upper


# ---- vocabularies ---------------------------------------------------------------------------------------------------
def test_color_set_is_the_originals_102_in_order():
    assert len(COLOR_SET) == 102 and len(set(COLOR_SET)) == 102
    assert list(COLOR_SET) == sorted(COLOR_SET)  # upstream's list is alphabetical; the first substring wins
    assert {"camo", "brown", "midnight", "mushroom", "leopard", "multicolor", "stonewash"} <= set(COLOR_SET)


def test_normalize_color_cases_the_38_colour_set_got_wrong():
    # the first COLOR_SET entry contained in the value wins, in list order
    assert normalize_color("dark brown") == "brown"  # was "dark brown": neither word was in the set
    assert normalize_color("camo green") == "camo"  # was "green"
    assert normalize_color("midnight navy") == "midnight"  # was "navy"
    assert normalize_color("heather grey") == "grey"  # "grey" precedes "heather"
    assert normalize_color("navy blue") == "blue" and normalize_color("standard") == "tan"
    # so the option score changes: buying "dark brown" satisfies a goal asking for brown, as in the original
    assert option_matches("dark brown", ("color", "brown"))
    assert not option_matches("camo green", ("color", "green"))  # "camo" now, not "green"


def test_size_vocabulary_is_the_originals():
    assert SIZE_SET == (
        "xx-large", "3x-large", "4x-large", "5x-large", "x-large", "x-small",
        "medium", "large", "small", "queen", "twin", "full", "king", "one size", "pack",
    )  # fmt: skip
    clothing = OPTIONS["size"][1]
    assert set(clothing) <= set(SIZE_SET)
    for key in ("bed", "pack", "rug", "panel", "screen", "length"):  # every other sized vocabulary reads as a size
        assert all(is_size(v) for v in OPTIONS[key][1]), key
    assert set(SIZE_OPTION_KEYS) >= {"size", "shoe", "bed", "pack"}


def test_product_types_and_attribute_sets_per_category():
    assert len(TYPES) >= 100 and len({t.query for t in TYPES}) == len(TYPES)
    per_category = Counter(t.category for t in TYPES)
    assert set(per_category) == set(CATEGORY_ATTRIBUTES) == {"beauty", "grocery", "fashion", "furniture", "electronics"}
    assert min(per_category.values()) >= 15
    for attrs in [*CATEGORY_ATTRIBUTES.values(), *(t.attributes for t in TYPES)]:
        assert all(a == a.lower() and 1 <= len(a.split()) <= 4 for a in attrs)  # WebShop's bigram style


# ---- catalog ---------------------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def catalog():
    return generated_catalog(DEFAULT_SIZE, 0)


def test_default_catalog_is_10k_over_every_type(catalog):
    assert DEFAULT_SIZE == 10_000 and len(catalog) == 10_000
    assert {p.query for p in catalog.products} == {t.query for t in TYPES}
    category_attrs = {a for attrs in CATEGORY_ATTRIBUTES.values() for a in attrs}
    assert statistics.fmean(any(a in category_attrs for a in p.Attributes) for p in catalog.products) > 0.9


def test_prices_are_right_skewed_with_listed_ranges(catalog):
    prices = [p.price for p in catalog.products]
    assert statistics.fmean(prices) > statistics.median(prices)  # lognormal: mean above median
    ranged = [p for p in catalog.products if p.price_range]
    assert 0.1 < len(ranged) / len(catalog) < 0.2
    for p in ranged:
        low, high = p.price_range
        assert low <= p.price <= high and p.price_text == f"${low:.2f} to ${high:.2f}"


def test_reviews_are_heavy_tailed_and_mostly_positive(catalog):
    rated = [p for p in catalog.products if p.Rating is not None]
    assert 0.8 < len(rated) / len(catalog) < 0.95  # the rest show "N.A." as every original product does
    assert 3.7 < statistics.fmean(p.Rating for p in rated) < 4.4
    stars = Counter(r["score"] for p in rated for r in p.Reviews)
    assert stars[5] > stars[4] > stars[2] and stars[1] > stars[2]  # J-shaped
    assert all(1 <= len(p.Reviews) <= 5 for p in rated)


def test_loader_keeps_a_listed_range_and_an_unrounded_price(tmp_path):
    record = {
        "asin": "B000000009",
        "name": "Zed Hoodie",
        "pricing": "$20.00 - $30.00",
        "product_category": "Fashion › Men › Hoodies",
        "query": "hoodie",
    }
    (tmp_path / "items.json").write_text(__import__("json").dumps([record]))
    product = load_webshop(tmp_path / "items.json").products[0]
    assert product.price_range == (20.0, 30.0) and product.price_text == "$20.00 to $30.00"
    assert 20.0 <= product.price <= 30.0 and product.Rating is None and product.Reviews == []


def test_reviews_show_on_the_page_and_never_pay():
    env = make("rlvr/WebShop-v0", catalog_size=1000)
    env.reset(options={"task_index": 0})
    goal_product = env.session.catalog.by_asin[env.task.ground_truth["asin"]]
    plan = env.task.reference_actions
    for action in plan[:-1]:
        env.step_result(action)
    assert f"Rating: {goal_product.rating_text}" in env.observe()
    env.step_result("click[Reviews]")
    for review in goal_product.Reviews:
        assert review["body"] in env.observe()
    # an attribute named only in a review is not the product's: the substring test reads title, bullets, text
    product = Product(**{**goal_product.__dict__, "Reviews": [{"score": 5, "title": "t", "body": "very zesty"}]})
    goal = Goal.from_dict({**env.task.ground_truth, "attributes": ["very zesty"]})
    assert webshop_reward(product, {}, goal)[1]["attribute_score"] == 0.0


# ---- search ----------------------------------------------------------------------------------------------------------
def _doc(i: int, title: str) -> Product:
    return Product(
        asin=f"B{i:09d}", Title=title, Description="", BulletPoints=[], Attributes=["x"], options={}, price=1.0,
        query="q", product_category="a › b", category="c",
    )  # fmt: skip


def test_bm25_parameters_are_anserinis_and_change_the_ranking():
    assert (K1, B) == (0.9, 0.4)
    filler = " ".join(f"w{j}" for j in range(30))
    docs = [_doc(0, "widget gadget"), _doc(1, "widget widget " + " ".join(f"z{j}" for j in range(20)))]
    catalog = Catalog([*docs, _doc(2, filler), _doc(3, filler)], source="test")
    # b = 0.4 penalises length less: the longer document with two hits wins; k1 1.2 / b 0.75 ranked it second
    assert LuceneEngine(catalog).search("widget")[:2] == ["B000000001", "B000000000"]
    assert LuceneEngine(catalog, 1.2, 0.75).search("widget")[:2] == ["B000000000", "B000000001"]


def _reference_scores(catalog: Catalog, query: str) -> list[tuple[float, int]]:
    """Lucene 8's BM25 written out from the spec: idf, one-byte stored lengths, exact average, count boosts."""
    docs = [Counter(document_terms(p)) for p in catalog.products]
    lengths = [sum(d.values()) for d in docs]
    avgdl, n = sum(lengths) / len(docs), len(docs)
    scores = []
    for i, d in enumerate(docs):
        s = 0.0
        for term, count in Counter(analyze(query)).items():
            df = sum(term in x for x in docs)
            if term in d:
                idf = math.log(1 + (n - df + 0.5) / (df + 0.5))
                s += count * idf * d[term] / (d[term] + K1 * (1 - B + B * stored_length(lengths[i]) / avgdl))
        if s > 0:
            scores.append((s, i))
    return sorted(scores, key=lambda x: (-x[0], x[1]))


def test_lucene_engine_is_the_bm25_formula():
    catalog = generated_catalog(300, 9)
    engine = LuceneEngine(catalog)
    rng = random.Random(0)
    for p in rng.sample(catalog.products, 12):
        query = f"{p.Attributes[0]} {p.query} {p.query}"  # a repeated term weighs twice
        expected = _reference_scores(catalog, query)[:10]
        got = engine.scored(analyze(query), 10)
        assert [i for _, i in got] == [i for _, i in expected]
        assert [s for s, _ in got] == pytest.approx([s for s, _ in expected], rel=1e-5)


def test_stored_lengths_round_down_like_lucenes_byte_norm():
    assert LENGTH_TABLE[:41] == tuple(range(41)) and LENGTH_TABLE[41:44] == (42, 44, 46)
    assert [stored_length(n) for n in (40, 41, 43, 57, 59, 100)] == [40, 40, 42, 56, 56, 96]


def test_analyzer_is_lucenes_english_pipeline_shape():
    assert len(STOP_WORDS) == 33 and {"with", "and", "the", "for", "a"} <= STOP_WORDS
    assert analyze("I need the Women's T-Shirt with 3.4 fl oz, and price lower than 50.00 dollars") == [
        "i", "need", "women", "t", "shirt", "3.4", "fl", "oz", "price", "lower", "than", "50.00", "dollar",
    ]  # fmt: skip


# ---- goals -----------------------------------------------------------------------------------------------------------
def test_goal_options_are_sorted_by_name_as_in_the_original():
    product = _doc(5, "Zed Hoodie")
    product.options = {"size": ["small", "medium"], "color": ["black", "red"]}
    product.Attributes = ["fleece lined"]
    goal = make_goal(product, random.Random(1))
    assert [n for n, _ in goal.options] == ["color", "size"]  # the product lists size first
    assert re.search(r" with color: (black|red), and size: (small|medium)(, and price lower than \d+\.00 dollars)?$",
                     goal.instruction)  # fmt: skip


def test_price_bound_is_the_originals_rule():
    rng = random.Random(0)
    for price, allowed in ((19.99, {30.0, 40.0, 50.0}), (20.0, {40.0, 50.0, 60.0}), (985.0, {1e6})):
        assert {price_upper(price, rng) for _ in range(200)} == allowed  # larger of 2 among the first 4 steps


def test_instructions_paraphrase_in_the_originals_style():
    tasks = WebShopTasks(split="train", catalog_size=1000)
    texts = [tasks.task(i).metadata["instruction"] for i in range(120)]
    assert all(t == t.lower() and not t.endswith(".") for t in texts)
    openings = {" ".join(t.split()[:2]) for t in texts}
    assert len(TEMPLATES) >= 20 and len(openings) >= 10  # the old 5 templates had 5 openings


# ---- observation modes -----------------------------------------------------------------------------------------------
def test_html_mode_renders_the_same_pages_and_pays_the_same():
    env = make("rlvr/WebShop-v0", catalog_size=1000, observation_mode="html", show_actions=False)
    obs, _ = env.reset(options={"task_index": 4})
    assert "<input id='search_input' name='search_query'" in obs[0]["content"]
    result = None
    for action in env.task.reference_actions:
        result = env.step_result(action)
        text = result.observation[0].text()
        if env.session.kind == "item":
            assert "type='radio'" in text and "class='btn'" in text
    assert result.terminated and result.reward == 1.0
    assert "<div id='reward'><pre data-reward='1.0'>1.0000</pre></div>" in text


def test_no_value_is_offered_in_two_option_groups(catalog):
    """One clickable per value: a value in two groups (e.g. "walnut" colour and material) left one group unsettable
    (the text env maps a clicked value to its last group, as the original's `text_to_clickable` dict does)."""
    for p in catalog.products:
        values = [v for vs in p.options.values() for v in vs]
        assert len(values) == len(set(values)), p.asin
    for p in catalog.products:
        assert len(set(p.product_category.split(" › "))) == len(p.product_category.split(" › "))  # no repeated level


def test_porter_stemming_as_lucenes_filter():
    """Porter's own examples (1980 paper) and the reference C version's departures; the old plural-only stemmer
    kept "running" apart from "run" and "adjustable" apart from "adjust"."""
    from rlvr_gym.envs.webshop.porter import porter_stem

    examples = {
        "caresses": "caress", "ponies": "poni", "agreed": "agre", "motoring": "motor", "hopping": "hop",
        "filing": "file", "happy": "happi", "relational": "relat", "conditional": "condit", "digitizer": "digit",
        "vietnamization": "vietnam", "hopefulness": "hope", "sensibiliti": "sensibl", "triplicate": "triplic",
        "electrical": "electr", "adoption": "adopt", "bowdlerize": "bowdler", "controll": "control",
        "conformabli": "conform", "archaeology": "archaeolog", "as": "as",
    }  # fmt: skip
    assert {w: porter_stem(w) for w in examples} == examples
    assert analyze("running adjustable") == analyze("run adjust") == ["run", "adjust"]


def test_human_goals_compare_option_values_alone():
    """The original's human goals hold `instruction_options` as plain values; synthetic goals hold (name, value)
    tuples scored on their string form. Buying "x-large" satisfies a human goal for "large" (token-set subset)
    but not a synthetic one ("size large" vs "x large")."""
    product = _doc(6, "Zed Hoodie")
    base = dict(asin=product.asin, instruction="i need a hoodie", attributes=(), options=(("size", "large"),))
    base |= dict(price_upper=10.0, name="Zed Hoodie", query="q", product_category="a › b")
    synthetic, human = Goal(**base), Goal(**base, option_form="values")
    assert webshop_reward(product, {"size": "x-large"}, synthetic)[1]["option_score"] == 0.0
    assert webshop_reward(product, {"size": "x-large"}, human)[1]["option_score"] == 1.0
    assert Goal.from_dict(human.as_dict()) == human


def test_human_style_tasks_weave_options_into_the_sentence():
    env = make("rlvr/WebShop-v0", catalog_size=1000, goal_style="human")
    for i in range(10):
        env.reset(options={"task_index": i})
        truth = env.task.ground_truth
        assert truth["option_form"] == "values" and ": " not in truth["instruction"]
        assert all(value in truth["instruction"] for _, value in truth["options"])
        result = None
        for action in env.task.reference_actions:
            result = env.step_result(action)
        assert result.reward == 1.0


def test_url_mode_follows_the_originals_routes():
    env = make("rlvr/WebShop-v0", catalog_size=1000, observation_mode="url", show_actions=False)
    obs, _ = env.reset(options={"task_index": 4})
    assert obs[0]["content"].endswith("http://127.0.0.1:3000/episode")
    seen = []
    for action in env.task.reference_actions:
        seen.append(env.step_result(action).observation[0].text().split("/")[3])
        if env.session.kind == "item":
            env.step_result("click[Features]")
            assert "/item_sub_page/episode/" in env.observe() and "/Features/" in env.observe()
            env.step_result("click[< Prev]")
    assert seen[0] == "search_results" and seen[-1] == "done" and "item_page" in seen
    assert "%27" in env.observe()  # the options dict literal, quoted
