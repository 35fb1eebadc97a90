"""Non-solving proposer policies for `rlvr-gym check-env`'s reward floor (the env hook `floor_policies`).

One fixed proposal sent for every task: `x + 1`, an identity, a constant, and a program copied from the public
seed bank, each with fixed inputs. A proposer trained on a reward these can keep collapses to one program
(issue #42); the reward contract (docs/reward-contract.md) allows them at most 5% of the oracle's mean.
Solve tasks have their own floor in the generic battery (template echoes of the answer block).
"""

from __future__ import annotations

import random

from rlvr_gym import Task

from . import bank
from .tasks import proposal_text

FIXED_PROGRAMS = {
    "x_plus_one": ("def f(x):\n    return x + 1", lambda i: (i + 1,), "add one"),
    "identity": ("def f(x):\n    return x", lambda i: (i + 1,), "the input itself"),
    "constant": ("def f(x):\n    return 0", lambda i: (i + 1,), "always zero"),
}


def floor_policies(task: Task) -> dict[str, list[str]]:
    """One fixed proposal per policy, in the task type's answer format (induction: `num_inputs` inputs)."""
    if task.metadata.get("role") != "propose":
        return {}
    kind = task.ground_truth["task_type"]
    count = int(task.metadata.get("num_inputs", 1)) if kind == "induction" else 1
    policies = {}
    for name, (program, make_input, message) in FIXED_PROGRAMS.items():
        policies[name] = [proposal_text(kind, program, [make_input(i) for i in range(count)], message)]
    seed = bank.SEEDS[0]
    rng = random.Random(0)
    inputs = bank.distinct_inputs(seed, rng, count)
    policies[f"fixed_seed_{seed.name}"] = [proposal_text(kind, seed.source, inputs, seed.message)]
    return policies
