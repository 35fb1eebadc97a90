"""The prompt texts of the six AZR roles (three task types x propose/solve)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from .blocks import fence
from .programs import ALLOWED_MODULES, args_text, literal_text

if TYPE_CHECKING:
    from .conditions import Target

TASK_TYPES = ("deduction", "abduction", "induction")
STUB = fence("python", "def f(...):\n    ...")
RULES = (
    "Programs define one top-level function `f`, are deterministic (no time, randomness, IO or printing that "
    f"matters), may import only {', '.join(sorted(ALLOWED_MODULES))}, and take and return plain Python literals."
)


def _pair(args: tuple, output: object) -> str:
    return f"f({args_text(args)}) == {literal_text(output)}"


def solve_prompt(task_type: str, program: str, inputs: Sequence[tuple], outputs: Sequence[object], visible: int,
                 message: str) -> str:
    if task_type == "deduction":
        return (f"Predict the output of this program on the given input.\n\n{fence('python', program)}\n\n"
                f"Input: f({args_text(inputs[0])})\n\nAnswer with the output as a Python literal in one block:\n"
                f"{fence('output', '<value>')}")
    if task_type == "abduction":
        return (f"Find an input for which this program returns the given output.\n\n{fence('python', program)}\n\n"
                f"Output: {literal_text(outputs[0])}\n\nAnswer with the arguments of the call, as Python literals "
                f"separated by commas, in one block:\n{fence('input', '<arg1>, <arg2>, ...')}")
    pairs = "\n".join(_pair(a, o) for a, o in zip(inputs[:visible], outputs[:visible], strict=True))
    return (f"Write the program `f` that produced these input/output pairs; it will also be checked on hidden "
            f"inputs.\n\nHint: {message}\n\n{pairs}\n\n{RULES}\n\nAnswer with the program in one block:\n"
            f"{STUB}")


def propose_prompt(task_type: str, references: Sequence[tuple[str, tuple, object]], num_inputs: int,
                   target: Target | None = None) -> str:
    shown = "\n\n".join(f"Example {i + 1}:\n{fence('python', src)}\n{_pair(args, out)}"
                        for i, (src, args, out) in enumerate(references))
    what = {
        "deduction": "a program and an input whose output is hard but possible to predict",
        "abduction": "a program and an input such that recovering an input from the output is hard but possible",
        "induction": f"a program and {num_inputs} distinct inputs such that the program is hard but possible to "
                     "infer from half of the input/output pairs and a short hint",
    }[task_type]
    if task_type == "induction":
        form = (f"{STUB}\n{fence('inputs', '<one argument list per line>')}\n"
                f"{fence('message', '<a one-line hint>')}")
    else:
        form = f"{STUB}\n{fence('input', '<arg1>, <arg2>, ...')}"
    aim = "" if target is None else (
        f" Target: the program must be {target.describe()}, its inputs must have that signature, and its output "
        f"must depend on its input (it is also run on other inputs of that signature).")
    return (f"Propose a new {task_type} task: {what}. It must differ from the examples.{aim}\n\n{shown}\n\n"
            f"{RULES}\n\nAnswer with exactly these blocks:\n{form}")
