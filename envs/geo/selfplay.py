"""GeoX self-play: one policy proposes spatial programs and solves them (AZR-style deduction loop).

Proposer reward = validity (0.5 for a program that passes every validity check) + 0.5 * learnability, where
learnability = 1 - s̄ over n solver samples and is 0 when s̄ is 0 or 1. Invalid proposals never reach the solver.
The buffer of example programs starts from the task generator and grows with valid proposals.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import sys
from dataclasses import dataclass, field
from typing import Any

from rlvr_gym import Message, Task
from rlvr_gym.types import TaskView

from . import dsl, verifier
from .propose import propose_prompt
from .sources import get_source
from .tasks import INSTRUCTIONS, GeoTasks, format_answer, unit_of, valid_task


@dataclass
class SelfPlayLog:
    rows: list[dict[str, Any]] = field(default_factory=list)

    def summary(self) -> dict[str, float]:
        n = max(len(self.rows), 1)
        solved = [r["solve_rate"] for r in self.rows if r["valid"]]
        return {
            "proposals": len(self.rows),
            "validity_rate": sum(r["valid"] for r in self.rows) / n,
            "solve_rate": sum(solved) / len(solved) if solved else 0.0,
            "mean_learnability": sum(r["learnability"] for r in self.rows) / n,
            "mean_proposer_reward": sum(r["proposer_reward"] for r in self.rows) / n,
        }


def proposer_reward(valid: bool, solve_rate: float) -> tuple[float, float]:
    learnability = 0.0 if solve_rate in (0.0, 1.0) else 1.0 - solve_rate
    return (0.5 + 0.5 * learnability if valid else 0.0), learnability


async def _ask(agent, prompt: str, key: str, sample: int) -> str:
    view = TaskView(id=key, prompt=prompt, metadata={"family": "geo"})
    ctx = agent.start(view, seed=sample, sample_index=sample)
    step = await agent.act(ctx, [Message(role="user", content=prompt)])
    return step.text


async def run_selfplay(
    agent, *, proposals: int = 3, samples: int = 2, seed: int = 0, source: str = "procedural"
) -> SelfPlayLog:
    rng = random.Random(seed)
    seeds_source = GeoTasks(split="train", seed=seed, render="text", source=source)
    buffer = [json.dumps(seeds_source.task(i).ground_truth["program"]) for i in range(4)]
    scenes = get_source(source)
    log = SelfPlayLog()
    for k in range(proposals):
        scene = scenes.scene(rng.randrange(2**31))
        prompt = propose_prompt(scene.to_text(), rng.sample(buffer, min(3, len(buffer))))
        text = await _ask(agent, prompt, f"geo/selfplay/propose-{k}", k)
        row: dict[str, Any] = {"step": k, "proposal": text[:300], "valid": False, "solve_rate": 0.0}
        answer = verifier.extract(text)
        program = None
        try:
            program = dsl.parse(answer) if answer is not None else None
        except dsl.ProgramError as exc:
            row["reject"] = exc.kind
        found = valid_task(program, scene, scenes) if isinstance(program, list) else None
        if found is not None:
            row["valid"] = True
            buffer.append(json.dumps(program))
            task = Task(
                id=f"geo/selfplay/{k}",
                prompt=f"{scene.to_text()}\n\n{INSTRUCTIONS['deduction']}\nProgram: {json.dumps(program)}",
                ground_truth={
                    "mode": "deduction",
                    "value": found[0],
                    "unit": unit_of(program, found[1]),
                    "scene_source": source,
                    "scene_seed": scene.seed,
                    "program": program,
                },
                reference_actions=[f"ANSWER: {format_answer(found[0])}"],
                metadata={"family": "geo"},
            )
            wins = [verifier.verify(task, [await _ask(agent, task.prompt, task.id, s)]).passed for s in range(samples)]
            row["solve_rate"] = sum(wins) / samples
        row["proposer_reward"], row["learnability"] = proposer_reward(row["valid"], row["solve_rate"])
        log.rows.append(row)
    return log


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="rlvr-gym geo-selfplay", description=__doc__.splitlines()[0])
    parser.add_argument("--agent", default="smollm2")
    parser.add_argument("--proposals", type=int, default=3)
    parser.add_argument("--samples", type=int, default=2)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--source", default="procedural", help="scene source: procedural, osm or neon")
    args = parser.parse_args(argv)
    from rlvr_gym import make_agent

    agent = make_agent(args.agent)
    log = asyncio.run(
        run_selfplay(agent, proposals=args.proposals, samples=args.samples, seed=args.seed, source=args.source)
    )
    for row in log.rows:
        print(json.dumps(row), file=sys.stderr)
    print(json.dumps({"selfplay": "geo", **log.summary()}))
    return 0
