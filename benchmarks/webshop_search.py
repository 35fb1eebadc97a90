"""The default WebShop search engine (`lucene`: the original's BM25, k1 0.9 / b 0.4) at scale: index build, query
latency, and top-10 agreement with bm25s at the same parameters, on one generated catalog.

    .venv/bin/python benchmarks/webshop_search.py --size 100000 --queries 300
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from webshop import pct, queries_for  # noqa: E402  (the 100k benchmark's query mix and percentile)


def timed(engine, queries: list[str]) -> tuple[list[float], list[list[str]]]:  # type: ignore[no-untyped-def]
    times, results = [], []
    for q in queries:
        t0 = time.perf_counter()
        results.append(engine.search(q))
        times.append(time.perf_counter() - t0)
    return times, results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=100_000)
    parser.add_argument("--queries", type=int, default=300)
    parser.add_argument("--skip-bm25s", action="store_true")
    args = parser.parse_args()

    from rlvr_gym.envs.webshop.catalog import generated_catalog
    from rlvr_gym.envs.webshop.search import BM25sEngine, LuceneEngine

    t0 = time.perf_counter()
    catalog = generated_catalog(args.size, 0)
    out: dict[str, float | int | str] = {"benchmark": "webshop_search", "products": args.size}
    out["generate_s"] = round(time.perf_counter() - t0, 2)
    t0 = time.perf_counter()
    lucene = LuceneEngine(catalog)
    out["lucene_build_s"] = round(time.perf_counter() - t0, 2)
    queries = queries_for(catalog, args.queries)
    timed(lucene, queries[:20])  # warm
    times, results = timed(lucene, queries)
    out["lucene_query_p50_ms"] = round(pct(times, 0.5) * 1e3, 3)
    out["lucene_query_p99_ms"] = round(pct(times, 0.99) * 1e3, 3)
    if not args.skip_bm25s:
        t0 = time.perf_counter()
        bm25 = BM25sEngine(catalog)
        out["bm25s_build_s"] = round(time.perf_counter() - t0, 2)
        _, other = timed(bm25, queries)
        pairs = list(zip(results, other, strict=True))
        out["top10_identical"] = round(statistics.fmean(set(a[:10]) == set(b[:10]) for a, b in pairs), 4)
        out["top10_overlap"] = round(statistics.fmean(len(set(a[:10]) & set(b[:10])) / 10 for a, b in pairs), 4)
    print(json.dumps(out))


if __name__ == "__main__":
    main()
