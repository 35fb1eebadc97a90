"""Viewer page load with 100,000 episodes, against the same pages over a 100-episode run in the same process.

Writes a synthetic run (real `Episode` records: one math turn each, a verdict with components, every 50th an
infrastructure error), indexes it (first start, then the cached start), and times the table page, a filtered and
sorted table page, and one episode page over HTTP (FastAPI's test client). Target: each page < 2 s at 100k.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import tempfile
import time
from pathlib import Path

from fastapi.testclient import TestClient

from rlvr_gym.types import Episode, EpisodeError, ErrorKind, Message, Turn, Verdict
from rlvr_gym.viewer.app import create_app

PAGES = {"table": "/run/0", "filtered": "/run/0?outcome=scored&min_reward=0.5&sort=-seconds",
         "last page": "/run/0?page=100000", "episode": "/run/0/episode/{mid}"}


def write_run(path: Path, n: int) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w") as f:
        for i in range(n):
            ok = i % 3 != 0
            error = EpisodeError(kind=ErrorKind.POLICY_ERROR, message="down") if i % 50 == 49 else None
            ep = Episode(episode_id=f"rlvr/Math-v0|index={i}|s0", env_id="rlvr/Math-v0", task_id=f"math/train/{i}",
                         group_id=f"g{i}", turns=[Turn(index=0, observation=[Message(role="user", content=f"{i}+1=?")],
                                                       action=f"\\boxed{{{i + 1 if ok else i}}}")],
                         verdict=None if error else Verdict(reward=float(ok), passed=ok,
                                                            components={"correct": float(ok), "format": 1.0}),
                         error=error, timings={"total_s": (i % 97) / 1000})
            f.write(ep.model_dump_json() + "\n")


def time_pages(run: Path, repeats: int) -> tuple[float, float, dict[str, float]]:
    t0 = time.perf_counter()
    client = TestClient(create_app([run]), base_url="http://127.0.0.1")
    first = time.perf_counter() - t0
    t0 = time.perf_counter()
    app = create_app([run])
    client = TestClient(app, base_url="http://127.0.0.1")
    cached = time.perf_counter() - t0
    mid = sum(1 for _ in run.open()) // 2
    out = {}
    for name, url in PAGES.items():
        samples = []
        for _ in range(repeats):
            app.state.clear_cache()  # time the filter pass itself, not the viewer's cache of it
            t0 = time.perf_counter()
            response = client.get(url.format(mid=mid))
            samples.append(time.perf_counter() - t0)
            assert response.status_code == 200, (url, response.status_code)
        out[name] = statistics.median(samples)
    return first, cached, out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--episodes", type=int, default=100_000)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        os.environ["RLVR_GYM_CACHE"] = str(Path(tmp) / "cache")
        small, big = Path(tmp) / "small" / "episodes.jsonl", Path(tmp) / "big" / "episodes.jsonl"
        write_run(small, 100)
        write_run(big, args.episodes)
        _, _, base = time_pages(small, args.repeats)
        first, cached, pages = time_pages(big, args.repeats)
    print(f"{args.episodes} episodes (load average {os.getloadavg()[0]:.1f}); index: first start {first:.2f} s, "
          f"cached start {cached:.2f} s")
    print(f"{'page':12s} {'100 eps (ms)':>13s} {f'{args.episodes} eps (ms)':>16s} {'ratio':>7s}")
    for name in PAGES:
        print(f"{name:12s} {base[name] * 1000:13.1f} {pages[name] * 1000:16.1f} {pages[name] / base[name]:7.1f}x")
    print(json.dumps({"benchmark": "viewer_load", "episodes": args.episodes, "index_first_s": first,
                      "index_cached_s": cached, "page_s": pages, "page_s_100": base,
                      "ratio_vs_100": {k: pages[k] / base[k] for k in PAGES},
                      "under_2s": all(v < 2.0 for v in pages.values())}))


if __name__ == "__main__":
    main()
