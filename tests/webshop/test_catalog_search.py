"""Catalog generation and loading, and the two BM25 engines."""

import json
import statistics
import subprocess
import sys

import pytest

from rlvr_gym.envs.webshop.catalog import CatalogFormatError, generated_catalog, get_catalog, load_webshop
from rlvr_gym.envs.webshop.search import BM25sEngine, TantivyEngine, analyze, get_engine


def test_generated_catalog_is_deterministic_and_webshop_shaped():
    a = generated_catalog(1000, 0)
    assert len(a) == 1000 and len(a.by_asin) == 1000
    assert a.digest == generated_catalog.__wrapped__(1000, 0).digest
    assert generated_catalog.__wrapped__(1000, 1).digest != a.digest
    p = a.products[0]
    assert len(p.asin) == 10 and p.Title and p.BulletPoints and p.Attributes and p.price > 0
    assert " › " in p.product_category and p.query
    assert all(v == v.lower() for vals in p.options.values() for v in vals)
    assert len({q.query for q in a.products}) >= 100


def test_catalog_digest_is_the_same_in_another_process():
    code = "from rlvr_gym.envs.webshop.catalog import generated_catalog as g; print(g(300, 5).digest)"
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=120,
        env={"PYTHONHASHSEED": "7", "PATH": ""},
    ).stdout.strip()
    assert out == generated_catalog(300, 5).digest


def _write_webshop_files(tmp_path):
    items = [
        {
            "asin": "B000000001",
            "name": "Acme Sulfate Free Shampoo",
            "full_description": "A gentle shampoo.",
            "small_description": ["paraben free formula"],
            "pricing": "$12.99",
            "images": [],
            "product_category": "Beauty › Hair Care › Shampoo",
            "query": "shampoo",
            "category": "beauty",
            "customization_options": {"Scent": [{"value": "Citrus", "image": None}, {"value": "Rose/Mint"}]},
        },
        {
            "asin": "B000000002",
            "name": "Zed Hoodie",
            "full_description": "Warm.",
            "small_description": "cotton",
            "pricing": "$20.00 - $30.00",
            "images": [],
            "product_category": "Fashion › Men › Hoodies",
            "query": "hoodie",
            "category": "fashion",
            "customization_options": None,
        },
    ]
    (tmp_path / "items_shuffle_1000.json").write_text(json.dumps(items))
    (tmp_path / "items_ins_v2_1000.json").write_text(json.dumps({"B000000001": {"attributes": ["sulfate free"]}}))
    return tmp_path


def test_loader_reads_original_format(tmp_path):
    catalog = load_webshop(_write_webshop_files(tmp_path))
    shampoo, hoodie = catalog.by_asin["B000000001"], catalog.by_asin["B000000002"]
    assert shampoo.options == {"scent": ["citrus", "rose | mint"]} and shampoo.price == 12.99
    assert shampoo.Attributes == ["sulfate free"] and hoodie.Attributes == ["DUMMY_ATTR"]
    assert 20.0 <= hoodie.price <= 30.0 and hoodie.BulletPoints == ["cotton"]


def test_loader_env_var_and_clear_errors(tmp_path, monkeypatch):
    monkeypatch.setenv("WEBSHOP_DATA", str(_write_webshop_files(tmp_path)))
    assert len(get_catalog()) == 2
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps([{"asin": "X", "name": "n"}]))
    with pytest.raises(CatalogFormatError, match="lacks fields"):
        load_webshop(bad)
    bad.write_text("{not json")
    with pytest.raises(CatalogFormatError, match="not readable JSON"):
        load_webshop(bad)
    with pytest.raises(CatalogFormatError, match="WEBSHOP_DATA"):
        load_webshop(tmp_path / "missing.json")


def test_analyzer_is_linear_and_porter_stems():
    assert analyze("Running SHOES, berries; glass") == ["run", "shoe", "berri", "glass"]
    assert analyze("[" * 1_000_000) == []


def test_tantivy_index_is_built_once_per_catalog(tmp_path):
    catalog = generated_catalog(200, 3)
    first = TantivyEngine(catalog, tmp_path)
    second = TantivyEngine(catalog, tmp_path)
    assert first.built and not second.built
    assert first.search("sulfate free shampoo") == second.search("sulfate free shampoo")
    assert second.search("") == [] and second.search('( ] : "') == []
    assert second.search("AND OR NOT shampoo")  # query syntax words are plain terms, never parsed


def _queries(catalog, n):
    out = []
    for i, p in enumerate(catalog.products[:n]):
        attr = p.Attributes[i % len(p.Attributes)]
        out.append(f"{attr} {p.query}" if i % 2 else p.Title.lower())
    return out


def test_lucene_and_bm25s_agree_on_top10():
    """Two implementations of the original's BM25 (k1 0.9, b 0.4) agree; bm25s does not quantise lengths."""
    catalog = generated_catalog(1000, 0)
    lucene, bm25 = get_engine(catalog, "lucene"), BM25sEngine(catalog)
    overlaps, identical = [], 0
    for q in _queries(catalog, 200):
        a, b = lucene.search(q)[:10], bm25.search(q)[:10]
        overlaps.append(len(set(a) & set(b)) / max(1, len(a)))
        identical += set(a) == set(b)
    assert statistics.fmean(overlaps) >= 0.97
    assert identical / 200 >= 0.85


def test_fieldnorm_table_matches_tantivy():
    """The padding table must be the lengths tantivy encodes exactly, or the two engines drift apart."""
    import tantivy

    from rlvr_gym.envs.webshop.search import FIELDNORMS

    builder = tantivy.SchemaBuilder()
    builder.add_text_field("c", tokenizer_name="whitespace", index_option="freq")
    builder.add_unsigned_field("n", stored=True)
    schema = builder.build()
    index = tantivy.Index(schema)
    writer = index.writer(heap_size=50_000_000, num_threads=1)
    for n in range(1, 320):
        writer.add_document(_doc(tantivy, n))
    writer.commit()
    writer.wait_merging_threads()
    index.reload()
    searcher = index.searcher()
    buckets: dict[float, int] = {}
    for score, address in searcher.search(tantivy.Query.term_query(schema, "c", "x"), limit=400).hits:
        n = searcher.doc(address).get_first("n")
        buckets[score] = min(buckets.get(score, n), n)
    assert sorted(buckets.values()) == [v for v in FIELDNORMS if 1 <= v < 320]


def _doc(tantivy, n):
    doc = tantivy.Document()
    doc.add_text("c", "x " + "y " * (n - 1))
    doc.add_unsigned("n", n)
    return doc
