"""ALFWorld engine speed: uncached vs memoised TextWorld PDDL engine, same games, same actions, same run.

Plays each game's walkthrough (plus `look`/`inventory`) with the caches off, with the memo caches only, and with
memo caches + shallow context copies (the default), each cached mode after one warm-up play; checks that all give
identical trajectories (hash of every feedback + admissible list), and prints median step and reset times and
their ratios against the uncached engine, then one JSON line.

    python benchmarks/alfworld_step.py [--games 6] [--repeats 2] [--cache-dir DIR]
"""

from __future__ import annotations

import argparse
import json
import statistics

from rlvr_gym.envs.alfworld import engine
from rlvr_gym.envs.alfworld.generator import GameGenerator, GeneratorConfig


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--games", type=int, default=6)
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--cache-dir", default=None)
    args = parser.parse_args()
    records = [GameGenerator(GeneratorConfig(), args.cache_dir).game(i) for i in range(args.games)]
    modes = {
        "uncached": dict(enabled=False),
        "memo": dict(enabled=True, shallow_context=False),
        "cached": dict(enabled=True, shallow_context=True),
    }
    steps: dict[str, list[float]] = {m: [] for m in modes}
    resets: dict[str, list[float]] = {m: [] for m in modes}
    identical = True
    for record in records:
        actions = ["look", "inventory", *record.walkthrough, "look"]
        env = engine.start_game(record.path)
        reference = None
        for mode, switches in modes.items():
            engine.clear_caches()
            with engine.caching(**switches):
                if mode != "uncached":
                    engine.timed_trajectory(env, actions)  # warm the caches (what the first episode of a game pays)
                for _ in range(args.repeats):
                    digest, reset_s, step_s = engine.timed_trajectory(env, actions)
                    reference = reference or digest
                    identical &= digest == reference
                    resets[mode].append(reset_s)
                    steps[mode] += step_s
        env.close()
    step = {m: statistics.median(v) for m, v in steps.items()}
    reset = {m: statistics.median(v) for m, v in resets.items()}
    print(f"games: {len(records)}  steps measured per mode: {len(steps['uncached'])}")
    for mode in modes:
        print(
            f"{mode:>9}: median step {step[mode] * 1e3:8.1f} ms ({step['uncached'] / step[mode]:5.2f}x)   "
            f"median reset {reset[mode] * 1e3:8.1f} ms ({reset['uncached'] / reset[mode]:5.2f}x)"
        )
    print(f"identical trajectories: {identical}")
    result = {"benchmark": "alfworld_step", "games": len(records), "identical": identical}
    for mode in modes:
        result |= {
            f"step_ms_{mode}": round(step[mode] * 1e3, 2),
            f"reset_ms_{mode}": round(reset[mode] * 1e3, 2),
            f"step_speedup_{mode}": round(step["uncached"] / step[mode], 2),
            f"reset_speedup_{mode}": round(reset["uncached"] / reset[mode], 2),
        }
    print(json.dumps(result))


if __name__ == "__main__":
    main()
