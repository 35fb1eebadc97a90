"""Tables and curves of PopuLoRA arms from their `log.jsonl` (docs/results/populora.md is written from this).

`python -m rlvr_gym.algorithms.populora.report --arm NAME LOG_DIR [--arm ...] --png OUT.png` prints one
markdown table per arm (per generation: valid-proposal rate, proposer and solver rewards, buffer solve rate,
held-set solve rate, updates and ||delta W|| per adapter) and pooled rates per arm, each rate with its 95% Wilson
interval. LOG_DIR is what `rlvr-gym populora` writes (`RUN_DIR/population` or `RUN_DIR/baseline`: `log.jsonl` and
`settings.json`). Counts are rebuilt from the settings (rates x batch sizes are exact integers), so the log stays small.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from rlvr_gym.envs.azr.rewards import FORMAT_PENALTY, WRONG_PENALTY
from rlvr_gym.summary import wilson_interval

from .cli import SETTINGS, population_config
from .population import PopulationConfig


def _rate(successes: int, n: int) -> str:
    interval = wilson_interval(successes, n)
    if interval is None:
        return "n/a"
    return f"{successes}/{n} = {successes / n:.3f} [{interval[0]:.3f}, {interval[1]:.3f}]"


def well_formed(mean_reward: float, wins: int, n: int) -> int:
    """Well-formed solve answers in a batch of n, from its mean train reward (1 right / -0.5 wrong / -1 format)
    and its wins: the -0.5s are what the rest of the reward sum leaves, so the log need not store them."""
    wrong = (mean_reward * n - wins - (n - wins) * FORMAT_PENALTY) / (WRONG_PENALTY - FORMAT_PENALTY)
    return wins + round(wrong)


def _sizes(config: PopulationConfig) -> dict[str, int]:
    teachers = 1 if config.shared else config.teachers
    types = len(config.task_types)
    return {
        "proposals": teachers * types * config.proposals_per_type * config.steps_per_generation,
        "solves": types * config.solves_per_type * config.steps_per_generation,  # per student
        "held": types * config.held_per_type,  # per student
    }


def load_arm(log_dir: str) -> tuple[PopulationConfig, list[dict[str, Any]]]:
    """The settings that ran and the per-generation log of one arm (`RUN_DIR/population` or `RUN_DIR/baseline`)."""
    folder = Path(log_dir)
    if not (folder / SETTINGS).is_file():
        raise FileNotFoundError(f"{folder / SETTINGS} missing: give the folder that holds log.jsonl and {SETTINGS}")
    raw = json.loads((folder / SETTINGS).read_text())
    rows = [json.loads(line) for line in (folder / "log.jsonl").read_text().splitlines()]
    return population_config(raw, baseline=False), rows


def arm_table(name: str, config: PopulationConfig, rows: list[dict[str, Any]]) -> str:
    """One markdown table: a row per generation, then the pooled row."""
    n = _sizes(config)
    lines = [
        f"**{name}** ({len(rows)} generations x {config.steps_per_generation} steps)",
        "",
        "| gen | valid proposals | proposer reward | learnability | solver reward | well-formed solve answers "
        "| buffer solve rate (per student) "
        "| held solve rate (per student, greedy) | updates | ‖ΔW‖ | buffer (+new) | wall s |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    pooled_valid = pooled_solve = pooled_solve_n = pooled_formed = 0
    updates: dict[str, int] = {}
    for r in rows:
        for member, count in r["updates"].items():
            updates[member] = updates.get(member, 0) + count
        valid = round(r["valid_proposal_rate"] * n["proposals"])
        pooled_valid += valid
        propose = {k.split("/")[0]: v for k, v in r["rewards"].items() if k.endswith("/propose")}
        solve = {k.split("/")[0]: v for k, v in r["rewards"].items() if k.endswith("/solve")}
        train, formed = [], []
        for member, rate in r["train_solve_rate"].items():
            wins = round(rate * n["solves"])
            pooled_solve += wins
            pooled_solve_n += n["solves"]
            train.append(f"{member} {_rate(wins, n['solves'])}")
            k = well_formed(solve[member], wins, n["solves"])
            pooled_formed += k
            formed.append(f"{member} {_rate(k, n['solves'])}")
        held = [f"{m} {_rate(round(v * n['held']), n['held'])}" for m, v in r["held_solve_rate"].items()]
        if r.get("held_solve_rate_start"):
            start = ", ".join(f"{m} {round(v * n['held'])}/{n['held']}" for m, v in r["held_solve_rate_start"].items())
            held.insert(0, f"(before training: {start})")
        lines.append(
            "| {} | {} | {} | {:.3f} | {} | {} | {} | {} | {} | {} | {} (+{}) | {:.0f} |".format(
                r["generation"],
                _rate(valid, n["proposals"]),
                ", ".join(f"{m} {v:+.3f}" for m, v in propose.items()),
                r.get("learnability", 0.0),
                ", ".join(f"{m} {v:+.3f}" for m, v in solve.items()),
                "; ".join(formed),
                "; ".join(train),
                "; ".join(held),
                ", ".join(f"{m} {v}" for m, v in r["updates"].items()),
                ", ".join(f"{m} {v:.4f}" for m, v in r["delta_w"].items()),
                r["buffer_size"],
                r["buffer_added"],
                r["wall_s"],
            )
        )
    total = n["proposals"] * len(rows)
    lines += [
        "",
        f"Pooled over generations: valid proposals {_rate(pooled_valid, total)}; "
        f"well-formed solve answers {_rate(pooled_formed, pooled_solve_n)}; "
        f"buffer solve rate {_rate(pooled_solve, pooled_solve_n)}; "
        f"updates taken / possible: {', '.join(f'{m} {c}/{config.steps_per_generation * len(rows)}' for m, c in updates.items())}; "
        f"wall {sum(r['wall_s'] for r in rows) / 60:.1f} min.",
    ]
    return "\n".join(lines)


def moved_from_start(log_dir: str | Path, start: str | Path) -> dict[str, float]:
    """||delta W_end - delta W_start|| per member of an arm's last checkpoint (LoRA scale included), where the start
    is the run every member was seeded from (`init_adapter`): how far training and evolution took each adapter.
    Its own ||delta W|| says little after a cold start, whose delta W is large to begin with."""
    import torch

    from .adapters import run_factors
    from .lowrank import products

    config, _ = load_arm(str(log_dir))
    scale = config.alpha / config.rank
    state = torch.load(Path(log_dir) / "population.pt", weights_only=False)
    begin = products(run_factors(start))
    out = {}
    for member, factors in state["adapters"].items():
        end = products(factors)
        out[member] = sum(float((scale * (end[k] - begin[k]).double()).pow(2).sum()) for k in end) ** 0.5
    return out


def plot(arms: dict[str, list[dict[str, Any]]], out: str | Path) -> None:
    """Four panels per generation: valid-proposal rate, mean solver reward, held solve rate, ||delta W||."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 4, figsize=(18, 4))
    for name, rows in arms.items():
        gens = [r["generation"] for r in rows]
        axes[0].plot(gens, [r["valid_proposal_rate"] for r in rows], marker="o", label=name)
        for member in rows[0]["delta_w"]:
            solve = [r["rewards"].get(f"{member}/solve") for r in rows]
            if any(v is not None for v in solve):
                axes[1].plot(gens, solve, marker="o", label=f"{name}:{member}")
            held = [r["held_solve_rate"].get(member) for r in rows]
            if any(v is not None for v in held):
                axes[2].plot(gens, held, marker="o", label=f"{name}:{member}")
            axes[3].plot(gens, [r["delta_w"][member] for r in rows], marker="o", label=f"{name}:{member}")
    for ax, title in zip(
        axes, ["valid-proposal rate", "mean solver reward", "held solve rate (greedy)", "‖ΔW‖ per adapter"], strict=True
    ):
        ax.set_title(title)
        ax.set_xlabel("generation")
        ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(out, dpi=90)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--arm", nargs=2, action="append", metavar=("NAME", "LOG_DIR"), required=True)
    parser.add_argument("--png")
    parser.add_argument("--start", help="the init_adapter run: print how far each member moved from it")
    args = parser.parse_args(argv)
    arms = {}
    for name, log_dir in args.arm:
        config, rows = load_arm(log_dir)
        arms[name] = rows
        print(arm_table(name, config, rows) + "\n")
        if args.start:
            moved = moved_from_start(log_dir, args.start)
            print(
                f"{name}: moved from the start (‖ΔW_end − ΔW_start‖): "
                + ", ".join(f"{m} {v:.3f}" for m, v in moved.items())
                + "\n"
            )
    if args.png:
        plot(arms, args.png)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
