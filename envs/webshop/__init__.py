"""WebShop: a seeded shop (catalog, BM25 search, pages) played as a text env or served as a web site.
Registration reads no data; the catalog and index are built on first use."""

from __future__ import annotations


def register_envs() -> None:
    from rlvr_gym import register

    register(
        "rlvr/WebShop-v0",
        "rlvr_gym.envs.webshop.env:WebShopEnv",
        family="webshop",
        description="WebShop-style shopping: search[...]/click[...] over a generated catalog (or the original "
        "files via WEBSHOP_DATA), exact WebShop reward; kwargs split, seed, catalog_size, catalog_seed, data, "
        "engine (lucene|bm25s|tantivy), observation_mode (text|text_rich|html|url), goal_style (synthetic|human)",
    )
