"""Tool tasks: depth-stratified call chains (generated, DepthBench-like) and BFCL single-turn items (loaded).

Depth d = a chain of d calls where each call takes the previous call's output; the expected answer comes from
executing the reference chain in a fresh world. Difficulty on the shared 1..5 scale is min(depth, 5).

Splits: questions are assigned to train or eval by a hash of their text (`rlvr_gym.family.split_of`), so the splits
are disjoint by design. The tool pool is a separate knob: `seen` (no held-out tool), `unseen` (every chain uses a
held-out tool; DepthBench keeps validation tools apart from training tools) or `all`.
No repeats: index i keeps only questions whose hash falls in residue class i mod `window` (and, the depth being
i mod len(depths), two indices can share a question only when they are a multiple of lcm(window, len(depths))
apart), so no question repeats within the first `window` indices and repeats beyond are as rare as the space allows.

BFCL is an evaluation benchmark: its `eval` split is the whole category, its `train` split is empty.
"""

from __future__ import annotations

import json
import random
from collections.abc import Sequence
from typing import Any, Literal

from pydantic import BaseModel, Field, field_validator

from rlvr_gym import Message, Task, ToolCall
from rlvr_gym.family import TaskSource, split_of, stable_seed
from rlvr_gym.tool_markup import format_tool_calls

from . import bfcl
from .catalog import HELD_OUT, default_toolset
from .executor import value_key
from .prompts import CALL_FORMAT, tool_system_prompt, tools_block
from .toolset import Tool, Toolset

MAX_ATTEMPTS = 50_000
ChainDraft = list[tuple[Tool, dict[str, Any], str | None]]  # (tool, literal arguments, chained parameter)


class DepthConfig(BaseModel):
    depths: list[int] = Field(default_factory=lambda: [1, 2, 3, 4, 5, 6])
    tools: Literal["seen", "unseen", "all"] = "seen"
    extra_tools: int = Field(3, ge=0, le=20, description="distractor schemas shown besides the chain's tools")
    size: int | None = Field(None, ge=1, description="number of tasks; None = unbounded generator")
    reward_mode: Literal["dataflow", "paper"] = Field(
        "dataflow", description="dataflow (default: process credit follows produced values) or paper (TIER's own)"
    )

    @field_validator("depths")
    @classmethod
    def _depths(cls, value: list[int]) -> list[int]:
        if not value or any(not 1 <= d <= 6 for d in value):
            raise ValueError("depths must be a non-empty list of values in 1..6")
        return list(value)


class DepthTasks(TaskSource):
    """Generated call chains; task `index` is a pure function of (config, split, seed, index)."""

    family = "tools"

    def __init__(self, *, split: str = "train", seed: int = 0, toolset: Toolset | None = None, **config: Any) -> None:
        if split in ("unseen", "all"):  # the old `split=` values that named a tool pool: eval on that pool
            split, config["tools"] = "eval", split
        super().__init__(split=split, seed=seed)
        self.config = DepthConfig(**config)
        self.toolset = toolset or default_toolset()
        self.window = 128 if split == "train" else 16  # eval keeps 1 in 10 questions: a smaller window, same cost
        tools = [self.toolset[n] for n in self.toolset.names()]
        self.pool = tools if self.config.tools != "seen" else [t for t in tools if t.name not in HELD_OUT]
        self.consumers = {
            tag: [t for t in self.pool if tag in t.meta["tags"].values()]  # tag -> tools taking it
            for tag in {t.meta["returns"] for t in self.pool}
        }

    def __len__(self) -> int:
        if self.config.size is None:
            raise TypeError("DepthTasks is an unbounded generator unless `size` is set")
        return self.config.size

    def task(self, index: int) -> Task:
        depth = self.config.depths[index % len(self.config.depths)]
        for attempt in range(MAX_ATTEMPTS):
            rng = self.rng(index, attempt)
            chain = _draw_chain(rng, self.pool, self.consumers, depth)
            if not chain or (self.config.tools == "unseen" and not any(t.name in HELD_OUT for t, _, _ in chain)):
                continue
            question = _question(chain)
            if split_of(question, self.eval_fraction) != self.split:
                continue
            if stable_seed("tools-window", question) % self.window != index % self.window:
                continue
            outputs = _run_chain(self.toolset, chain)
            if outputs is not None:
                return self._build(index, rng, chain, outputs, question)
        raise RuntimeError(f"tools: no depth-{depth} chain for index {index}")  # pragma: no cover

    def from_steps(self, steps: list[tuple[str, dict[str, Any], str | None]], offered: Sequence[str] = ()) -> Task:
        """A task for a hand-picked chain `(tool, literal arguments, chained parameter)` with `offered` tools on offer
        besides the chain's (tests and worked examples; generated tasks come from `task`)."""
        chain = [(self.toolset[name], dict(args), param) for name, args, param in steps]
        outputs = _run_chain(self.toolset, chain)
        if outputs is None:
            raise ValueError("the chain fails or one of its outputs is no new value")
        task = self._build(0, random.Random(0), chain, outputs, _question(chain))
        names = [*task.metadata["tool_names"], *[n for n in offered if n not in task.metadata["tool_names"]]]
        task.metadata.update(tool_names=names, tools=self.toolset.schemas(names))
        task.prompt[0] = Message(role="system", content=tool_system_prompt(self.toolset.schemas(names)))
        return task

    def _build(self, index: int, rng: random.Random, chain: ChainDraft, outputs: list[Any], question: str) -> Task:
        steps, calls = [], []
        for k, (tool, args, param) in enumerate(chain):
            steps.append({"name": tool.name, "arguments": args, "chained": param})
            call_args = {**args, param: f"API_RESPONSE_{k - 1}"} if param else args
            calls.append(ToolCall(id=str(k), name=tool.name, arguments=json.dumps(call_args)))
        names = [t.name for t, _, _ in chain]
        others = sorted(t.name for t in self.pool if t.name not in names)
        offered = names + rng.sample(others, min(self.config.extra_tools, len(others)))
        rng.shuffle(offered)
        schemas = self.toolset.schemas(offered)
        return self.make_task(
            index,
            prompt=[
                Message(role="system", content=tool_system_prompt(schemas)),
                Message(role="user", content=question),
            ],
            ground_truth={
                "kind": "depth",
                "answer": outputs[-1],
                "outputs": outputs,
                "chain": steps,
                **({"reward_mode": self.config.reward_mode} if self.config.reward_mode != "dataflow" else {}),
            },
            reference_actions=[format_tool_calls(calls, style="tier", return_mode="one")],
            difficulty=min(len(chain), 5),
            kind="depth",
            depth=len(chain),
            tools_pool=self.config.tools,
            tool_names=offered,
            tools=schemas,
        )


def _display(value: Any) -> str:
    return str(int(value)) if isinstance(value, float) and value.is_integer() else str(value)


def _question(chain: ChainDraft) -> str:
    phrase = None
    for tool, args, param in chain:
        shown = {k: _display(v) for k, v in args.items()} | ({param: f"[{phrase}]"} if param else {})
        phrase = tool.meta["phrase"].format(**shown)
    return f"What is {phrase}?"


def _draw_chain(rng: random.Random, pool: list[Tool], consumers: dict[str, list[Tool]], depth: int) -> ChainDraft:
    """A random chain, or [] when the walk got stuck. The chained parameter's literal is dropped from the draft."""
    chain: ChainDraft = []
    previous: str | None = None
    for _ in range(depth):
        if previous is None:
            tool, param = rng.choice(pool), None
        else:  # uniform over tools first, then over the tool's parameters that take the previous output
            used = {t.name for t, _, _ in chain}
            tools = [t for t in consumers[previous] if t.name not in used]
            if not tools:
                return []
            tool = rng.choice(tools)
            param = rng.choice(sorted(p for p, tag in tool.meta["tags"].items() if tag == previous))
        args = tool.meta["sample"](rng)
        if param is not None:
            args.pop(param, None)
        chain.append((tool, args, param))
        previous = tool.meta["returns"]
    return chain


def _run_chain(toolset: Toolset, chain: ChainDraft) -> list[Any] | None:
    """Outputs of the chain in a fresh world; None when a step fails or an output is no new value.

    Credit follows produced values (`provenance.py`), so each required value must be news: a step's output may not
    equal its chained input (an identity), an earlier output (a cycle a later step could be skipped through) or a
    value the question states (a shortcut from the question to that step), except the name an effect tool
    (`write_file`, `schedule_event`) reports back; and the answer is never stated or repeated.
    """
    world = toolset.new_world()
    outputs: list[Any] = []
    stated = {value_key(v) for _, args, _ in chain for v in args.values()}
    for k, (tool, args, param) in enumerate(chain):
        call_args = {**args, param: outputs[-1]} if param else dict(args)
        outcome = tool.run(world, call_args)
        if not outcome.ok:
            return None
        key = value_key(outcome.result)
        seen = {value_key(o) for o in outputs}
        echo_allowed = tool.meta.get("effect", False) and k < len(chain) - 1
        if key in seen or (key in stated and not echo_allowed):
            return None
        outputs.append(outcome.result)
    return outputs


class BFCLTasks(TaskSource):
    """One BFCL single-turn category, read from the installed `bfcl-eval` package; eval-only (train is empty)."""

    family = "tools"

    def __init__(
        self, *, split: str = "eval", seed: int = 0, category: str = "simple", limit: int | None = None
    ) -> None:
        super().__init__(split=split, seed=seed)
        if category not in bfcl.CATEGORY_FILES:
            raise ValueError(f"unknown BFCL category {category!r}; choose from {sorted(bfcl.CATEGORY_FILES)}")
        self.category = category
        self.limit = limit
        # live_irrelevance repeats 3 (question, functions) pairs in the published data; we keep BFCL as published
        self.allows_duplicates = category == "live_irrelevance"  # type: ignore[misc]

    def __len__(self) -> int:
        if self.split != "eval":
            return 0
        n = len(bfcl.load_category(self.category))
        return min(n, self.limit) if self.limit else n

    def task(self, index: int) -> Task:
        if not 0 <= index < len(self):
            raise IndexError(f"BFCL {self.category} {self.split} has {len(self)} tasks; no index {index}")
        item = bfcl.load_category(self.category)[index]
        functions = item.get("function") or []
        system = "\n\n".join([tools_block(bfcl.openai_tools(functions)), CALL_FORMAT, bfcl.INSTRUCTIONS])
        messages = [Message(role="system", content=system)]
        for message in (item.get("question") or [[]])[0]:
            role = message.get("role", "user")
            if role == "system":
                messages[0] = Message(role="system", content=f"{message.get('content', '')}\n\n{system}")
            else:
                messages.append(
                    Message(role=role if role in ("user", "assistant") else "user", content=message.get("content", ""))
                )
        return self.make_task(
            index,
            prompt=messages,
            ground_truth={"kind": "bfcl", "function": functions, "ground_truth": item.get("ground_truth")},
            reference_actions=[bfcl.reference_action(item, self.category)],
            difficulty=bfcl.DIFFICULTY[self.category],
            kind="bfcl",
            category=self.category,
            bfcl_id=item["id"],
            tools=bfcl.openai_tools(functions),
            tool_names=[f.get("name") for f in functions],
        )
