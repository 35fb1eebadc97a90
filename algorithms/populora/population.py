"""The PopuLoRA generation loop: teachers propose, other students solve, every adapter trains, then both evolve.

One frozen base, one peft adapter per member (`teacher{i}`, `student{j}`; or one `agent` playing both roles, AZR's
single-agent baseline), one Adam per adapter. A step, as AZR builds its batches:
1. every teacher writes `proposals_per_type` proposals per task type, each from its own propose prompt whose two
   references are drawn from the task buffer (`envs/azr/buffer.py`); proposals are judged in the sandbox;
2. each valid proposal is solved `solver_samples` times by the teacher's judges (students of the other pairs,
   cross-evaluation; the partner when alone) at temperature; proposer reward = AZR's -1 invalid / -0.5 valid with
   learnability 0 / 1 - s otherwise; those estimation samples are not trained on (as in AZR);
3. valid proposals join the buffer (deduplicated, bounded);
4. every student solves `solves_per_type` buffer tasks per task type, one rollout each (-1 format / -0.5 wrong / 1);
5. every adapter takes one REINFORCE step on its own samples, advantages whitened per (role, task type) key
   (`policy.reinforce_update`): with P proposals per key the baseline exists, so teachers get a gradient.
After k steps the cross-evaluation fitness decides the tiered selection, and the operators rewrite adapters in
place (optimizer state reset: moments of the old weights do not describe the new ones).

Members start distinct and off zero: A is peft's Gaussian init and B ~ N(0, init_b_std) from a per-member seed, so
delta W != 0 from step 0 and the operators (which leave a B = 0 adapter alone) have something to act on even for a
member whose first batches carried no contrast. With `init_adapter` every member starts from one trained LoRA (the
SFT cold start on the AZR family's expert data, `configs/azr-sft.yaml`) plus its own B noise: a base model below
the proposer's format floor writes no valid proposal, so without it teachers never see a non-tied reward.

State that decides the future (adapter weights, optimizer moments, the task buffer, counters, the python RNG) is
in the checkpoint, and every sample is drawn under a seed derived from (seed, generation, step), so a resumed run
continues exactly as an uninterrupted one.
"""

from __future__ import annotations

import random
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import torch

from rlvr_gym.envs.azr.buffer import TaskBuffer
from rlvr_gym.envs.azr.rewards import proposer_reward, solver_reward
from rlvr_gym.envs.azr.tasks import AZRSolveTasks
from rlvr_gym.envs.azr.verifier import judge_proposals, judge_solve

from .adapters import factors_from_run, read_factors, write_factors
from .fitness import Attempt, judges, student_fitness, teacher_fitness
from .lowrank import products
from .operators import CROSSOVERS, MUTATIONS
from .policy import Sample, adapter_parameters, encode_chat, generate, reinforce_update
from .selection import plan_generation

__all__ = ["GenerationLog", "Population", "PopulationConfig", "Sample", "delta_norm"]


@dataclass
class PopulationConfig:
    teachers: int = 2
    students: int = 2
    shared: bool = False  # True: AZR's single agent, one adapter playing both roles (teachers = students = 1)
    rank: int = 8
    alpha: int = 16
    target_modules: tuple[str, ...] = ("q_proj", "v_proj")
    task_types: tuple[str, ...] = ("deduction", "abduction", "induction")
    steps_per_generation: int = 1  # k
    generations: int = 2
    proposals_per_type: int = 4  # proposals per (teacher, task type) per step: the propose batch of each key
    solves_per_type: int = 4  # buffer solve tasks per (student, task type) per step: the solve batch of each key
    solver_samples: int = 4  # n: judge samples per valid proposal that estimate its solve rate
    max_new_tokens: int = 96
    temperature: float = 1.0
    lr: float = 1e-4
    init_b_std: float = 1e-4  # B += N(0, std) per member: distinct, non-zero starting delta W
    init_adapter: str | None = None  # every member starts from this LoRA run (an `rlvr-gym sft` cold start)
    seed: int = 0
    keep: float = 0.3
    mutate: float = 0.4
    mutations: tuple[str, ...] = ("M1", "M4")
    crossovers: tuple[str, ...] = ("X3",)
    induction_inputs: int = 4
    buffer_capacity: int = 256
    held_per_type: int = 4  # fixed eval-split solve tasks per task type, solved greedily each generation
    evolve: bool = True  # False: no population step (1T-1S and the single agent)


@dataclass
class GenerationLog:
    generation: int
    valid_proposal_rate: float
    solve_rate: float  # judges' solve rate on valid proposals
    learnability: float  # mean teacher fitness
    fitness: dict[str, float]
    operators: dict[str, str]
    rewards: dict[str, float] = field(default_factory=dict)  # mean training reward per member and role
    buffer_size: int = 0
    buffer_added: int = 0  # new valid proposals this generation
    train_solve_rate: dict[str, float] = field(default_factory=dict)  # per student, on its buffer solve batch
    held_solve_rate: dict[str, float] = field(default_factory=dict)  # per student, greedy, after this generation
    held_solve_rate_start: dict[str, float] = field(default_factory=dict)  # generation 0 only: before training
    delta_w: dict[str, float] = field(default_factory=dict)  # ||delta W|| per member after this generation
    updates: dict[str, int] = field(default_factory=dict)  # optimizer steps taken per member this generation
    wall_s: float = 0.0


def delta_norm(model: Any, adapter: str) -> float:
    """Frobenius norm of the adapter's whole weight change (all layers, LoRA scale included)."""
    scale = _scale(model, adapter)
    total = sum(float((scale * d.double()).pow(2).sum()) for d in products(read_factors(model, adapter)).values())
    return total**0.5


def _scale(model: Any, adapter: str) -> float:
    config = model.peft_config[adapter]
    return config.lora_alpha / config.r


class Population:
    """Teachers and students as peft adapters on `model` (a PeftModel), trained by AZR self-play and evolved."""

    def __init__(self, model: Any, tokenizer: Any, config: PopulationConfig, *, executor: Any = None) -> None:
        from peft import LoraConfig

        if config.shared and (config.teachers, config.students) != (1, 1):
            raise ValueError("shared (the single AZR agent) means one adapter: teachers = students = 1")
        self.model, self.tokenizer, self.config, self.executor = model, tokenizer, config, executor
        self.teachers = ["agent"] if config.shared else [f"teacher{i}" for i in range(config.teachers)]
        self.students = ["agent"] if config.shared else [f"student{j}" for j in range(config.students)]
        lora = LoraConfig(
            r=config.rank,
            lora_alpha=config.alpha,
            target_modules=list(config.target_modules),
            init_lora_weights="gaussian",
        )
        torch.manual_seed(config.seed)
        start = None
        for i, name in enumerate(self.members):
            if name not in model.peft_config:
                model.add_adapter(name, lora)
                if config.init_adapter:
                    start = start or factors_from_run(model, config.init_adapter, name)
                    write_factors(model, name, start)
                self._init_b(name, config.seed * 7919 + i)
        for p in model.parameters():
            p.requires_grad_(False)
        self.optimizers = {
            name: torch.optim.Adam(adapter_parameters(model, name), lr=config.lr) for name in self.members
        }
        self.generation = 0
        self.rng = random.Random(config.seed)
        self.logs: list[GenerationLog] = []
        self.buffer = TaskBuffer(config.task_types, seed=config.seed, capacity=config.buffer_capacity)
        held = AZRSolveTasks(split="eval", seed=config.seed, task_types=config.task_types)
        self.held = [held.task(i) for i in range(config.held_per_type * len(config.task_types))]
        self._task_counter = 0

    def _init_b(self, name: str, seed: int) -> None:
        if self.config.init_b_std <= 0:
            return
        gen = torch.Generator().manual_seed(seed)
        std = self.config.init_b_std
        factors = read_factors(self.model, name)
        write_factors(
            self.model,
            name,
            {n: (a, b + std * torch.randn(b.shape, generator=gen)) for n, (a, b) in factors.items()},
        )

    @property
    def members(self) -> list[str]:
        return list(dict.fromkeys([*self.teachers, *self.students]))

    def _encode(self, prompt: str) -> torch.Tensor:
        return encode_chat(self.tokenizer, prompt)

    def _generate(
        self, member: str, prompts: list[torch.Tensor], *, greedy: bool = False
    ) -> list[tuple[torch.Tensor, str]]:
        return generate(
            self.model,
            self.tokenizer,
            member,
            prompts,
            temperature=self.config.temperature,
            max_new_tokens=self.config.max_new_tokens,
            greedy=greedy,
        )

    def _next_index(self) -> int:
        self._task_counter += 1
        return self._task_counter - 1

    # ---- one step ---------------------------------------------------------------------------------------------
    def step(self, step_seed: int) -> tuple[list[Sample], dict[str, Any]]:
        """One AZR step of the whole population: proposals, their judging, buffer growth, solve batches."""
        torch.manual_seed(step_seed)
        rng = random.Random(step_seed)
        cfg = self.config
        samples: list[Sample] = []
        valid: list[list[bool]] = [[] for _ in self.teachers]
        attempts: list[Attempt] = []
        # 1. proposals: P per (teacher, task type), each prompt with its own buffer references
        proposals = []
        for t, teacher in enumerate(self.teachers):
            tasks = [
                self.buffer.propose_task(tt, rng, self._next_index(), cfg.induction_inputs)
                for tt in cfg.task_types
                for _ in range(cfg.proposals_per_type)
            ]
            ids = [self._encode(task.prompt) for task in tasks]
            for task, prompt_ids, (completion, text) in zip(tasks, ids, self._generate(teacher, ids), strict=True):
                proposals.append((t, task, prompt_ids, completion, text))
        reports = judge_proposals([p[1] for p in proposals], [p[4] for p in proposals], executor=self.executor)
        # 2. judges estimate each valid proposal's solve rate (n samples per judge, batched per judge)
        solve_jobs: dict[int, list[tuple[int, Any, torch.Tensor]]] = {}
        for i, ((t, *_), report) in enumerate(zip(proposals, reports, strict=True)):
            if report.valid:
                task = self._proposal_solve_task(report, rng)
                ids = self._encode(task.prompt)
                for s in judges(t, len(self.students)):
                    solve_jobs.setdefault(s, []).append((i, task, ids))
        solved_by: dict[tuple[int, int], list[bool]] = {}
        for s, jobs in solve_jobs.items():
            prompts = [ids for _, _, ids in jobs for _ in range(cfg.solver_samples)]
            outs = self._generate(self.students[s], prompts)
            for j, (i, task, _) in enumerate(jobs):
                texts = [text for _, text in outs[j * cfg.solver_samples : (j + 1) * cfg.solver_samples]]
                solved_by[(i, s)] = [bool(judge_solve(task, x, executor=self.executor).passed) for x in texts]
        # 3. proposer rewards, fitness records, buffer growth
        per_teacher_index = [0] * len(self.teachers)
        for i, ((t, _task, prompt_ids, completion, _), report) in enumerate(zip(proposals, reports, strict=True)):
            p = per_teacher_index[t]
            per_teacher_index[t] += 1
            valid[t].append(report.valid)
            solved: list[bool] = []
            for s in judges(t, len(self.students)):
                if (i, s) in solved_by:
                    attempts.append(Attempt(t, p, s, tuple(solved_by[(i, s)])))
                    solved += solved_by[(i, s)]
            reward = proposer_reward(report.valid, solved)
            samples.append(Sample(self.teachers[t], f"propose:{report.task_type}", prompt_ids, completion, reward))
            if report.valid:
                self.buffer.add(report.task_type, report.program, report.inputs, report.outputs, report.message)
        # 4. solve batches from the buffer, one rollout per task
        train_solved: dict[str, list[bool]] = {}
        for s, student in enumerate(self.students):
            tasks = [
                self.buffer.solve_task(tt, rng, self._next_index())
                for tt in cfg.task_types
                for _ in range(cfg.solves_per_type)
            ]
            ids = [self._encode(task.prompt) for task in tasks]
            for task, prompt_ids, (completion, text) in zip(tasks, ids, self._generate(student, ids), strict=True):
                verdict = judge_solve(task, text, executor=self.executor)
                reward = solver_reward(verdict.valid, bool(verdict.passed))
                samples.append(
                    Sample(student, f"solve:{task.ground_truth['task_type']}", prompt_ids, completion, reward)
                )
                train_solved.setdefault(student, []).append(bool(verdict.passed))
                attempts.append(Attempt(-1, -1, s, (bool(verdict.passed),)))
        return samples, {"valid": valid, "attempts": attempts, "train_solved": train_solved}

    def _proposal_solve_task(self, report: Any, rng: random.Random) -> Any:
        from rlvr_gym.envs.azr.buffer import Entry
        from rlvr_gym.sandboxes.python_programs.plain_values import encode_tree

        entry = Entry(
            report.program,
            tuple(encode_tree(list(a)) for a in report.inputs),
            tuple(encode_tree(o) for o in report.outputs),
            report.message,
        )
        return self.buffer.solve_task(report.task_type, rng, self._next_index(), entry)

    # ---- learning ---------------------------------------------------------------------------------------------
    def update(self, samples: list[Sample]) -> dict[str, bool]:
        """One optimizer step per adapter on its own samples (all its roles), advantages whitened per key."""
        return {
            name: reinforce_update(self.model, self.optimizers[name], name, [x for x in samples if x.member == name])
            for name in self.members
        }

    @torch.no_grad()
    def held_solve_rates(self) -> dict[str, float]:
        """Greedy solve rate of every student on the fixed held set (eval split of the seed programs)."""
        ids = [self._encode(task.prompt) for task in self.held]
        out = {}
        for student in self.students:
            texts = [text for _, text in self._generate(student, ids, greedy=True)]
            wins = [
                bool(judge_solve(task, x, executor=self.executor).passed)
                for task, x in zip(self.held, texts, strict=True)
            ]
            out[student] = float(np.mean(wins)) if wins else 0.0
        return out

    # ---- evolution --------------------------------------------------------------------------------------------
    def evolve(self, names: list[str], fitness: list[float]) -> dict[str, str]:
        plan = plan_generation(
            fitness,
            self.rng,
            keep=self.config.keep,
            mutate=self.config.mutate,
            mutations=self.config.mutations,
            crossovers=self.config.crossovers,
        )
        before = {n: read_factors(self.model, n) for n in names}
        applied = {}
        gen = torch.Generator().manual_seed(self.rng.randrange(2**31))
        for action in plan:
            name = names[action.member]
            if action.kind == "keep":
                applied[name] = "keep"
                continue
            factors = before[name]
            label = action.mutation or ""
            if action.kind == "replace":
                parents = [before[names[i]] for i in action.parents]
                factors = CROSSOVERS[action.crossover](parents, gen, fitness=[fitness[i] for i in action.parents])
                label = f"{action.crossover}({','.join(names[i] for i in action.parents)})+{action.mutation}"
            write_factors(self.model, name, MUTATIONS[action.mutation](factors, gen))
            self.optimizers[name] = torch.optim.Adam(adapter_parameters(self.model, name), lr=self.config.lr)
            applied[name] = label
        return applied

    def run_generation(self) -> GenerationLog:
        """k steps (each: one update per adapter), then fitness, evolution, held-set evaluation and the log."""
        import time

        started = time.monotonic()
        held_start = self.held_solve_rates() if self.generation == 0 and self.config.held_per_type else {}
        records_valid: list[list[bool]] = [[] for _ in self.teachers]
        records_attempts: list[Attempt] = []
        rewards: dict[str, list[float]] = {}
        train_solved: dict[str, list[bool]] = {}
        updates = dict.fromkeys(self.members, 0)
        for k in range(self.config.steps_per_generation):
            samples, records = self.step(self.config.seed * 1_000_003 + self.generation * 1000 + k)
            for name, stepped in self.update(samples).items():
                updates[name] += int(stepped)
            for t, v in enumerate(records["valid"]):
                offset = len(records_valid[t])
                records_valid[t] += v
                records_attempts += [
                    Attempt(a.teacher, a.proposal + offset, a.student, a.solved)
                    for a in records["attempts"]
                    if a.teacher == t
                ]
            records_attempts += [a for a in records["attempts"] if a.teacher < 0]
            for x in samples:
                rewards.setdefault(f"{x.member}/{x.key.split(':')[0]}", []).append(x.reward)
            for name, wins in records["train_solved"].items():
                train_solved.setdefault(name, []).extend(wins)
        t_fit = teacher_fitness(len(self.teachers), records_valid, records_attempts, len(self.students))
        s_fit = student_fitness(len(self.students), records_attempts)
        operators = dict.fromkeys(self.members, "none")
        if self.config.evolve:
            operators = {**self.evolve(self.teachers, t_fit), **self.evolve(self.students, s_fit)}
        flat_valid = [v for vs in records_valid for v in vs]
        judged = [x for a in records_attempts if a.teacher >= 0 for x in a.solved]
        fitness = {f"{n}/teacher": f for n, f in zip(self.teachers, t_fit, strict=True)}
        fitness.update({f"{n}/student": f for n, f in zip(self.students, s_fit, strict=True)})
        log = GenerationLog(
            generation=self.generation,
            valid_proposal_rate=float(np.mean(flat_valid)) if flat_valid else 0.0,
            solve_rate=float(np.mean(judged)) if judged else 0.0,
            learnability=float(np.mean(t_fit)) if t_fit else 0.0,
            fitness=fitness,
            operators=operators,
            rewards={k: float(np.mean(v)) for k, v in rewards.items()},
            buffer_size=len(self.buffer),
            buffer_added=self.buffer.added - sum(x.buffer_added for x in self.logs),
            train_solve_rate={k: float(np.mean(v)) for k, v in train_solved.items()},
            held_solve_rate=self.held_solve_rates() if self.config.held_per_type else {},
            held_solve_rate_start=held_start,
            delta_w={n: delta_norm(self.model, n) for n in self.members},
            updates=updates,
            wall_s=time.monotonic() - started,
        )
        self.logs.append(log)
        self.generation += 1
        return log

    # ---- checkpoint -------------------------------------------------------------------------------------------
    def save(self, path: str | Path) -> None:
        torch.save(
            {
                "config": asdict(self.config),
                "generation": self.generation,
                "rng": self.rng.getstate(),
                "task_counter": self._task_counter,
                "buffer": self.buffer.state(),
                "adapters": {n: read_factors(self.model, n) for n in self.members},
                "optimizers": {n: o.state_dict() for n, o in self.optimizers.items()},
                "logs": [asdict(x) for x in self.logs],
            },
            Path(path),
        )

    def load(self, path: str | Path) -> None:
        state = torch.load(Path(path), weights_only=False)
        for name, factors in state["adapters"].items():
            write_factors(self.model, name, factors)
        for name, opt_state in state["optimizers"].items():
            self.optimizers[name] = torch.optim.Adam(adapter_parameters(self.model, name), lr=self.config.lr)
            self.optimizers[name].load_state_dict(opt_state)
        self.generation, self._task_counter = state["generation"], state["task_counter"]
        self.buffer.load(state["buffer"])
        self.rng.setstate(state["rng"])
        self.logs = [GenerationLog(**x) for x in state["logs"]]
