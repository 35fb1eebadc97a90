"""AZR's task buffer: every valid proposal joins it, propose prompts draw references from it, solvers train on it.

One buffer per task type, seeded with the seed programs (AZR seeds with a single identity program; ours has the
14 of `bank.py`), which are never evicted. A valid proposal is added unless an entry with the same canonical program
(`programs.check_program`: layout and comments ignored) and the same inputs is already there; past `capacity`
proposals the oldest proposal is dropped, so the buffer stays bounded however long self-play runs. Entries hold
plain-data trees (`encode_tree`), so the buffer goes into a checkpoint as JSON-able state.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

from rlvr_gym.sandboxes.python_programs.plain_values import decode_tree, encode_tree
from rlvr_gym.types import Task

from . import bank
from .programs import args_text, check_program
from .prompts import propose_prompt
from .tasks import DIFFICULTY, INDUCTION_INPUTS, NUM_REFERENCES, AZRSolveTasks, make_solve_task, solve_truth

DEFAULT_CAPACITY = 256  # proposals kept per task type (seeds come on top)


@dataclass(frozen=True)
class Entry:
    """One task in the buffer: a program, its inputs and outputs (encoded trees), the induction hint."""

    program: str
    inputs: tuple[Any, ...]
    outputs: tuple[Any, ...]
    message: str = ""
    seed: bool = False

    def key(self) -> str:
        """Dedup key: canonical program text plus the exact inputs."""
        canonical = check_program(self.program).canonical or self.program
        return canonical + "|" + "|".join(args_text(tuple(decode_tree(t))) for t in self.inputs)


def _seed_entries(task_type: str, rng: random.Random) -> list[Entry]:
    out = []
    for seed in bank.SEEDS:
        if task_type == "abduction" and not seed.many_outputs:
            continue
        count = INDUCTION_INPUTS if task_type == "induction" else 1
        inputs = bank.distinct_inputs(seed, rng, count)
        outputs = [bank.output_of(seed.source, a) for a in inputs]
        out.append(
            Entry(
                seed.source,
                tuple(encode_tree(list(a)) for a in inputs),
                tuple(encode_tree(o) for o in outputs),
                seed.message,
                seed=True,
            )
        )
    return out


class TaskBuffer:
    """Per task type: seed entries plus up to `capacity` deduplicated valid proposals (oldest dropped first)."""

    def __init__(self, task_types: Sequence[str], *, seed: int = 0, capacity: int = DEFAULT_CAPACITY) -> None:
        self.task_types = tuple(task_types)
        self.capacity = capacity
        self.source = AZRSolveTasks(seed=seed, task_types=self.task_types)  # ids and metadata of built tasks
        rng = random.Random(f"azr-buffer|{seed}")
        self.entries: dict[str, list[Entry]] = {t: _seed_entries(t, rng) for t in self.task_types}
        self._keys = {t: {e.key() for e in es} for t, es in self.entries.items()}
        self.added = 0  # valid proposals that were new (the growth the run log reports)

    def __len__(self) -> int:
        return sum(len(es) for es in self.entries.values())

    def proposals(self, task_type: str) -> list[Entry]:
        return [e for e in self.entries[task_type] if not e.seed]

    def add(
        self, task_type: str, program: str, inputs: Sequence[tuple], outputs: Sequence[Any], message: str = ""
    ) -> bool:
        """Add one valid proposal; False when it duplicates an entry."""
        entry = Entry(
            program, tuple(encode_tree(list(a)) for a in inputs), tuple(encode_tree(o) for o in outputs), message
        )
        key = entry.key()
        if key in self._keys[task_type]:
            return False
        entries = self.entries[task_type]
        entries.append(entry)
        self._keys[task_type].add(key)
        if len(self.proposals(task_type)) > self.capacity:
            oldest = next(i for i, e in enumerate(entries) if not e.seed)
            self._keys[task_type].discard(entries.pop(oldest).key())
        self.added += 1
        return True

    def sample(self, task_type: str, rng: random.Random, k: int) -> list[Entry]:
        """k distinct entries of one task type, uniformly (all of them when there are fewer)."""
        entries = self.entries[task_type]
        return rng.sample(entries, min(k, len(entries)))

    def propose_task(self, task_type: str, rng: random.Random, index: int, num_inputs: int) -> Task:
        """An untargeted propose task whose references are drawn from the buffer (AZR's conditioning)."""
        refs = [
            {"program": e.program, "input": e.inputs[0], "output": e.outputs[0]}
            for e in self.sample(task_type, rng, NUM_REFERENCES)
        ]
        shown = [(r["program"], tuple(decode_tree(r["input"])), decode_tree(r["output"])) for r in refs]
        return self.source.make_task(
            index,
            prompt=propose_prompt(task_type, shown, num_inputs),
            ground_truth={"task_type": task_type, "references": refs},
            difficulty=DIFFICULTY[task_type],
            task_type=task_type,
            role="propose",
            num_inputs=num_inputs,
        )

    def solve_task(self, task_type: str, rng: random.Random, index: int, entry: Entry | None = None) -> Task:
        """A solve task on `entry` (default: a uniform draw from the buffer)."""
        entry = entry or self.sample(task_type, rng, 1)[0]
        inputs = [tuple(decode_tree(t)) for t in entry.inputs]
        outputs = [decode_tree(t) for t in entry.outputs]
        if task_type != "induction":
            inputs, outputs = inputs[:1], outputs[:1]
        truth = solve_truth(task_type, entry.program, inputs, outputs, entry.message)
        return make_solve_task(self.source, index, truth)

    def state(self) -> dict[str, Any]:
        return {"entries": {t: [asdict(e) for e in es] for t, es in self.entries.items()}, "added": self.added}

    def load(self, state: dict[str, Any]) -> None:
        self.entries = {
            t: [Entry(e["program"], tuple(e["inputs"]), tuple(e["outputs"]), e["message"], e["seed"]) for e in es]
            for t, es in state["entries"].items()
        }
        self._keys = {t: {e.key() for e in es} for t, es in self.entries.items()}
        self.added = state["added"]
