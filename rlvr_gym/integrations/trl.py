"""TRL: any rlvr-gym env as a `GRPOTrainer(environment_factory=...)`, plus dataset and reward-function builders.

```python
from trl import GRPOConfig, GRPOTrainer
from rlvr_gym.integrations.trl import environment_factory, make_dataset, reward_from_env, tool_calling_tokenizer

data = make_dataset("rlvr/ToolDepth-v0", 256)                    # rows name a task and the tools it offers
trainer = GRPOTrainer(model=path, processing_class=tool_calling_tokenizer(path), train_dataset=data,
                      environment_factory=environment_factory("rlvr/ToolDepth-v0", data),
                      reward_funcs=[reward_from_env], args=GRPOConfig(..., max_tool_calling_iterations=10))
```

`environment_factory(env_id)` generates one class per env id: a no-argument constructor, `reset(**row)` and one
typed, documented method per action tool (`episode.action_tools`). TRL turns every public function of the class into
a tool and shows every tool's schema in every prompt, so the class has no other public functions (state is read
through properties), and an env whose tasks each offer a few tools of a larger set (the tools family: 4-9 of 31)
gets one class per tool set, `environment_factory(env_id, dataset)` -> `{name: class}`, with the dataset's
`environment` column routing each row to its class (TRL's multi-environment mode).

How an episode ends agrees with the env's own prompt: TRL ends a rollout when the model replies without a tool
call, and that reply is the env's next action, as it is in `rlvr-gym eval` (`Answer: <value>` for the tools family,
`\boxed{}` for math). `reward_from_env` hands it to the env, then reads the env's verdict
(`EnvSession.final_verdict`); the reward cannot be set from outside. Single-turn envs can skip tools and score
plain completions with `make_reward_func(env_id)`, which re-derives each task from its index and runs the env's own
verifier: dataset columns select a task, they never carry an answer.
"""

from __future__ import annotations

import hashlib
import inspect
import itertools
import re
import threading
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from ..types import Verdict
from .episode import ActionTool, CompletionScorer, EnvSession, completion_text, message_text, task_rows

__all__ = [
    "RlvrTrlEnv",
    "environment_factory",
    "final_reply",
    "make_dataset",
    "make_reward_func",
    "reward_from_env",
    "tool_calling_tokenizer",
]


class RlvrTrlEnv:
    """Base of the generated classes. Only `reset` is a public function besides the tools (TRL's tool rule)."""

    env_id: str = ""
    env_kwargs: dict[str, Any] = {}
    action_tools: tuple[ActionTool, ...] = ()
    _seeds: itertools.count  # per class: the next seed when a row names no task (TRL without a dataset)
    _seeds_lock: threading.Lock

    def __init__(self) -> None:
        self._env_session: EnvSession | None = None  # built on the first reset: TRL probes one instance per class

    @property
    def _session(self) -> EnvSession:
        if self._env_session is None:
            self._env_session = EnvSession(self.env_id, self.env_kwargs)
        return self._env_session

    def reset(self, **row: Any) -> str | None:
        """Start the row's task (`task_index`, else `seed`, else the class's next seed).

        Returns None when the row's prompt already holds the task (datasets from `make_dataset`), else the opening
        observation as text, which TRL appends to the last user message.
        """
        if row.get("env_id") not in (None, self.env_id):
            raise ValueError(f"row is for {row['env_id']!r}, this environment runs {self.env_id!r}")
        seed = row.get("seed")
        if row.get("task_index") is None and seed is None:
            with self._seeds_lock:
                seed = next(self._seeds)
        messages = self._session.reset(task_index=row.get("task_index"), seed=seed, task_id=row.get("task_id"))
        if _has_prompt(row.get("prompt")):
            return None
        return "\n\n".join(m["content"] for m in messages if m["content"])

    @property
    def reward(self) -> float:
        """The env's verdict reward for the episode (its truncation verdict if the episode did not end)."""
        return self._session.reward if self._env_session is not None else 0.0

    @property
    def verdict(self) -> Verdict | None:
        return self._session.final_verdict() if self._env_session is not None else None

    @property
    def done(self) -> bool:
        return self._env_session is not None and self._session.done

    def _call(self, name: str, arguments: dict[str, Any]) -> str:
        return self._session.call_tool(name, arguments)

    def _finish(self, text: str) -> None:
        """The rollout's last reply (no tool call) as the env's next action, unless the episode is already over."""
        if self._env_session is not None and self._session.env.task is not None and not self.done and text.strip():
            self._session.act(text)


def _has_prompt(prompt: Any) -> bool:
    if isinstance(prompt, str):
        return bool(prompt.strip())
    if isinstance(prompt, list) and prompt:
        last = prompt[-1]
        content = last.get("content") if isinstance(last, Mapping) else None
        return bool(content)
    return False


def _docstring(tool: ActionTool) -> str:
    args = "\n".join(f"    {p.name}: {p.description}" for p in tool.params)
    return f"{tool.description}\n\nArgs:\n{args}\n\nReturns:\n    What the environment shows next."


def _tool_method(tool: ActionTool) -> Callable[..., str]:
    """A class function for one tool with a real signature, annotations and Google-style docstring."""

    def method(self: RlvrTrlEnv, **arguments: Any) -> str:
        return self._call(tool.name, arguments)

    params = [inspect.Parameter("self", inspect.Parameter.POSITIONAL_OR_KEYWORD)]
    params += [
        inspect.Parameter(
            p.name,
            inspect.Parameter.KEYWORD_ONLY,
            annotation=p.type,
            default=inspect.Parameter.empty if p.required else None,
        )
        for p in tool.params
    ]
    method.__signature__ = inspect.Signature(params, return_annotation=str)  # type: ignore[attr-defined]
    method.__annotations__ = {**{p.name: p.type if p.required else p.type | None for p in tool.params}, "return": str}
    method.__name__ = method.__qualname__ = tool.name
    method.__doc__ = _docstring(tool)
    return method


def class_name(env_id: str) -> str:
    """`rlvr/ToolDepth-v0` -> `ToolDepthV0Env` (TRL names the env's reward column after the class)."""
    tail = env_id.rsplit("/", 1)[-1]
    words = [w for w in re.split(r"[^0-9A-Za-z]+", tail) if w]
    name = "".join(w[:1].upper() + w[1:] for w in words) + "Env"
    return name if name[0].isalpha() else f"Rlvr{name}"


def tool_set_name(env_id: str, tools: Sequence[str] | None) -> str:
    """The `environment` name of the class offering `tools` (all of the env's tools when None)."""
    if tools is None:
        return class_name(env_id)
    digest = hashlib.sha256("\n".join(sorted(tools)).encode()).hexdigest()[:10]
    return f"{class_name(env_id)}_{digest}"


def _build_class(env_id: str, tools: tuple[ActionTool, ...], name: str, env_kwargs: Mapping[str, Any] | None,
                 start_seed: int) -> type[RlvrTrlEnv]:
    namespace: dict[str, Any] = {
        "env_id": env_id,
        "env_kwargs": dict(env_kwargs or {}),
        "action_tools": tools,
        "_seeds": itertools.count(start_seed),
        "_seeds_lock": threading.Lock(),
        "__module__": __name__,
        "__doc__": f"{env_id} for TRL's GRPOTrainer (tools: {', '.join(t.name for t in tools)}).",
    }
    for tool in tools:
        namespace[tool.name] = _tool_method(tool)
    return type(name, (RlvrTrlEnv,), namespace)


def environment_factory(
    env_id: str,
    dataset: Any = None,
    *,
    env_kwargs: Mapping[str, Any] | None = None,
    name: str | None = None,
    start_seed: int = 0,
) -> Any:
    """The TRL environment class for `env_id`, offering all of its tools; with a `dataset` from `make_dataset`, a
    `{environment name: class}` dict with one class per tool set the rows name (their `environment` column), so
    every prompt shows only the tools its task offers. Pass either as `GRPOTrainer(environment_factory=...)`."""
    probe = EnvSession(env_id, env_kwargs)
    try:
        tools = tuple(probe.tools.values())
        sets = _dataset_tool_sets(env_id, dataset) if dataset is not None else {}
    finally:
        probe.close()
    if not sets:
        return _build_class(env_id, tools, name or class_name(env_id), env_kwargs, start_seed)
    by_name = {t.name: t for t in tools}
    return {
        env_name: _build_class(env_id, tuple(by_name[n] for n in offered), env_name, env_kwargs, start_seed)
        for env_name, offered in sets.items()
    }


def _dataset_tool_sets(env_id: str, dataset: Any) -> dict[str, tuple[str, ...]]:
    """{environment name: tool names} over the dataset's rows of `env_id` that carry a `tools` column."""
    columns = set(getattr(dataset, "column_names", None) or [])
    if not {"environment", "tools", "env_id"} <= columns:
        return {}
    sets: dict[str, tuple[str, ...]] = {}
    for environment, tools, row_env in zip(dataset["environment"], dataset["tools"], dataset["env_id"], strict=True):
        if row_env == env_id and tools is not None:
            sets.setdefault(environment, tuple(tools))
    return sets


def offered_tools(session: EnvSession) -> list[str] | None:
    """The names of the tools the current task offers, in the env's order; None when every task offers them all.

    An env whose tasks each offer part of a toolset says which through `offered()` (the tools family); tools that are
    not part of the toolset (`answer`) are always offered."""
    offered = getattr(session.env, "offered", None)
    toolset = getattr(getattr(session.env, "source", None), "toolset", None)
    if offered is None or toolset is None:
        return None
    chosen, pool = set(offered()), set(toolset.names())
    return [n for n in session.tools if n in chosen or n not in pool]


def make_dataset(
    env_id: str, n: int, *, seed: int = 0, env_kwargs: Mapping[str, Any] | None = None, environment: str | None = None
) -> Any:
    """A `datasets.Dataset`: conversational `prompt` plus `env_id`, `seed`, `task_index`, `task_id`, `environment`
    (the class for the row's tool set, see `environment_factory`) and, when tasks offer different tools, `tools`.

    `environment` names every row's class instead (your own dict `environment_factory`). No column holds an answer.
    """
    from datasets import Dataset

    rows = task_rows(env_id, n, seed=seed, env_kwargs=env_kwargs)
    tools = _row_tools(env_id, [r.task_index for r in rows], env_kwargs)
    columns: dict[str, list[Any]] = {
        "prompt": [r.messages for r in rows],
        "env_id": [r.env_id for r in rows],
        "seed": [r.seed for r in rows],
        "task_index": [r.task_index for r in rows],
        "task_id": [r.task_id for r in rows],
        "environment": [environment or tool_set_name(env_id, t) for t in tools],
    }
    if any(t is not None for t in tools):
        columns["tools"] = tools
    return Dataset.from_dict(columns)


def _row_tools(env_id: str, indices: list[int], env_kwargs: Mapping[str, Any] | None) -> list[list[str] | None]:
    session = EnvSession(env_id, env_kwargs)
    try:
        out: list[list[str] | None] = []
        for index in indices:
            session.reset(task_index=index)
            out.append(offered_tools(session))
        return out
    finally:
        session.close()


def make_reward_func(
    env_id: str, *, env_kwargs: Mapping[str, Any] | None = None, name: str | None = None
) -> Callable[..., list[float | None]]:
    """A TRL reward function scoring each completion with the env's verifier on the row's task.

    Needs the `task_index` column (`make_dataset` writes it); `task_id` is cross-checked when present. Rows of
    another env id get None (TRL skips them), so one function can sit beside others in a mixed dataset.
    """
    scorer = CompletionScorer(env_id, env_kwargs)

    def reward(
        completions: list[Any],
        task_index: list[int],
        task_id: list[str] | None = None,
        env_id: list[str] | None = None,
        log_metric: Callable[[str, float], None] | None = None,
        **_: Any,
    ) -> list[float | None]:
        rewards: list[float | None] = []
        passed = []
        for i, completion in enumerate(completions):
            if env_id is not None and env_id[i] != scorer.env_id:
                rewards.append(None)
                continue
            verdict = scorer.verdict(
                task_index[i], completion_text(completion), task_id[i] if task_id is not None else None
            )
            rewards.append(float(verdict.reward))
            passed.append(float(verdict.passed))
        if log_metric is not None and passed:
            log_metric(f"{reward.__name__}/passed", sum(passed) / len(passed))
        return rewards

    reward.__name__ = reward.__qualname__ = name or f"{class_name(env_id)}_verdict"
    return reward


def final_reply(completion: Any) -> str:
    """The text of a rollout's last assistant message when it made no tool call (TRL ends the rollout there)."""
    if isinstance(completion, str):
        return completion
    if not isinstance(completion, Sequence) or not completion:
        return ""
    last = completion[-1]
    if not isinstance(last, Mapping) or last.get("role", "assistant") != "assistant" or last.get("tool_calls"):
        return ""
    return message_text(last)


def reward_from_env(
    environments: list[Any],
    completions: list[Any] | None = None,
    log_metric: Callable[[str, float], None] | None = None,
    **_: Any,
) -> list[float | None]:
    """TRL's reward function for our environment classes: each rollout's final reply (no tool call) goes to its env
    as the next action, as in `rlvr-gym eval`, then the env's verdict reward is read. Other envs get None."""
    rewards: list[float | None] = []
    passed = []
    for i, env in enumerate(environments):
        if not isinstance(env, RlvrTrlEnv):
            rewards.append(None)
            continue
        if completions is not None:
            env._finish(final_reply(completions[i]))
        rewards.append(env.reward)
        verdict = env.verdict
        passed.append(float(verdict is not None and verdict.passed))
    if log_metric is not None and passed:
        log_metric("reward_from_env/passed", sum(passed) / len(passed))
    return rewards


def tool_calling_tokenizer(path_or_tokenizer: Any) -> Any:
    """A tokenizer TRL accepts for tool calling: unchanged if its template qualifies, else a ChatML model
    (`<|im_start|>`, e.g. SmolLM2) gets TRL's Qwen2.5 template, whose tool-call format TRL can parse."""
    from transformers import AutoTokenizer
    from trl.chat_template_utils import qwen2_5_chat_template, supports_tool_calling

    tokenizer = (
        AutoTokenizer.from_pretrained(path_or_tokenizer) if isinstance(path_or_tokenizer, str) else path_or_tokenizer
    )
    if supports_tool_calling(tokenizer):
        return tokenizer
    if "<|im_start|>" not in tokenizer.get_vocab():
        raise ValueError(
            "the tokenizer's chat template cannot render tool calls and it is not a ChatML model; "
            "set a tool-calling chat template (and TRL's response template) yourself"
        )
    tokenizer.chat_template = qwen2_5_chat_template
    return tokenizer
