"""The PopuLoRA generation loop: teachers propose, other students solve, every adapter trains, then both evolve.

One frozen base, one peft adapter per member (`teacher{i}`, `student{j}`), one Adam per adapter. A step: every
teacher proposes one task per task type (AZR-Propose prompts), proposals are judged in the sandbox (twice, for
determinism); each valid proposal becomes a solve task that every judging student samples `solver_samples` times;
rewards follow AZR (proposer: -1 / -0.5 / learnability from the judging students; solver: -1 / -0.5 / 1); when no
proposal is valid the students solve seed tasks instead, so they always learn. Advantages are task-relative
REINFORCE++ inside each adapter's batch; the loss is -A * mean token log-prob of the completion. After k steps the
fitness of the step records decides the tiered selection, and the operators rewrite adapters in place (their
optimizer state is reset, since moments of the old weights do not describe the new ones).

State that decides the future (adapter weights, optimizer moments, step counter, the python RNG) is in the
checkpoint, and every sample is drawn under a seed derived from (seed, generation, step), so a resumed run
continues exactly as an uninterrupted one.
"""

from __future__ import annotations

import random
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import torch

from rlvr_gym.algorithms.advantages import AdvantageInput, compute_advantages
from rlvr_gym.envs.azr.rewards import proposer_reward, solver_reward
from rlvr_gym.envs.azr.tasks import AZRProposeTasks, AZRSolveTasks, make_solve_task, solve_truth
from rlvr_gym.envs.azr.verifier import judge_proposals, judge_solve

from .adapters import read_factors, write_factors
from .fitness import Attempt, judges, student_fitness, teacher_fitness
from .operators import CROSSOVERS, MUTATIONS
from .selection import plan_generation


@dataclass
class PopulationConfig:
    teachers: int = 2
    students: int = 2
    rank: int = 8
    alpha: int = 16
    target_modules: tuple[str, ...] = ("q_proj", "v_proj")
    task_types: tuple[str, ...] = ("deduction", "abduction", "induction")
    steps_per_generation: int = 1  # k
    generations: int = 2
    solver_samples: int = 2
    max_new_tokens: int = 48
    temperature: float = 1.0
    lr: float = 1e-4
    seed: int = 0
    keep: float = 0.3
    mutate: float = 0.4
    mutations: tuple[str, ...] = ("M1", "M4")
    crossovers: tuple[str, ...] = ("X3",)
    induction_inputs: int = 4
    evolve: bool = True  # False: plain AZR self-play (the single-pair baseline)


@dataclass
class Sample:
    member: str
    key: str
    prompt_ids: torch.Tensor
    completion_ids: torch.Tensor
    reward: float


@dataclass
class GenerationLog:
    generation: int
    valid_proposal_rate: float
    solve_rate: float
    learnability: float
    fitness: dict[str, float]
    operators: dict[str, str]
    rewards: dict[str, float] = field(default_factory=dict)


class Population:
    """Teachers and students as adapters of one peft model (`model` is a PeftModel with no adapters used yet)."""

    def __init__(self, model: Any, tokenizer: Any, config: PopulationConfig, *, executor: Any = None) -> None:
        from peft import LoraConfig

        self.model, self.tokenizer, self.config, self.executor = model, tokenizer, config, executor
        self.teachers = [f"teacher{i}" for i in range(config.teachers)]
        self.students = [f"student{j}" for j in range(config.students)]
        lora = LoraConfig(
            r=config.rank,
            lora_alpha=config.alpha,
            target_modules=list(config.target_modules),
            init_lora_weights="gaussian",
        )
        torch.manual_seed(config.seed)
        for name in self.members:
            if name not in model.peft_config:
                model.add_adapter(name, lora)
        for p in model.parameters():
            p.requires_grad_(False)
        self.optimizers = {name: torch.optim.Adam(self._params(name), lr=config.lr) for name in self.members}
        self.generation = 0
        self.rng = random.Random(config.seed)
        self.logs: list[GenerationLog] = []
        self.propose_source = AZRProposeTasks(
            seed=config.seed, task_types=config.task_types, num_inputs=config.induction_inputs
        )
        self.solve_source = AZRSolveTasks(seed=config.seed, task_types=config.task_types)
        self._task_counter = 0

    @property
    def members(self) -> list[str]:
        return [*self.teachers, *self.students]

    def _params(self, name: str) -> list[torch.nn.Parameter]:
        params = [p for n, p in self.model.named_parameters() if f".{name}." in n]
        for p in params:
            p.requires_grad_(True)
        return params

    # ---- sampling ---------------------------------------------------------------------------------------------
    def _encode(self, prompt: str) -> torch.Tensor:
        messages = [{"role": "user", "content": prompt}]
        text = self.tokenizer.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)
        return self.tokenizer(text, return_tensors="pt").input_ids[0]

    @torch.no_grad()
    def _generate(self, member: str, prompt_ids: torch.Tensor, n: int) -> list[tuple[torch.Tensor, str]]:
        self.model.set_adapter(member)
        out = self.model.generate(
            input_ids=prompt_ids[None].repeat(n, 1),
            do_sample=True,
            temperature=self.config.temperature,
            max_new_tokens=self.config.max_new_tokens,
            pad_token_id=self.tokenizer.pad_token_id or self.tokenizer.eos_token_id,
        )
        completions = []
        for row in out[:, prompt_ids.numel() :]:
            eos = (row == self.tokenizer.eos_token_id).nonzero()
            row = row[: int(eos[0]) + 1] if len(eos) else row
            completions.append((row, self.tokenizer.decode(row, skip_special_tokens=True)))
        return completions

    # ---- one step ---------------------------------------------------------------------------------------------
    def step(self, step_seed: int) -> tuple[list[Sample], dict[str, Any]]:
        torch.manual_seed(step_seed)
        samples: list[Sample] = []
        proposals, reports, texts = [], [], []
        for t, teacher in enumerate(self.teachers):
            for _ in self.config.task_types:
                task = self.propose_source.task(self._task_counter)
                self._task_counter += 1
                ids = self._encode(task.prompt)
                [(completion, text)] = self._generate(teacher, ids, 1)
                proposals.append((t, task, ids, completion))
                texts.append(text)
        reports = judge_proposals([p[1] for p in proposals], texts, executor=self.executor)
        attempts: list[Attempt] = []
        valid = [[] for _ in self.teachers]
        per_teacher_index = [0] * len(self.teachers)
        for (t, _task, ids, completion), report in zip(proposals, reports, strict=True):
            p = per_teacher_index[t]
            per_teacher_index[t] += 1
            valid[t].append(report.valid)
            solved_by_judges: list[bool] = []
            if report.valid:
                truth = solve_truth(report.task_type, report.program, report.inputs, report.outputs, report.message)
                solve_task = make_solve_task(self.solve_source, 0, truth)
                sids = self._encode(solve_task.prompt)
                for s in range(len(self.students)):
                    solved = self._solve(s, solve_task, sids, samples)
                    attempts.append(Attempt(t, p, s, tuple(solved)))
                    if s in judges(t, len(self.students)):
                        solved_by_judges += solved
            reward = proposer_reward(report.valid, solved_by_judges)
            samples.append(Sample(self.teachers[t], f"propose:{report.task_type}", ids, completion, reward))
        if not attempts:  # nothing valid to solve: students learn on seed tasks
            for s in range(len(self.students)):
                task = self.solve_source.task(self._task_counter)
                self._task_counter += 1
                self._solve(s, task, self._encode(task.prompt), samples)
        return samples, {"valid": valid, "attempts": attempts}

    def _solve(self, s: int, task: Any, ids: torch.Tensor, samples: list[Sample]) -> list[bool]:
        solved = []
        for completion, text in self._generate(self.students[s], ids, self.config.solver_samples):
            verdict = judge_solve(task, text, executor=self.executor)
            solved.append(bool(verdict.passed))
            reward = solver_reward(verdict.valid, verdict.passed)
            samples.append(Sample(self.students[s], f"solve:{task.ground_truth['task_type']}", ids, completion, reward))
        return solved

    # ---- learning ---------------------------------------------------------------------------------------------
    def update(self, samples: list[Sample]) -> None:
        """One optimizer step per adapter on its own samples, advantages whitened per task key."""
        for name in self.members:
            mine = [x for x in samples if x.member == name]
            if not mine:
                continue
            inp = AdvantageInput(
                episodes=[],
                group_ids=[f"e{i}" for i in range(len(mine))],
                rewards=np.array([x.reward for x in mine]),
                task_keys=[x.key for x in mine],
            )
            adv = compute_advantages("task_relative_reinforce_pp", inp).episode
            if not np.any(adv):
                continue
            self.model.set_adapter(name)
            opt = self.optimizers[name]
            opt.zero_grad()
            for x, a in zip(mine, adv, strict=True):
                if a == 0 or x.completion_ids.numel() == 0:
                    continue
                ids = torch.cat([x.prompt_ids, x.completion_ids])[None]
                logits = self.model(input_ids=ids).logits[0, x.prompt_ids.numel() - 1 : -1]
                lp = torch.log_softmax(logits.float(), -1).gather(-1, x.completion_ids[:, None]).mean()
                (-float(a) * lp / len(mine)).backward()
            opt.step()

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
            self.optimizers[name] = torch.optim.Adam(self._params(name), lr=self.config.lr)
            applied[name] = label
        return applied

    def run_generation(self) -> GenerationLog:
        records_valid, records_attempts, rewards = [[] for _ in self.teachers], [], {}
        for k in range(self.config.steps_per_generation):
            samples, records = self.step(self.config.seed * 1_000_003 + self.generation * 1000 + k)
            self.update(samples)
            for t, v in enumerate(records["valid"]):
                offset = len(records_valid[t])
                records_valid[t] += v
                records_attempts += [
                    Attempt(a.teacher, a.proposal + offset, a.student, a.solved)
                    for a in records["attempts"]
                    if a.teacher == t
                ]
            for name in self.members:
                mine = [x.reward for x in samples if x.member == name]
                rewards[name] = float(np.mean(mine)) if mine else 0.0
        t_fit = teacher_fitness(len(self.teachers), records_valid, records_attempts, len(self.students))
        s_fit = student_fitness(len(self.students), records_attempts)
        operators = {name: "none" for name in self.members}
        if self.config.evolve:
            operators = {**self.evolve(self.teachers, t_fit), **self.evolve(self.students, s_fit)}
        flat_valid = [v for vs in records_valid for v in vs]
        solved = [x for a in records_attempts for x in a.solved]
        log = GenerationLog(
            self.generation,
            float(np.mean(flat_valid)) if flat_valid else 0.0,
            float(np.mean(solved)) if solved else 0.0,
            float(np.mean(t_fit)) if t_fit else 0.0,
            dict(zip([*self.teachers, *self.students], [*t_fit, *s_fit], strict=True)),
            operators,
            rewards,
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
            self.optimizers[name] = torch.optim.Adam(self._params(name), lr=self.config.lr)
            self.optimizers[name].load_state_dict(opt_state)
        self.generation, self._task_counter = state["generation"], state["task_counter"]
        self.rng.setstate(state["rng"])
        self.logs = [GenerationLog(**x) for x in state["logs"]]
