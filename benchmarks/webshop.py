"""WebShop at scale: catalog generation, index build, query latency (the env's default `lucene` engine, tantivy and
the bm25s baseline measured in the same run), top-10 agreement, and text-env step latency, on one generated catalog.

Agreement is measured between the two engines that score with the same BM25 (the original's Lucene formula, k1 0.9,
b 0.4): `lucene` and bm25s. tantivy cannot set k1/b (its 1.2/0.75 are fixed), so its result lists are expected to
differ and are not compared.

    .venv/bin/python benchmarks/webshop.py                 # 100,000 products (targets: step p50 < 5 ms, query p99 < 10 ms)
    .venv/bin/python benchmarks/webshop.py --size 5000 --queries 100 --episodes 10   # quick

The tantivy index is built into a fresh temporary folder (so the build is timed), then reopened from disk (what a
second process pays). Prints a table and one JSON line.
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from pathlib import Path


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))]


def queries_for(catalog, n: int) -> list[str]:
    step = max(1, len(catalog.products) // n)
    out = []
    for i, product in enumerate(catalog.products[::step][:n]):
        attr = product.Attributes[i % len(product.Attributes)]
        out.append([product.Title.lower(), f"{attr} {product.query}", f"{product.query} {attr} cheap"][i % 3])
    return out


def timed_queries(engine, queries: list[str]) -> tuple[list[float], list[list[str]]]:
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
    parser.add_argument("--episodes", type=int, default=30)
    parser.add_argument("--skip-bm25s", action="store_true", help="skip the bm25s baseline (saves its build time)")
    args = parser.parse_args()

    from rlvr_gym import make
    from rlvr_gym.envs.webshop import search
    from rlvr_gym.envs.webshop.catalog import generated_catalog

    t0 = time.perf_counter()
    catalog = generated_catalog(args.size, 0)
    generate_s = time.perf_counter() - t0

    with tempfile.TemporaryDirectory() as tmp:
        t0 = time.perf_counter()
        search.TantivyEngine(catalog, Path(tmp))
        build_s = time.perf_counter() - t0
        t0 = time.perf_counter()
        tantivy = search.TantivyEngine(catalog, Path(tmp))
        reopen_s = time.perf_counter() - t0
        queries = queries_for(catalog, args.queries)
        timed_queries(tantivy, queries[:20])  # warm
        t_times, t_results = timed_queries(tantivy, queries)

        t0 = time.perf_counter()
        lucene = search.LuceneEngine(catalog)
        l_build_s = time.perf_counter() - t0
        timed_queries(lucene, queries[:20])  # warm
        l_times, l_results = timed_queries(lucene, queries)

        b_build_s = b_p50 = b_p99 = agreement = overlap = float("nan")
        if not args.skip_bm25s:
            t0 = time.perf_counter()
            bm25 = search.BM25sEngine(catalog)
            b_build_s = time.perf_counter() - t0
            b_times, b_results = timed_queries(bm25, queries)
            b_p50, b_p99 = pct(b_times, 0.5), pct(b_times, 0.99)
            same = [set(a[:10]) == set(b[:10]) for a, b in zip(l_results, b_results, strict=True)]
            agreement = sum(same) / len(same)
            overlap = statistics.fmean(
                len(set(a[:10]) & set(b[:10])) / max(1, len(a[:10])) for a, b in zip(l_results, b_results, strict=True)
            )

    # Text env on the same catalog (its own cached index under the cache root).
    env = make("rlvr/WebShop-v0", catalog_size=args.size)
    step_times: dict[str, list[float]] = {"search": [], "click": []}
    rewards = []
    for index in range(args.episodes):
        env.reset(options={"task_index": index})
        for action in env.task.reference_actions:
            t0 = time.perf_counter()
            result = env.step_result(action)
            step_times["search" if action.startswith("search") else "click"].append(time.perf_counter() - t0)
        rewards.append(result.reward)
    all_steps = step_times["search"] + step_times["click"]

    t_p50, t_p99 = pct(t_times, 0.5), pct(t_times, 0.99)
    l_p50, l_p99 = pct(l_times, 0.5), pct(l_times, 0.99)
    print(f"catalog: {args.size} products generated in {generate_s:.1f} s")
    print(
        f"lucene : index build {l_build_s:.1f} s, query p50 {l_p50 * 1e3:.2f} ms p99 {l_p99 * 1e3:.2f} ms "
        f"(the env's default engine, k1 0.9 b 0.4)"
    )
    print(
        f"tantivy: index build {build_s:.1f} s, reopen {reopen_s * 1e3:.0f} ms, "
        f"query p50 {t_p50 * 1e3:.2f} ms p99 {t_p99 * 1e3:.2f} ms over {len(queries)} queries (k1 1.2 b 0.75)"
    )
    if not args.skip_bm25s:
        print(
            f"bm25s  : index build {b_build_s:.1f} s, query p50 {b_p50 * 1e3:.2f} ms p99 {b_p99 * 1e3:.2f} ms "
            f"(tantivy is {b_p50 / t_p50:.1f}x faster at p50)"
        )
        print(f"top-10 agreement lucene vs bm25s: identical sets {agreement:.1%}, mean overlap {overlap:.1%}")
    print(
        f"env step: p50 {pct(all_steps, 0.5) * 1e3:.2f} ms (search p50 {pct(step_times['search'], 0.5) * 1e3:.2f} "
        f"ms, click p50 {pct(step_times['click'], 0.5) * 1e3:.2f} ms), oracle reward mean "
        f"{statistics.fmean(rewards):.3f} over {len(rewards)} episodes"
    )
    result = {
        "benchmark": "webshop",
        "products": args.size,
        "generate_s": round(generate_s, 2),
        "lucene_build_s": round(l_build_s, 2),
        "lucene_query_p50_ms": round(l_p50 * 1e3, 3),
        "lucene_query_p99_ms": round(l_p99 * 1e3, 3),
        "tantivy_build_s": round(build_s, 2),
        "tantivy_reopen_ms": round(reopen_s * 1e3, 1),
        "tantivy_query_p50_ms": round(t_p50 * 1e3, 3),
        "tantivy_query_p99_ms": round(t_p99 * 1e3, 3),
        "bm25s_build_s": round(b_build_s, 2),
        "bm25s_query_p50_ms": round(b_p50 * 1e3, 3),
        "bm25s_query_p99_ms": round(b_p99 * 1e3, 3),
        "tantivy_vs_bm25s_p50_speedup": round(b_p50 / t_p50, 2),
        "lucene_vs_bm25s_top10_identical": round(agreement, 4),
        "lucene_vs_bm25s_top10_overlap": round(overlap, 4),
        "env_step_p50_ms": round(pct(all_steps, 0.5) * 1e3, 3),
        "env_step_p99_ms": round(pct(all_steps, 0.99) * 1e3, 3),
        "oracle_mean_reward": round(statistics.fmean(rewards), 4),
    }
    print(json.dumps(result))


if __name__ == "__main__":
    main()
