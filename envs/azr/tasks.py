"""AZR task sources: solve tasks from the seed programs, propose tasks that show seed programs as references.

`solve_task` also builds solve tasks from validated proposals (the population's buffer), so both paths give the
same Task shape. Ground truth holds every input and output as plain-data trees (JSON-able, exact).
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any

from rlvr_gym.family import TaskSource
from rlvr_gym.sandboxes.python_programs.plain_values import decode_tree, encode_tree
from rlvr_gym.types import Task

from . import bank, conditions
from .blocks import fence
from .programs import args_text, literal_text
from .prompts import TASK_TYPES, propose_prompt, solve_prompt

DIFFICULTY = {"deduction": 2, "abduction": 3, "induction": 4}
INDUCTION_INPUTS = 6  # half shown, half hidden
NUM_REFERENCES = 2
MIN_ABDUCTION_OUTPUT_CHARS = 10


def _types(task_types: Sequence[str] | str | None) -> tuple[str, ...]:
    chosen = (task_types,) if isinstance(task_types, str) else tuple(task_types or TASK_TYPES)
    unknown = [t for t in chosen if t not in TASK_TYPES]
    if unknown or not chosen:
        raise ValueError(f"task_types must be drawn from {TASK_TYPES}, got {chosen}")
    return chosen


def solve_answer(task_type: str, program: str, inputs: Sequence[tuple], outputs: Sequence[Any]) -> str:
    """The reference answer of a solve task."""
    if task_type == "deduction":
        return fence("output", literal_text(outputs[0]))
    if task_type == "abduction":
        return fence("input", args_text(inputs[0]))
    return fence("python", program)


def solve_truth(task_type: str, program: str, inputs: Sequence[tuple], outputs: Sequence[Any], message: str = "",
                seed_name: str | None = None) -> dict[str, Any]:
    visible = len(inputs) // 2 if task_type == "induction" else 1
    return {"task_type": task_type, "program": program, "inputs": [encode_tree(list(a)) for a in inputs],
            "outputs": [encode_tree(o) for o in outputs], "visible": visible, "message": message,
            "seed_name": seed_name}


def truth_inputs(truth: dict[str, Any]) -> list[tuple]:
    return [tuple(decode_tree(t)) for t in truth["inputs"]]


def truth_outputs(truth: dict[str, Any]) -> list[Any]:
    return [decode_tree(t) for t in truth["outputs"]]


def make_solve_task(source: TaskSource, index: int, truth: dict[str, Any], **meta: Any) -> Task:
    inputs, outputs = truth_inputs(truth), truth_outputs(truth)
    task_type = truth["task_type"]
    prompt = solve_prompt(task_type, truth["program"], inputs, outputs, truth["visible"], truth["message"])
    return source.make_task(index, prompt=prompt, ground_truth=truth,
                            reference_actions=[solve_answer(task_type, truth["program"], inputs, outputs)],
                            difficulty=DIFFICULTY[task_type], task_type=task_type, role="solve", **meta)


def _visible(truth: dict[str, Any]) -> str:
    """The fingerprint of a solve task: what its prompt shows (so equal prompts always fall in one split)."""
    inputs, outputs = truth_inputs(truth), truth_outputs(truth)
    return solve_prompt(truth["task_type"], truth["program"], inputs, outputs, truth["visible"], truth["message"])


class AZRSolveTasks(TaskSource):
    """Solve tasks on the seed programs; task type cycles through `task_types` by index."""

    family = "azr"

    def __init__(self, *, split: str = "train", seed: int = 0, task_types: Sequence[str] | str | None = None) -> None:
        super().__init__(split=split, seed=seed)
        self.task_types = _types(task_types)

    def _draw(self, task_type: str, rng: random.Random) -> dict[str, Any]:
        program = rng.choice([s for s in bank.SEEDS if s.many_outputs or task_type != "abduction"])
        count = INDUCTION_INPUTS if task_type == "induction" else 1
        inputs = bank.distinct_inputs(program, rng, count)
        outputs = [bank.output_of(program.source, args) for args in inputs]
        while task_type == "abduction" and len(literal_text(outputs[0])) < MIN_ABDUCTION_OUTPUT_CHARS:
            inputs = [program.make_input(rng)]  # short outputs repeat across draws (and are easy to guess)
            outputs = [bank.output_of(program.source, inputs[0])]
        return solve_truth(task_type, program.source, inputs, outputs, program.message, program.name)

    def task(self, index: int) -> Task:
        task_type = self.task_types[index % len(self.task_types)]
        truth = self.draw(index, lambda rng: self._draw(task_type, rng), _visible)
        return make_solve_task(self, index, truth)


class AZRProposeTasks(TaskSource):
    """Propose tasks: reference seed programs are shown; the oracle proposes another seed program.

    With `targets=True` (the standalone env) each task also names a target (`conditions.py`: signature, return
    type, one construct) and the oracle proposes a program synthesised for it; the population's loop uses the
    untargeted tasks, whose reward is learnability from its solvers."""

    family = "azr"

    def __init__(self, *, split: str = "train", seed: int = 0, task_types: Sequence[str] | str | None = None,
                 num_inputs: int = INDUCTION_INPUTS, targets: bool = False) -> None:
        super().__init__(split=split, seed=seed)
        self.task_types = _types(task_types)
        self.num_inputs = num_inputs
        self.targets = targets

    def _draw(self, task_type: str, rng: random.Random) -> dict[str, Any]:
        chosen = rng.sample(bank.SEEDS, NUM_REFERENCES + 1)
        refs = []
        for seed in chosen[:NUM_REFERENCES]:
            args = seed.make_input(rng)
            refs.append({"program": seed.source, "input": encode_tree(list(args)),
                         "output": encode_tree(bank.output_of(seed.source, args))})
        oracle = chosen[-1]
        count = self.num_inputs if task_type == "induction" else 1
        truth = {"task_type": task_type, "references": refs, "oracle": oracle.name,
                 "oracle_inputs": [encode_tree(list(a)) for a in bank.distinct_inputs(oracle, rng, count)]}
        if self.targets:
            target, program, hint, inputs, probes = conditions.draw_target(rng, count)
            truth.update(target=target.as_dict(), oracle_program=program, oracle_message=hint,
                         oracle_inputs=[encode_tree(list(a)) for a in inputs],
                         probe_inputs=[encode_tree(list(a)) for a in probes])
        return truth

    def task(self, index: int) -> Task:
        task_type = self.task_types[index % len(self.task_types)]
        truth = self.draw(index, lambda rng: self._draw(task_type, rng), repr)
        refs = [(r["program"], tuple(decode_tree(r["input"])), decode_tree(r["output"])) for r in truth["references"]]
        oracle = bank.BY_NAME[truth["oracle"]]
        program, message = truth.get("oracle_program", oracle.source), truth.get("oracle_message", oracle.message)
        inputs = [tuple(decode_tree(t)) for t in truth["oracle_inputs"]]
        target = conditions.Target(**truth["target"]) if "target" in truth else None
        return self.make_task(index, prompt=propose_prompt(task_type, refs, self.num_inputs, target),
                              ground_truth=truth,
                              reference_actions=[proposal_text(task_type, program, inputs, message)],
                              difficulty=DIFFICULTY[task_type], task_type=task_type, role="propose",
                              num_inputs=self.num_inputs)


def proposal_text(task_type: str, program: str, inputs: Sequence[tuple], message: str = "") -> str:
    """A proposal in the answer format (oracles, tests, wrong answers)."""
    parts = [fence("python", program)]
    if task_type == "induction":
        parts += [fence("inputs", "\n".join(args_text(a) for a in inputs)), fence("message", message)]
    else:
        parts.append(fence("input", args_text(inputs[0])))
    return "\n".join(parts)
