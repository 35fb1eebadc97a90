"""The WebShop reward, term by term, pinned to the original's arithmetic (ENVS-NEXT §1.5)."""

import pytest

from rlvr_gym.envs.webshop.catalog import Product
from rlvr_gym.envs.webshop.matching import normalize_color, option_matches, token_set_score
from rlvr_gym.envs.webshop.reward import Goal, title_nouns, title_score, webshop_reward


def _product(**over):
    base = dict(
        asin="B000000001",
        Title="Acme Premium Sulfate Free Shampoo, Tea Tree",
        Description="A shampoo for dry hair.",
        BulletPoints=["Argan oil inside."],
        Attributes=["sulfate free", "tea tree"],
        options={"scent": ["citrus", "jasmine"]},
        price=20.0,
        query="shampoo",
        product_category="Beauty › Hair Care › Shampoo",
        category="beauty",
    )
    return Product(**{**base, **over})


def _goal(**over):
    base = dict(
        asin="B000000001",
        instruction="i need a sulfate free shampoo",
        attributes=("sulfate free",),
        options=(("scent", "citrus"),),
        price_upper=30.0,
        name="Acme Premium Sulfate Free Shampoo, Tea Tree",
        query="shampoo",
        product_category="Beauty › Hair Care › Shampoo",
    )
    return Goal(**{**base, **over})


def test_fuzzy_matching_is_thefuzz_exact():
    assert token_set_score("essential oil", "essential oils") == 96
    assert token_set_score("Tea-Tree", "tea tree") == 100  # default_process: case and punctuation
    assert token_set_score("café", "caf") == 100  # non-ASCII dropped as thefuzz's force_ascii does
    assert token_set_score("", "x") == 0
    assert normalize_color("navy blue") == "blue" and normalize_color("standard") == "tan"
    assert normalize_color(("color", "navy")) == "navy"  # tuples match elements, not substrings
    assert option_matches("large", ("size", "x-large"))  # the original's token-set quirk, kept
    assert not option_matches("citrus", ("scent", "jasmine"))


def test_full_marks_and_each_term():
    reward, parts = webshop_reward(_product(), {"scent": "citrus"}, _goal())
    assert reward == 1.0 and parts["r_type"] == 1.0 and parts["title_score"] == 1.0
    reward, parts = webshop_reward(_product(), {"scent": "jasmine"}, _goal())
    assert reward == pytest.approx(2 / 3) and parts["option_score"] == 0.0
    reward, parts = webshop_reward(_product(price=30.01), {"scent": "citrus"}, _goal())
    assert reward == pytest.approx(2 / 3) and parts["price_score"] == 0.0
    assert webshop_reward(_product(price=30.0), {"scent": "citrus"}, _goal())[0] == 1.0  # inclusive bound
    reward, parts = webshop_reward(
        _product(Attributes=["x"], Title="Acme Shampoo"),
        {"scent": "citrus"},
        _goal(attributes=("sulfate free", "Dry hair", "dry hair")),
    )
    assert parts["attribute_score"] == pytest.approx(1 / 3)  # substring test: text lower-cased, goal attr not


def test_r_type_branches():
    other = dict(query="hoodie", product_category="Fashion › Men › Hoodies")
    _, parts = webshop_reward(_product(**other, Title="Zed Shampoo Hoodie"), {}, _goal())
    assert parts["title_score"] == 0.5 and parts["r_type"] == 1.0  # title score > 0.2 is a match
    _, parts = webshop_reward(_product(**other, Title="Zed Hoodie"), {}, _goal())
    assert parts["title_score"] == 0.0 and parts["r_type"] == 0.0
    _, parts = webshop_reward(_product(Title="Zed Hoodie"), {}, _goal())
    assert parts["r_type"] == 0.0  # a zero title score wins even with query and category matching
    goal = _goal(name="Zed Hoodie Socks Dress Toothbrush Lipstick Shampoo Bookshelf Hoodie Dress Socks Sneakers")
    _, parts = webshop_reward(_product(**other), {}, goal)
    assert parts["title_score"] == pytest.approx(1 / 11) and parts["r_type"] == 0.1  # duplicates count below


def test_lexicon_noun_extractor_is_pinned():
    assert title_nouns("Acme Premium Sulfate Free Shampoo, Tea Tree") == ["shampoo", "tea"]  # "tea": green tea
    assert title_nouns("Zed Classic Crew Neck T-Shirt, 2 Pack") == ["shirt", "pack"]  # head noun of t-shirt
    assert title_score("Foo", "Acme Premium Gadget") == 0.2  # goal without nouns


def test_empty_goal_attributes_do_not_divide_by_zero():
    reward, parts = webshop_reward(_product(), {"scent": "citrus"}, _goal(attributes=()))
    assert reward == 1.0 and parts["attribute_score"] == 1.0
