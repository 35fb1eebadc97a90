"""The one episode contract every trainer adapter is a shim over.

A trainer picks a task (by index or seed), feeds the model's text (or a tool call rendered to the exact action text
the env reads) and reads back observations. The verdict is always the env's own: `EnvSession.final_verdict` is the
env's verdict, or the env's truncation verdict when the trainer stopped early. Nothing here takes a reward, ground
truth or verdict from the caller, so a trainer (or a model steering it) cannot set its own score.

Tools: each env declares the tools a trainer offers for it as `trainer_tools` (a class attribute, or a property when
they depend on the instance), built with the builders below: a named action tool (`answer(text)`, `play(moves)`,
`act(action)`; TRL advises against a generic `step`), tagged code (`run(code)`, `submit(code)`) or one tool per
function schema. An env that declares none gets the family-neutral `respond(text)`; this module knows no family.
Each tool renders its arguments into the action text the env already parses, so the env's parser and verifier
judge a tool call exactly as they would judge the same text written by the model.
"""

from __future__ import annotations

import json
import keyword
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..env import Env, StepResult
from ..registry import make
from ..tool_markup import hermes_block
from ..types import Message, Verdict

JSON_TYPES: dict[str, type] = {
    "string": str,
    "integer": int,
    "number": float,
    "boolean": bool,
    "array": list,
    "object": dict,
}
RESERVED_NAMES = frozenset({"reset", "get_reward", "close", "reward", "verdict", "done"})
MAX_ARGUMENT_CHARS = 1_000_000  # larger tool arguments are refused before rendering (the env caps its own input too)


class ToolArgumentError(ValueError):
    """A tool call whose arguments do not fit the tool; the trainer shows the message to the model."""


@dataclass(frozen=True)
class ToolParam:
    name: str
    type: type
    description: str
    required: bool = True


@dataclass(frozen=True)
class ActionTool:
    """One tool a trainer offers the model; `render` turns checked arguments into the env's action text."""

    name: str
    description: str
    params: tuple[ToolParam, ...]
    render: Callable[[dict[str, Any]], str]

    def __post_init__(self) -> None:
        for name in [self.name, *(p.name for p in self.params)]:
            if not name.isidentifier() or keyword.iskeyword(name) or name.startswith("_"):
                raise ValueError(f"tool/parameter name {name!r} is not a public Python identifier")
        if self.name in RESERVED_NAMES:
            raise ValueError(f"tool name {self.name!r} is reserved by the trainer adapters")

    def action(self, arguments: Mapping[str, Any]) -> str:
        """The action text for one call; raises `ToolArgumentError` for unknown, missing or oversized arguments."""
        if not isinstance(arguments, Mapping):
            raise ToolArgumentError(f"{self.name}: arguments must be an object")
        known = {p.name for p in self.params}
        unknown = sorted(str(k) for k in arguments if k not in known)
        if unknown:
            raise ToolArgumentError(f"{self.name}: unknown argument(s) {unknown}; expected {sorted(known)}")
        missing = [p.name for p in self.params if p.required and arguments.get(p.name) is None]
        if missing:
            raise ToolArgumentError(f"{self.name}: missing argument(s) {missing}")
        args = {k: v for k, v in arguments.items() if v is not None}
        if sum(len(v) if isinstance(v, str) else len(repr(v)) for v in args.values()) > MAX_ARGUMENT_CHARS:
            raise ToolArgumentError(f"{self.name}: arguments longer than {MAX_ARGUMENT_CHARS} characters")
        return self.render(args)

    def openai_schema(self) -> dict[str, Any]:
        """The tool as an OpenAI function schema (verifiers, NeMo Gym and verl tool lists)."""
        inverse = {v: k for k, v in JSON_TYPES.items()}
        properties = {p.name: {"type": inverse[p.type], "description": p.description} for p in self.params}
        required = [p.name for p in self.params if p.required]
        return {
            "type": "function",
            "function": {
                "name": self.name,
                "description": self.description,
                "parameters": {"type": "object", "properties": properties, "required": required},
            },
        }


def verbatim(param: str) -> Callable[[dict[str, Any]], str]:
    """Render: the argument is the action text, exactly (the env's parser sees what the model wrote)."""
    return lambda args: _as_text(args[param])


def tagged(tag: str, param: str = "code") -> Callable[[dict[str, Any]], str]:
    """Render: the argument wrapped in `<tag>...</tag>` on lines of its own (e.g. `<run>` code)."""
    return lambda args: f"<{tag}>\n{_as_text(args[param])}\n</{tag}>"


def hermes_call(name: str) -> Callable[[dict[str, Any]], str]:
    """Render: a Hermes `<tool_call>` block calling `name` (the env's parser validates the arguments)."""
    return lambda args: hermes_block(name, args)


def prefixed(prefix: str, param: str) -> Callable[[dict[str, Any]], str]:
    """Render: the argument after a fixed `prefix` (e.g. an `Answer: ` line)."""
    return lambda args: f"{prefix}{_as_text(args[param])}"


def _as_text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)


def text_tool(name: str, description: str, param: str, param_description: str) -> ActionTool:
    """A tool with one required text parameter that is the action text itself (what a text-action env reads)."""
    return ActionTool(name, description, (ToolParam(param, str, param_description),), verbatim(param))


DEFAULT_TEXT_TOOL = text_tool(
    "respond", "Send your reply to the environment; it is judged exactly as written.", "text", "Your reply text."
)


def schema_tool(schema: Mapping[str, Any]) -> ActionTool:
    """An `ActionTool` for one OpenAI function schema whose call renders as a `<tool_call>` block."""
    function = schema.get("function", schema)
    parameters = function.get("parameters") or {}
    required = set(parameters.get("required") or [])
    params = tuple(
        ToolParam(
            name,
            JSON_TYPES.get(spec.get("type"), str),
            spec.get("description") or f"The `{name}` argument.",
            name in required,
        )
        for name, spec in (parameters.get("properties") or {}).items()
    )
    return ActionTool(
        function["name"], function.get("description") or function["name"], params, hermes_call(function["name"])
    )


def action_tools(env: Env) -> list[ActionTool]:
    """The tools a trainer offers for `env`: its declared `trainer_tools`, else `DEFAULT_TEXT_TOOL` (the same list
    for every task of the env)."""
    declared = getattr(env, "trainer_tools", None)
    return list(declared) if declared else [DEFAULT_TEXT_TOOL]


# ---- messages ----------------------------------------------------------------------------------------------------
def message_text(message: Message | Mapping[str, Any]) -> str:
    """The text of one message; image parts become a short placeholder (these adapters carry text only)."""
    content = message.content if isinstance(message, Message) else message.get("content")
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    parts = []
    for part in content:
        data = part.model_dump() if hasattr(part, "model_dump") else dict(part)
        parts.append((data.get("text") or "") if data.get("type") == "text" else "[image]")
    return "".join(parts)


def observation_text(messages: Iterable[Message | Mapping[str, Any]]) -> str:
    return "\n\n".join(t for t in (message_text(m) for m in messages) if t)


def text_messages(messages: Iterable[Message | Mapping[str, Any]]) -> list[dict[str, str]]:
    """Chat messages as plain `{role, content: str}` dicts (what trainers' chat templates accept)."""
    out = []
    for m in messages:
        role = m.role if isinstance(m, Message) else str(m.get("role", "user"))
        out.append({"role": role if role in ("system", "user", "assistant") else "user", "content": message_text(m)})
    return out


def completion_text(completion: Any) -> str:
    """The assistant text of a trainer's completion: a string, or a list of chat messages (assistant turns joined)."""
    if isinstance(completion, str):
        return completion
    if isinstance(completion, Mapping):
        return message_text(completion)
    if isinstance(completion, Sequence):
        return "\n".join(
            message_text(m) for m in completion if isinstance(m, Mapping) and m.get("role", "assistant") == "assistant"
        )
    return ""


# ---- tasks -------------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class TaskRow:
    """One dataset row: which task (by index, and the id to cross-check), its opening messages, nothing hidden."""

    env_id: str
    seed: int
    task_index: int
    task_id: str
    messages: list[dict[str, str]] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return {
            "env_id": self.env_id,
            "seed": self.seed,
            "task_index": self.task_index,
            "task_id": self.task_id,
            "messages": self.messages,
        }


def task_rows(env_id: str, n: int, *, seed: int = 0, env_kwargs: Mapping[str, Any] | None = None) -> list[TaskRow]:
    """`n` rows for seeds `seed .. seed+n-1`: the same tasks `rlvr_gym.make(env_id).reset(seed=s)` gives."""
    if n < 0 or seed < 0:
        raise ValueError("n and seed must be non-negative")
    env = make(env_id, **dict(env_kwargs or {}))
    try:
        rows = []
        for s in range(seed, seed + n):
            messages, info = env.reset(seed=s)
            rows.append(TaskRow(env_id, s, int(info["task_index"]), str(info["task_id"]), text_messages(messages)))
        return rows
    finally:
        env.close()


def checked_index(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ValueError(f"task_index must be a non-negative integer, got {value!r}")
    return value


# ---- episodes ----------------------------------------------------------------------------------------------------
class EnvSession:
    """One env, episode after episode: reset to a task, act with text or tool calls, read the env's verdict."""

    def __init__(self, env_id: str, env_kwargs: Mapping[str, Any] | None = None) -> None:
        self.env_id = env_id
        self.env: Env = make(env_id, **dict(env_kwargs or {}))
        self.tools = {tool.name: tool for tool in action_tools(self.env)}
        self.steps = 0

    def reset(
        self, *, task_index: int | None = None, seed: int | None = None, task_id: str | None = None
    ) -> list[dict[str, str]]:
        """Start the task at `task_index` (else the one `seed` picks); `task_id`, when given, must match it."""
        if task_index is not None:
            messages, info = self.env.reset(options={"task_index": checked_index(task_index)})
        else:
            messages, info = self.env.reset(seed=checked_index(seed if seed is not None else 0))
        if task_id is not None and info["task_id"] != task_id:
            raise ValueError(
                f"row names task {task_id!r} but {self.env_id} index {info['task_index']} is "
                f"{info['task_id']!r}: the dataset was built with other env options"
            )
        self.steps = 0
        return text_messages(messages)

    @property
    def done(self) -> bool:
        return self.env.done

    def act(self, text: str) -> StepResult:
        """One step with the model's action text (never raises on any string)."""
        self.steps += 1
        return self.env.step_result(text if isinstance(text, str) else str(text))

    def call_tool(self, name: str, arguments: Mapping[str, Any]) -> str:
        """Run one tool call as an env step and return what the model sees next."""
        tool = self.tools.get(name)
        if tool is None:
            raise ToolArgumentError(f"unknown tool {name!r}; available: {sorted(self.tools)}")
        if self.env.task is None:
            raise RuntimeError("reset the episode before calling tools")
        result = self.act(tool.action(arguments))
        return reply_text(result)

    def final_verdict(self) -> Verdict | None:
        """The env's verdict; when the episode did not end, the env's own truncation verdict; None before reset."""
        if self.env.task is None:
            return None
        if self.env.verdict is not None:
            return self.env.verdict
        return self.env.truncation_verdict()

    @property
    def reward(self) -> float:
        verdict = self.final_verdict()
        return float(verdict.reward) if verdict is not None else 0.0

    def close(self) -> None:
        self.env.close()


def reply_text(result: StepResult) -> str:
    """What the model sees after a step: the env's reply, and a plain note when the episode is over."""
    text = observation_text(result.observation)
    if result.terminated or result.truncated:
        note = "The episode is over."
        return f"{text}\n\n{note}" if text else note
    return text or "(no output)"


class CompletionScorer:
    """Single-turn scoring: the env's verifier on one completion for the task at an index (thread-safe)."""

    def __init__(self, env_id: str, env_kwargs: Mapping[str, Any] | None = None) -> None:
        self.env_id = env_id
        self.env: Env = make(env_id, **dict(env_kwargs or {}))
        self.lock = threading.Lock()

    def verdict(self, task_index: Any, completion: Any, task_id: str | None = None) -> Verdict:
        index = checked_index(task_index)
        with self.lock:
            task = self.env.get_task(index)
            if task_id is not None and task.id != task_id:
                raise ValueError(f"row names task {task_id!r} but {self.env_id} index {index} is {task.id!r}")
            return self.env.verify(task, [completion_text(completion)])
