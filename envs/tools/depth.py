"""Depth-stratified compositional tool tasks (DepthBench-like): depth d = a chain of d calls where each call needs
the previous call's output. The expected answer is computed by executing the reference chain in a fresh world.

Per-index determinism: item i uses `random.Random(f"tooldepth:{seed}:{split}:{i}")` and depth `depths[i % len]`.
Splits: `train` uses only non-held-out tools; `unseen` chains contain at least one held-out tool (DepthBench keeps
validation tools disjoint from training tools); `all` uses every tool.
"""

from __future__ import annotations

import json
import random
from typing import Any, Literal

from pydantic import BaseModel, Field, field_validator

from rlvr_gym import Message, Task, ToolCall
from rlvr_gym.toolcalls import format_tool_calls

from .catalog import HELD_OUT, default_toolset
from .env import ToolEnv
from .prompts import tool_system_prompt
from .toolset import Tool, Toolset

MAX_ATTEMPTS = 400


class DepthConfig(BaseModel):
    depths: list[int] = Field(default_factory=lambda: [1, 2, 3, 4, 5, 6])
    split: Literal["train", "unseen", "all"] = "train"
    seed: int = 0
    extra_tools: int = Field(3, ge=0, le=20, description="distractor schemas shown besides the chain's tools")
    size: int | None = Field(None, ge=1, description="number of tasks; None = unbounded generator")

    @field_validator("depths")
    @classmethod
    def _depths(cls, value: list[int]) -> list[int]:
        if not value or any(not 1 <= d <= 6 for d in value):
            raise ValueError("depths must be a non-empty list of values in 1..6")
        return list(value)


def _display(value: Any) -> str:
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def _phrase(tool: Tool, args: dict[str, Any], chained: str | None, inner: str | None) -> str:
    shown = {k: (f"[{inner}]" if k == chained else _display(v)) for k, v in args.items()}
    return tool.meta["phrase"].format(**shown)


def _pool(toolset: Toolset, split: str) -> list[Tool]:
    tools = [toolset[n] for n in toolset.names()]
    return tools if split != "train" else [t for t in tools if t.name not in HELD_OUT]


def _draw_chain(rng: random.Random, pool: list[Tool], depth: int) -> list[tuple[Tool, dict[str, Any], str | None]]:
    """A random chain [(tool, literal args, chained parameter)], or [] when the walk got stuck."""
    chain: list[tuple[Tool, dict[str, Any], str | None]] = []
    used: set[str] = set()
    previous: str | None = None
    for _ in range(depth):
        if previous is None:
            tool, param = rng.choice(pool), None
        else:  # uniform over tools first, then over the tool's parameters that take the previous output
            tools = [t for t in pool if t.name not in used and previous in t.meta["tags"].values()]
            if not tools:
                return []
            tool = rng.choice(tools)
            param = rng.choice(sorted(p for p, tag in tool.meta["tags"].items() if tag == previous))
        chain.append((tool, tool.meta["sample"](rng), param))
        used.add(tool.name)
        previous = tool.meta["returns"]
    return chain


def _run_chain(toolset: Toolset, chain: list[tuple[Tool, dict[str, Any], str | None]]) -> list[Any] | None:
    world = toolset.new_world()
    outputs: list[Any] = []
    for tool, args, param in chain:
        call_args = dict(args)
        if param is not None:
            call_args[param] = outputs[-1]
        outcome = tool.run(world, call_args)
        if not outcome.ok:
            return None
        outputs.append(outcome.result)
    return outputs


def generate_task(index: int, config: DepthConfig, toolset: Toolset | None = None) -> Task:
    """Item `index` of the generator: a pure function of (config, index)."""
    toolset = toolset or default_toolset()
    rng = random.Random(f"tooldepth:{config.seed}:{config.split}:{index}")
    depth = config.depths[index % len(config.depths)]
    pool = _pool(toolset, config.split)
    for _ in range(MAX_ATTEMPTS):
        chain = _draw_chain(rng, pool, depth)
        if not chain:
            continue
        if config.split == "unseen" and not any(t.name in HELD_OUT for t, _, _ in chain):
            continue
        outputs = _run_chain(toolset, chain)
        if outputs is not None:
            return _build_task(index, config, toolset, rng, chain, outputs, pool)
    raise RuntimeError(f"could not draw a depth-{depth} chain for index {index}")  # pragma: no cover


def _build_task(
    index: int, config: DepthConfig, toolset: Toolset, rng: random.Random,
    chain: list[tuple[Tool, dict[str, Any], str | None]], outputs: list[Any], pool: list[Tool],
) -> Task:
    phrase: str | None = None
    calls: list[ToolCall] = []
    for step, (tool, args, param) in enumerate(chain):
        phrase = _phrase(tool, args, param, phrase)
        call_args = dict(args)
        if param is not None:
            call_args[param] = f"API_RESPONSE_{step - 1}"
        calls.append(ToolCall(id=str(step), name=tool.name, arguments=json.dumps(call_args)))
    chain_names = [t.name for t, _, _ in chain]
    others = sorted(t.name for t in pool if t.name not in chain_names)
    offered = chain_names + rng.sample(others, min(config.extra_tools, len(others)))
    rng.shuffle(offered)
    question = f"What is {phrase}?"
    system = tool_system_prompt(toolset.schemas(offered))
    depth = len(chain)
    return Task(
        id=f"tooldepth-{config.split}-s{config.seed}-{index}",
        prompt=[Message(role="system", content=system), Message(role="user", content=question)],
        ground_truth={"answer": outputs[-1], "outputs": outputs, "return_mode": "one",
                      "chain": [c.model_dump() for c in calls]},
        reference_actions=[format_tool_calls(calls, style="tier", return_mode="one")],
        metadata={"source": "tooldepth", "index": index, "seed": config.seed, "split": config.split,
                  "depth": depth, "difficulty": depth, "tool_names": offered, "tools": toolset.schemas(offered),
                  "chain_tools": chain_names,
                  "question": question},
    )


class ToolDepthEnv(ToolEnv):
    """`rlvr/ToolDepth-v0`: compositional tool queries of depth 1-6 scored with the TIER rubric."""

    def __init__(
        self, *, depths: list[int] | None = None, split: str = "train", seed: int = 0, extra_tools: int = 3,
        size: int | None = None, **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self.config = DepthConfig(depths=depths or [1, 2, 3, 4, 5, 6], split=split, seed=seed,  # type: ignore[arg-type]
                                  extra_tools=extra_tools, size=size)

    @property
    def num_tasks(self) -> int | None:
        return self.config.size

    def get_task(self, index: int) -> Task:
        return generate_task(index, self.config, self.toolset)
