"""Valid solutions of a depth task other than the reference chain: what the data-flow credit must accept (#33).

Step k's *producers* are the calls of offered tools that return the step's output from grounded inputs: values the
question states, the tool's schema constants, and the outputs of earlier steps (taken by derivation). The reference
call is one of them; a commutative tool with its arguments swapped (`multiply`, `add_numbers`, `distance_km`) and
another tool giving the same value (`add_numbers(x, x)` for `multiply(x, 2)`) are others. Effect tools (`write_file`,
`schedule_event`) keep their reference call: another call could report the same name with another effect.

`alternative_solutions` turns them into trajectories, each labelled with what it varies:
- `swap` / `reroute`: one step done by another producer (same tool and values in another order / anything else);
- `permuted`: every producer of a level issued together (independent calls), in each order;
and each in two formats: one level per turn with values copied from the tool messages, and one TIER chain with
`API_RESPONSE_<id>` placeholders. The enumeration is exhaustive over single-call producers with these inputs.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from rlvr_gym import Task, ToolCall
from rlvr_gym.tool_markup import format_tool_calls

from .executor import value_key
from .provenance import question_literals
from .toolset import Tool, Toolset

_JSON_TYPES = {"number": (int, float), "integer": (int,), "string": (str,)}
MAX_PERMUTATIONS = 6  # orders tried per level with several producers


@dataclass(frozen=True)
class Producer:
    """A call that returns a required value: literal arguments plus arguments taken from earlier required values."""

    name: str
    literals: tuple[tuple[str, Any], ...]
    derived: tuple[tuple[str, int], ...]  # parameter -> index of the required value it takes

    def values(self, outputs: list[Any]) -> dict[str, Any]:
        return dict(self.literals) | {p: outputs[j] for p, j in self.derived}


def _fits(value: Any, spec: dict[str, Any]) -> bool:
    if "enum" in spec:
        return value in spec["enum"]
    kinds = _JSON_TYPES.get(spec.get("type", ""), ())
    return isinstance(value, kinds) and not isinstance(value, bool)


def _options(tool: Tool, literals: list[Any], outputs: list[Any], k: int) -> Iterator[Producer]:
    """Every assignment of the tool's parameters from the grounded pool before step k (type-compatible only)."""
    properties = tool.parameters.get("properties", {})
    per_param: list[list[tuple[str, Any, int | None]]] = []
    for name, spec in properties.items():
        constants = [*spec.get("enum", ()), *([spec["default"]] if "default" in spec else [])]
        pool = [(name, v, None) for v in dict.fromkeys([*literals, *constants]) if _fits(v, spec)]
        pool += [(name, outputs[j], j) for j in range(k) if _fits(outputs[j], spec)]
        per_param.append(pool)
    for combo in itertools.product(*per_param):
        yield Producer(
            tool.name,
            tuple(sorted((p, v) for p, v, j in combo if j is None)),
            tuple(sorted((p, j) for p, v, j in combo if j is not None)),
        )


def producers(task: Task, toolset: Toolset) -> list[list[Producer]]:
    """Per step, the reference call first, then every other single call of an offered tool giving its output."""
    truth = task.ground_truth
    outputs, chain = truth["outputs"], truth["chain"]
    stated = question_literals(truth)
    literals = list(dict.fromkeys(v for step in chain for v in step["arguments"].values()))
    offered = [toolset[n] for n in task.metadata.get("tool_names", []) if n in toolset]
    world = toolset.new_world()
    levels: list[list[Producer]] = []
    for k, step in enumerate(chain):
        reference = Producer(
            step["name"],
            tuple(sorted(step["arguments"].items())),
            ((step["chained"], k - 1),) if step["chained"] else (),
        )
        found = [reference]
        if not toolset[step["name"]].meta.get("effect"):
            want = value_key(outputs[k])
            for tool in offered:
                if tool.meta.get("effect"):
                    continue
                for option in _options(tool, literals, outputs, k):
                    args = option.values(outputs)
                    if option in found or any(value_key(v) == want for v in args.values()):
                        continue  # the reference, or a pass-through of the wanted value
                    outcome = tool.run(world, args)
                    if outcome.ok and value_key(outcome.result) == want and want not in stated:
                        found.append(option)
        levels.append(found)
        toolset[step["name"]].run(world, reference.values(outputs))  # effects of the reference step, for later steps
    return levels


def _is_swap(a: Producer, b: Producer, outputs: list[Any]) -> bool:
    def values(p: Producer) -> list[str]:
        return sorted(json.dumps(v) for v in p.values(outputs).values())

    return a.name == b.name and values(a) == values(b)


def as_turns(task: Task, levels: list[list[Producer]]) -> list[str]:
    """One message per level (its calls together, in the given order), values copied, then the answer line."""
    outputs = task.ground_truth["outputs"]
    turns = [
        format_tool_calls([ToolCall(name=p.name, arguments=json.dumps(p.values(outputs))) for p in level])
        for level in levels
    ]
    answer = task.ground_truth["answer"]
    shown = str(int(answer)) if isinstance(answer, float) and answer.is_integer() else str(answer)
    return [*turns, f"Answer: {shown}"]


def as_chain(levels: list[list[Producer]]) -> list[str]:
    """One TIER chain: levels in order, derived arguments as placeholders to the level's first call."""
    calls, first_of = [], []
    for level in levels:
        first_of.append(len(calls))
        for p in level:
            args = dict(p.literals) | {name: f"API_RESPONSE_{first_of[j]}" for name, j in p.derived}
            calls.append(ToolCall(id=str(len(calls)), name=p.name, arguments=json.dumps(args)))
    return [format_tool_calls(calls, style="tier", return_mode="one")]


def alternative_solutions(task: Task, toolset: Toolset) -> list[tuple[str, list[str]]]:
    """(label, trajectory) for every alternative the producers allow; labels: swap, reroute, permuted (+ format)."""
    outputs = task.ground_truth["outputs"]
    levels = producers(task, toolset)
    reference = [[level[0]] for level in levels]
    plans: list[tuple[str, list[list[Producer]]]] = []
    for k, level in enumerate(levels):
        for other in level[1:]:
            label = "swap" if _is_swap(level[0], other, outputs) else "reroute"
            plans.append((label, [*reference[:k], [other], *reference[k + 1 :]]))
        if len(level) > 1:
            for order in itertools.islice(itertools.permutations(level), MAX_PERMUTATIONS):
                plans.append(("permuted", [*reference[:k], list(order), *reference[k + 1 :]]))
    out = []
    for label, plan in plans:
        out.append((f"{label}/turns", as_turns(task, plan)))
        out.append((f"{label}/chain", as_chain(plan)))
    return out
