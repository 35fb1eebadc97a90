"""Non-solving code policies for `rlvr-gym check-env`'s reward floor (the env hook `floor_policies`).

Constant bodies, `None`, an identity, `pass`, and untagged text that happens to parse as Python: the submissions
a policy can send for every problem without reading it. None of them may earn more than 5% of the oracle's mean
(docs/reward-contract.md); partial credit counts only tests beyond what such programs pass (`trivial.py`).
"""

from __future__ import annotations

from rlvr_gym import Task

from .actions import format_submission
from .spec import spec_of

BODIES = {
    "return_true": "return True",
    "return_false": "return False",
    "return_zero": "return 0",
    "return_one": "return 1",
    "return_none": "return None",
    "return_empty_string": "return ''",
    "return_empty_list": "return []",
    "identity": "return args[0] if args else None",
    "pass": "pass",
}


def floor_policies(task: Task) -> dict[str, list[str]]:
    """Constant programs named after their body, each submitted explicitly, plus the same bodies untagged."""
    entry = spec_of(task).entry_point
    programs = {name: f"def {entry}(*args, **kwargs):\n    {body}\n" for name, body in BODIES.items()}
    policies = {f"submit_{name}": [format_submission(code)] for name, code in programs.items()}
    policies["untagged_program"] = [programs["return_true"]]
    policies["untagged_body"] = ["return True"]
    return policies
