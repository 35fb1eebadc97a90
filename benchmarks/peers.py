"""rlvr-gym side by side with its peers, on equal terms, in one process run (issue #37, point 1).

One episode is the same everywhere: one reset (or the framework's equivalent) + one step with the right answer in
the framework's own format + the framework's own verdict. Two tables, because generating a task and playing it are
different costs:
- **pre-built items**: every item exists before the clock starts (reasoning-gym's entries built, SkyRL-Gym's reward
  specs made, rlvr-gym's env warmed on the same indices so its task cache holds them);
- **generation**: each framework's generator builds each item inside the timed loop (reasoning-gym `dataset[i]`,
  GEM's `ReasoningGymEnv.reset`, rlvr-gym's `MathTasks` on indices it never built before); SkyRL-Gym has no
  generator.
Multi-turn: per-step cost of Sokoban text envs (GEM `game:Sokoban-v0-easy` vs `rlvr/Sokoban-v0`), levels built and
reset outside the clock, the same fixed move script. ALFWorld steps: `benchmarks/alfworld_step.py`.

Method: contenders run in interleaved rounds (every contender once per round, rotated order) and each figure is the
median over rounds (min-max spread beside it); ratios are between medians of the same run. Peers are used only when
already installed (the `bench` extra); a missing one is reported as such, never installed at run time. Items: N
reasoning-gym `basic_arithmetic` items (seed 0) when reasoning-gym is installed, else N rlvr-gym arithmetic items.
Prints versions, tables and one JSON line.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import tempfile
import time
from collections.abc import Callable
from dataclasses import asdict
from pathlib import Path
from typing import Any

from env_overhead import Stat, host, interleaved, print_table, versions

import rlvr_gym
from rlvr_gym.envs.math.tasks import DEDUP_WINDOW

MOVES = ("up", "left", "down", "right")
PEERS = ("reasoning-gym", "skyrl-gym", "gem-llm")


def installed(distribution: str) -> bool:
    return versions(distribution)[distribution] != "not installed"


# ---- items ----------------------------------------------------------------------------------------------------------
def items(n: int) -> tuple[str, list[dict[str, Any]]]:
    """(where the items come from, [{question, answer, entry}]) with integer answers."""
    if installed("reasoning-gym"):
        import reasoning_gym

        dataset = reasoning_gym.create_dataset("basic_arithmetic", size=n, seed=0)
        entries = [dataset[i] for i in range(n)]
        return "reasoning-gym basic_arithmetic", [
            {"question": e["question"], "answer": str(e["answer"]), "entry": e} for e in entries
        ]
    env = rlvr_gym.make("rlvr/Math-v0", families=["arithmetic"], difficulty=3).unwrapped
    tasks = [env.get_task(i) for i in range(n)]
    return "rlvr-gym arithmetic (difficulty 3)", [
        {"question": t.metadata["question"], "answer": str(t.ground_truth), "entry": None} for t in tasks
    ]


def write_items(rows: list[dict[str, Any]], path: Path) -> None:
    with path.open("w") as f:
        for row in rows:
            f.write(json.dumps({"question": row["question"], "answer": row["answer"]}) + "\n")


# ---- pre-built items --------------------------------------------------------------------------------------------------
def reasoning_gym_scored(rows: list[dict[str, Any]]) -> Callable[[], int]:
    """reasoning-gym has no env: its episode is `score_answer` on a built entry."""
    import reasoning_gym

    dataset = reasoning_gym.create_dataset("basic_arithmetic", size=len(rows), seed=0)

    def run() -> int:
        total = sum(dataset.score_answer(row["answer"], row["entry"]) for row in rows)
        assert total == len(rows), total
        return len(rows)

    return run


def skyrl_loop(rows: list[dict[str, Any]]) -> Callable[[], int]:
    """SkyRL-Gym's GSM8k env: construction on the reward spec + `init` + `step` (its episode)."""
    from skyrl_gym.envs.gsm8k.env import GSM8kEnv

    specs = [
        ({"reward_spec": {"ground_truth": row["answer"]}}, [{"role": "user", "content": row["question"]}])
        for row in rows
    ]
    answers = [f"#### {row['answer']}" for row in rows]

    def run() -> int:
        total = 0.0
        for (extras, prompt), answer in zip(specs, answers, strict=True):
            env = GSM8kEnv(extras=extras)
            env.init(prompt)
            total += env.step(answer)["reward"]
        assert total == len(rows), total
        return len(rows)

    return run


def rlvr_loop(env: Any, count: int, index_of: Callable[[int], int]) -> Callable[[], int]:
    """rlvr-gym's plain Gymnasium loop: `reset(task_index)` + `step(reference answer)`."""
    env = env.unwrapped

    def run() -> int:
        total = 0.0
        for k in range(count):
            env.reset(options={"task_index": index_of(k)})
            total += env.step(env.task.reference_actions[0])[1]
        assert total == count, total
        return count

    return run


# ---- generation -------------------------------------------------------------------------------------------------------
def reasoning_gym_generated(n: int) -> Callable[[], int]:
    import reasoning_gym

    seeds = itertools.count()

    def run() -> int:
        dataset = reasoning_gym.create_dataset("basic_arithmetic", size=n, seed=next(seeds))
        total = 0.0
        for i in range(n):
            entry = dataset[i]
            total += dataset.score_answer(entry["answer"], entry)
        assert total == n, total
        return n

    return run


def gem_generated(n: int) -> Callable[[], int]:
    """GEM's `ReasoningGymEnv`: `reset` draws (generates) the next item, `step` scores a boxed answer."""
    from gem.envs.reasoning_gym import ReasoningGymEnv

    seeds = itertools.count()

    def run() -> int:
        env = ReasoningGymEnv("basic_arithmetic", size=n, seed=next(seeds))
        total = 0.0
        for _ in range(n):
            env.reset()
            total += float(env.step(f"\\boxed{{{env.data['answer']}}}")[1])
        assert total == n, total
        return n

    return run


def rlvr_generated(n: int) -> Callable[[], int]:
    """rlvr-gym on task indices no env in this process built before: each reset generates its task (indices past
    the deduplication window, where every index is its own seeded draw, memoised nowhere)."""
    env = rlvr_gym.make("rlvr/Math-v0", families=["arithmetic"], difficulty=3)
    offsets = itertools.count()

    def run() -> int:
        start = DEDUP_WINDOW + next(offsets) * n
        return rlvr_loop(env, n, lambda k: start + k)()

    return run


# ---- multi-turn per step ----------------------------------------------------------------------------------------------
def per_step(
    reset: Callable[[int], object], step: Callable[[int], bool], episodes: int, steps: int
) -> Callable[[], tuple[float, int]]:
    """(seconds in steps, steps): each episode's reset (level generation included) runs outside the clock."""

    def run() -> tuple[float, int]:
        timed = 0.0
        for e in range(episodes):
            reset(e)
            for k in range(steps):
                t0 = time.perf_counter()
                done = step(k)
                timed += time.perf_counter() - t0
                if done:
                    reset(e)
        return timed, episodes * steps

    return run


def sokoban_contenders(episodes: int, steps: int) -> dict[str, Callable[[], tuple[float, int]]]:
    contenders = {}
    env = rlvr_gym.make("rlvr/Sokoban-v0", max_turns=steps + 1).unwrapped

    def rlvr_step(k: int) -> bool:
        *_, terminated, truncated, _ = env.step(MOVES[k % 4])
        return terminated or truncated

    contenders["rlvr-gym Sokoban step"] = per_step(
        lambda e: env.reset(options={"task_index": e}), rlvr_step, episodes, steps
    )
    if installed("gem-llm"):
        import gem

        gem_env = gem.make("game:Sokoban-v0-easy")

        def gem_step(k: int) -> bool:
            *_, terminated, truncated, _ = gem_env.step(f"\\boxed{{{MOVES[k % 4]}}}")
            return terminated or truncated

        contenders["GEM Sokoban step"] = per_step(lambda e: gem_env.reset(seed=e), gem_step, episodes, steps)
    return contenders


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--episodes", type=int, default=20_000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--sokoban-episodes", type=int, default=100)
    parser.add_argument("--sokoban-steps", type=int, default=20)
    args = parser.parse_args()
    n = args.episodes
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    found = versions("rlvr-gym", *PEERS, "gymnasium")
    print("versions:", ", ".join(f"{k} {v}" for k, v in found.items()), "| host:", host())

    origin, rows = items(n)
    with tempfile.TemporaryDirectory() as tmp:
        data = Path(tmp) / "items.jsonl"
        write_items(rows, data)
        env = rlvr_gym.make("rlvr/MathDataset-v0", data_files=str(data), task_cache=n)
        size = env.unwrapped.num_tasks  # the loader drops repeated questions: a few items come round twice
        for i in range(size):
            env.reset(options={"task_index": i})
        prebuilt: dict[str, Callable[[], int]] = {"rlvr-gym plain loop": rlvr_loop(env, n, lambda k: k % size)}
        if installed("reasoning-gym"):
            prebuilt["reasoning-gym score_answer"] = reasoning_gym_scored(rows)
        if installed("skyrl-gym"):
            prebuilt["SkyRL-Gym GSM8k env"] = skyrl_loop(rows)
        built = interleaved(prebuilt, args.rounds)

    generating: dict[str, Callable[[], int]] = {"rlvr-gym plain loop": rlvr_generated(n)}
    if installed("reasoning-gym"):
        generating["reasoning-gym dataset[i] + score_answer"] = reasoning_gym_generated(n)
    if installed("gem-llm") and installed("reasoning-gym"):
        generating["GEM ReasoningGymEnv"] = gem_generated(n)
    generated = interleaved(generating, args.rounds)
    steps = interleaved(sokoban_contenders(args.sokoban_episodes, args.sokoban_steps), args.rounds)

    missing = [peer for peer in PEERS if not installed(peer)]
    print(f"items: {n} from {origin}; peers not installed here (rows left out): {missing or 'none'}")
    print_table("pre-built items: reset + step + verdict", built, "rlvr-gym plain loop")
    print_table("generation inside the loop: generate + reset + step + verdict", generated, "rlvr-gym plain loop")
    print_table(
        f"multi-turn Sokoban, {args.sokoban_episodes} x {args.sokoban_steps} steps (steps only)",
        steps,
        "rlvr-gym Sokoban step",
    )

    def table(stats: dict[str, Stat], base: str) -> dict[str, Any]:
        return {name: {**asdict(s), "ratio_vs_rlvr": s.median_us / stats[base].median_us} for name, s in stats.items()}

    print(
        json.dumps(
            {
                "benchmark": "peers",
                "host": host(),
                "versions": found,
                "items": origin,
                "episodes": n,
                "rounds": args.rounds,
                "missing_peers": missing,
                "prebuilt_us": table(built, "rlvr-gym plain loop"),
                "generation_us": table(generated, "rlvr-gym plain loop"),
                "sokoban_step_us": table(steps, "rlvr-gym Sokoban step"),
            }
        )
    )


if __name__ == "__main__":
    main()
