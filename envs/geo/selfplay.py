"""GeoX self-play: one policy proposes spatial programs and solves them (AZR-style deduction loop).

`run_selfplay` measures any agent; `GeoSelfPlay` trains a LoRA adapter on the same loop with PopuLoRA's sampling and
task-relative REINFORCE step (`rlvr-gym geo-selfplay --train STEPS`).

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


def judge_proposal(text: str, scene: Any, scenes: Any) -> tuple[list[Any] | None, tuple[Any, str] | None, str | None]:
    """(program, (value, kind) when the program is a valid task on `scene`, reject kind) for one proposal text.

    Validity is decided only by executing the program (`tasks.valid_task`): typed answer, deterministic, not
    guessable, not constant over probe scenes."""
    answer = verifier.extract(text)
    if answer is None:
        return None, None, "no answer line"
    try:
        program = dsl.parse(answer)
    except dsl.ProgramError as exc:
        return None, None, exc.kind
    if not isinstance(program, list):
        return None, None, "not a program"
    found = valid_task(program, scene, scenes)
    return program, found, None if found is not None else "not a valid task"


def solve_task(program: list[Any], scene: Any, found: tuple[Any, str], source: str, task_id: str) -> Task:
    """The deduction task a valid program makes on its scene; the answer comes from execution, not the proposer."""
    return Task(
        id=task_id,
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


def held_tasks(seed: int, source: str, count: int) -> list[Task]:
    """A fixed set of deduction tasks for measuring the solver before and after training.

    (Scene, program) pairs come from the generator's eval split; a simple program may also be in the buffer, but
    never on the same scene. The prompt is built by `solve_task`, the one the solver trains on, so only the scenes
    and pairs differ from training."""
    generator = GeoTasks(split="eval", seed=seed, render="text", source=source)
    scenes = get_source(source)
    out = []
    for i in range(count):
        truth = generator.task(i).ground_truth
        scene = scenes.scene(truth["scene_seed"])
        found = valid_task(truth["program"], scene, scenes)
        if found is not None:
            out.append(solve_task(truth["program"], scene, found, source, f"geo/held/{i}"))
    return out


def seed_programs(seed: int, source: str, count: int = 4) -> list[str]:
    """The buffer's starting programs: the deduction generator's, as JSON."""
    seeds_source = GeoTasks(split="train", seed=seed, render="text", source=source)
    return [json.dumps(seeds_source.task(i).ground_truth["program"]) for i in range(count)]


async def run_selfplay(
    agent, *, proposals: int = 3, samples: int = 2, seed: int = 0, source: str = "procedural"
) -> SelfPlayLog:
    """Measure an agent as proposer and solver (no training; `GeoSelfPlay` trains an adapter on the same loop)."""
    rng = random.Random(seed)
    buffer = seed_programs(seed, source)
    scenes = get_source(source)
    log = SelfPlayLog()
    for k in range(proposals):
        scene = scenes.scene(rng.randrange(2**31))
        prompt = propose_prompt(scene.to_text(), rng.sample(buffer, min(3, len(buffer))))
        text = await _ask(agent, prompt, f"geo/selfplay/propose-{k}", k)
        row: dict[str, Any] = {"step": k, "proposal": text[:300], "valid": False, "solve_rate": 0.0}
        program, found, reject = judge_proposal(text, scene, scenes)
        if reject:
            row["reject"] = reject
        if found is not None:
            row["valid"] = True
            buffer.append(json.dumps(program))
            task = solve_task(program, scene, found, source, f"geo/selfplay/{k}")
            wins = [verifier.verify(task, [await _ask(agent, task.prompt, task.id, s)]).passed for s in range(samples)]
            row["solve_rate"] = sum(wins) / samples
        row["proposer_reward"], row["learnability"] = proposer_reward(row["valid"], row["solve_rate"])
        log.rows.append(row)
    return log


@dataclass
class GeoSelfPlayConfig:
    """One adapter proposes and solves (AZR's single agent); sizes are per step."""

    steps: int = 4
    proposals: int = 4  # propose prompts per step, one sample each: the proposer's batch
    samples: int = 4  # solver samples per valid proposal: its solve rate, and solver training samples
    solves: int = 4  # buffer programs on fresh scenes, one rollout each: the solver's batch when nothing is valid
    rank: int = 8
    alpha: int = 16
    target_modules: tuple[str, ...] = ("q_proj", "v_proj")
    lr: float = 5e-4
    max_new_tokens: int = 48
    temperature: float = 1.0
    seed: int = 0
    source: str = "procedural"
    buffer_capacity: int = 256
    held: int = 0  # fixed eval-split deduction tasks for `held_accuracy` (0: none)


class GeoSelfPlay:
    """GeoX self-play that trains: the PopuLoRA sampling and update (`algorithms.populora.policy`) on one adapter.

    A step: `proposals` scenes, each with 3 example programs from the buffer; the adapter proposes a program per
    scene; valid ones (by execution) are solved `samples` times by the same adapter, giving the proposer reward
    (`proposer_reward`: 0 invalid, 0.5 valid, + 0.5 x learnability) and solver samples (reward 1 right, 0 wrong,
    by the GeoX verifier); `solves` buffer programs on fresh scenes add solver samples; then one REINFORCE step
    with advantages whitened per role (`propose:geo`, `solve:geo`)."""

    def __init__(self, model: Any, tokenizer: Any, config: GeoSelfPlayConfig, adapter: str = "agent") -> None:
        import torch

        from rlvr_gym.algorithms.populora.policy import adapter_parameters

        self.model, self.tokenizer, self.config, self.adapter = model, tokenizer, config, adapter
        for p in model.parameters():
            p.requires_grad_(False)
        self.optimizer = torch.optim.Adam(adapter_parameters(model, adapter), lr=config.lr)
        self.scenes = get_source(config.source)
        self.buffer = seed_programs(config.seed, config.source)
        self.held = held_tasks(config.seed, config.source, config.held) if config.held else []
        self.logs: list[dict[str, Any]] = []

    def held_accuracy(self) -> list[bool]:
        """Greedy solves of the held tasks, one per task (deterministic, so before/after differ only by training)."""
        if not self.held:
            return []
        outs = self._generate([t.prompt for t in self.held], greedy=True)
        return [bool(verifier.verify(t, [text]).passed) for t, (_, _, text) in zip(self.held, outs, strict=True)]

    def _generate(self, prompts: list[str], *, greedy: bool = False) -> list[tuple[Any, str]]:
        from rlvr_gym.algorithms.populora.policy import encode_chat, generate

        ids = [encode_chat(self.tokenizer, p) for p in prompts]
        outs = generate(
            self.model,
            self.tokenizer,
            self.adapter,
            ids,
            temperature=self.config.temperature,
            max_new_tokens=self.config.max_new_tokens,
            greedy=greedy,
        )
        return [(prompt_ids, completion, text) for prompt_ids, (completion, text) in zip(ids, outs, strict=True)]

    def step(self, k: int) -> tuple[list[Any], dict[str, Any]]:
        """Samples of one self-play step and its log row."""
        import torch

        from rlvr_gym.algorithms.populora.policy import Sample

        cfg = self.config
        rng = random.Random(f"geo-selfplay|{cfg.seed}|{k}")
        torch.manual_seed(rng.randrange(2**31))
        scenes = [self.scenes.scene(rng.randrange(2**31)) for _ in range(cfg.proposals)]
        prompts = [propose_prompt(s.to_text(), rng.sample(self.buffer, min(3, len(self.buffer)))) for s in scenes]
        proposed = self._generate(prompts)
        solve_tasks: list[tuple[int | None, Task]] = []
        judged, rejects = [], {}
        for i, (scene, (_, _, text)) in enumerate(zip(scenes, proposed, strict=True)):
            program, found, reject = judge_proposal(text, scene, self.scenes)
            judged.append((program, found))
            if reject:
                rejects[reject] = rejects.get(reject, 0) + 1
            if found is not None:
                task = solve_task(program, scene, found, cfg.source, f"geo/selfplay/{k}/{i}")
                solve_tasks += [(i, task)] * cfg.samples
        for j in range(cfg.solves):  # the solver's own batch: buffer programs on fresh scenes
            for _ in range(20):
                scene = self.scenes.scene(rng.randrange(2**31))
                program = json.loads(rng.choice(self.buffer))
                found = valid_task(program, scene, self.scenes)
                if found is not None:
                    solve_tasks.append((None, solve_task(program, scene, found, cfg.source, f"geo/buffer/{k}/{j}")))
                    break
        solved = self._generate([t.prompt for _, t in solve_tasks])
        samples, wins_of = [], {}
        for (i, task), (prompt_ids, completion, text) in zip(solve_tasks, solved, strict=True):
            win = bool(verifier.verify(task, [text]).passed)
            samples.append(Sample(self.adapter, "solve:geo", prompt_ids, completion, float(win)))
            if i is not None:
                wins_of.setdefault(i, []).append(win)
        buffer_wins = [x.reward for (i, _), x in zip(solve_tasks, samples, strict=True) if i is None]
        rewards, learn = [], []
        for i, ((prompt_ids, completion, _), (program, found)) in enumerate(zip(proposed, judged, strict=True)):
            wins = wins_of.get(i, [])
            reward, value = proposer_reward(found is not None, sum(wins) / len(wins) if wins else 0.0)
            samples.append(Sample(self.adapter, "propose:geo", prompt_ids, completion, reward))
            rewards.append(reward)
            learn.append(value)
            if found is not None and json.dumps(program) not in self.buffer:
                self.buffer.append(json.dumps(program))
                if len(self.buffer) > cfg.buffer_capacity:
                    self.buffer.pop(0)
        row = {
            "step": k,
            "valid_rate": sum(f is not None for _, f in judged) / len(judged),
            "proposer_reward": sum(rewards) / len(rewards),
            "learnability": sum(learn) / len(learn),
            "solve_rate_on_proposals": (
                sum(sum(w) for w in wins_of.values()) / sum(len(w) for w in wins_of.values()) if wins_of else None
            ),
            "solve_rate_on_buffer": sum(buffer_wins) / len(buffer_wins) if buffer_wins else None,
            "buffer": len(self.buffer),
            "rejects": rejects,
        }
        return samples, row

    def train(self, steps: int | None = None) -> list[dict[str, Any]]:
        """Run self-play steps, each followed by one update; returns the log rows (also kept in `self.logs`)."""
        import time

        from rlvr_gym.algorithms.populora.policy import reinforce_update
        from rlvr_gym.algorithms.populora.population import delta_norm

        for k in range(len(self.logs), len(self.logs) + (steps or self.config.steps)):
            started = time.monotonic()
            samples, row = self.step(k)
            row["updated"] = reinforce_update(self.model, self.optimizer, self.adapter, samples)
            row["delta_w"] = delta_norm(self.model, self.adapter)
            row["wall_s"] = time.monotonic() - started
            self.logs.append(row)
        return self.logs


def build_selfplay(config: GeoSelfPlayConfig, model_path: str | None = None) -> GeoSelfPlay:
    """The embedded model (or `model_path`) with one fresh LoRA adapter named `agent`."""
    import torch
    from peft import LoraConfig, get_peft_model

    from rlvr_gym.algorithms.modeling import load_model

    torch.manual_seed(config.seed)
    model, tokenizer = load_model(model_path)
    lora = LoraConfig(
        r=config.rank, lora_alpha=config.alpha, target_modules=list(config.target_modules), init_lora_weights="gaussian"
    )
    return GeoSelfPlay(get_peft_model(model, lora, adapter_name="agent"), tokenizer, config)


def _print_held(play: GeoSelfPlay, when: str) -> None:
    wins = play.held_accuracy()
    if wins:
        print(
            json.dumps({"held": when, "solved": sum(wins), "n": len(wins), "wins": [int(w) for w in wins]}), flush=True
        )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="rlvr-gym geo-selfplay", description=__doc__.splitlines()[0])
    parser.add_argument("--agent", default="smollm2")
    parser.add_argument("--proposals", type=int, default=3)
    parser.add_argument("--samples", type=int, default=2)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--source", default="procedural", help="scene source: procedural, osm or neon")
    parser.add_argument("--train", type=int, metavar="STEPS", help="train a LoRA adapter of the embedded model")
    parser.add_argument("--lr", type=float, default=5e-4)
    parser.add_argument("--solves", type=int, default=4, help="with --train: buffer solve rollouts per step")
    parser.add_argument(
        "--held", type=int, default=0, help="with --train: held eval-split tasks solved greedily before/after"
    )
    args = parser.parse_args(argv)
    if args.train:
        import torch

        torch.set_num_threads(1)
        config = GeoSelfPlayConfig(
            steps=args.train,
            proposals=args.proposals,
            samples=args.samples,
            seed=args.seed,
            source=args.source,
            lr=args.lr,
            solves=args.solves,
            held=args.held,
        )
        play = build_selfplay(config)
        _print_held(play, "before")
        for row in play.train():
            print(json.dumps(row), flush=True)
        _print_held(play, "after")
        return 0
    from rlvr_gym import make_agent

    agent = make_agent(args.agent)
    log = asyncio.run(
        run_selfplay(agent, proposals=args.proposals, samples=args.samples, seed=args.seed, source=args.source)
    )
    for row in log.rows:
        print(json.dumps(row), file=sys.stderr)
    print(json.dumps({"selfplay": "geo", **log.summary()}))
    return 0
