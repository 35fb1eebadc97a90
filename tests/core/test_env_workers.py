"""The env-call worker threads: GIL-bound calls stay on a few threads however many are queued, blocked calls get
threads of their own, and a dataset env built on many threads at once parses its files once."""

from __future__ import annotations

import asyncio
import json
import threading
import time
from concurrent.futures import ThreadPoolExecutor

from rlvr_gym.workers import EnvWorkers


def test_fast_cpu_calls_do_not_start_a_thread_per_call():
    async def main() -> int:
        workers = EnvWorkers(asyncio.get_running_loop(), threads=516)
        try:
            futures = [workers.submit(lambda: sum(range(2000))) for _ in range(5000)]
            await asyncio.gather(*futures)
            return workers.threads
        finally:
            workers.close()

    assert asyncio.run(main()) <= 16  # the old rule started ~470 threads here (20 ms each under GIL contention)


def test_blocked_calls_get_threads_of_their_own():
    async def main() -> tuple[float, int]:
        workers = EnvWorkers(asyncio.get_running_loop(), threads=68)
        try:
            t0 = time.perf_counter()
            await asyncio.gather(*(workers.submit(lambda: time.sleep(0.2)) for _ in range(64)))
            return time.perf_counter() - t0, workers.threads
        finally:
            workers.close()

    seconds, threads = asyncio.run(main())
    assert threads >= 32 and seconds < 3.0, (threads, seconds)  # on two threads: 6.4 s


def test_replacement_thread_serves_jobs_behind_stuck_ones():
    release = threading.Event()

    async def main() -> bool:
        workers = EnvWorkers(asyncio.get_running_loop(), threads=2)
        try:
            stuck = [workers.submit(release.wait) for _ in range(2)]
            await asyncio.sleep(0.05)
            waiting = workers.submit(lambda: True)
            workers.replace_one()  # the runner gave up on a stuck call
            done = await asyncio.wait_for(waiting, 2.0)
            release.set()
            await asyncio.gather(*stuck)
            return done
        finally:
            release.set()
            workers.close()

    assert asyncio.run(main()) is True


def test_dataset_env_built_on_many_threads_parses_its_file_once(tmp_path):
    from rlvr_gym.envs.math import dataset

    path = tmp_path / "items.jsonl"
    path.write_text(
        "".join(json.dumps({"question": f"What is {i} + 1?", "answer": str(i + 1)}) + "\n" for i in range(3000))
    )
    dataset._load.cache_clear()
    with ThreadPoolExecutor(16) as pool:
        sizes = set(pool.map(lambda _: len(dataset.MathDatasetTasks(str(path))), range(32)))
    assert len(sizes) == 1 and dataset._load.cache_info().misses == 1
