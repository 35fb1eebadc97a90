"""TRL: any rlvr-gym env as a `GRPOTrainer(environment_factory=...)`, plus dataset and reward-function builders.

```python
from trl import GRPOConfig, GRPOTrainer
from rlvr_gym.integrations.trl import environment_factory, make_dataset, tool_calling_tokenizer

Env = environment_factory("rlvr/ToolDepth-v0")
trainer = GRPOTrainer(model=path, processing_class=tool_calling_tokenizer(path), args=GRPOConfig(...),
                      train_dataset=make_dataset("rlvr/ToolDepth-v0", 256), environment_factory=Env)
```

`environment_factory(env_id)` generates one class per env id: a no-argument constructor, `reset(**row)`, one typed,
documented method per action tool (`episode.action_tools`) and `get_reward()`. TRL turns every public function of
the class into a tool, so the class has no other public functions (state is read through properties). The reward is
the env's verdict (`EnvSession.final_verdict`); it cannot be set from outside. Single-turn envs can skip tools and
score plain completions with `make_reward_func(env_id)`, which re-derives each task from its index and runs the
env's own verifier: dataset columns select a task, they never carry an answer.
"""

from __future__ import annotations

import inspect
import itertools
import re
import threading
from collections.abc import Callable, Mapping
from typing import Any

from ..types import Verdict
from .episode import ActionTool, CompletionScorer, EnvSession, completion_text, task_rows

__all__ = [
    "RlvrTrlEnv",
    "environment_factory",
    "make_dataset",
    "make_reward_func",
    "reward_from_env",
    "tool_calling_tokenizer",
]


class RlvrTrlEnv:
    """Base of the generated classes. Only `reset` and `get_reward` are public functions (TRL's tool rule)."""

    env_id: str = ""
    env_kwargs: dict[str, Any] = {}
    action_tools: tuple[ActionTool, ...] = ()
    _seeds: itertools.count  # per class: the next seed when a row names no task (TRL without a dataset)
    _seeds_lock: threading.Lock

    def __init__(self) -> None:
        self._session = EnvSession(self.env_id, self.env_kwargs)

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

    def get_reward(self) -> float:
        """The env's verdict reward for the episode (its truncation verdict if the model stopped early)."""
        return self._session.reward

    @property
    def reward(self) -> float:
        return self._session.reward

    @property
    def verdict(self) -> Verdict | None:
        return self._session.final_verdict()

    @property
    def done(self) -> bool:
        return self._session.done

    def _call(self, name: str, arguments: dict[str, Any]) -> str:
        return self._session.call_tool(name, arguments)


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


def environment_factory(
    env_id: str, *, env_kwargs: Mapping[str, Any] | None = None, name: str | None = None, start_seed: int = 0
) -> type[RlvrTrlEnv]:
    """The TRL environment class for `env_id` (built once here to read its tools; each instance is one env)."""
    probe = EnvSession(env_id, env_kwargs)
    tools = tuple(probe.tools.values())
    probe.close()
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
    return type(name or class_name(env_id), (RlvrTrlEnv,), namespace)


def make_dataset(
    env_id: str, n: int, *, seed: int = 0, env_kwargs: Mapping[str, Any] | None = None, environment: str | None = None
) -> Any:
    """A `datasets.Dataset`: conversational `prompt` plus `env_id`, `seed`, `task_index`, `task_id` columns.

    `environment` adds TRL's routing column for a dict `environment_factory`. No column holds an answer.
    """
    from datasets import Dataset

    rows = task_rows(env_id, n, seed=seed, env_kwargs=env_kwargs)
    columns: dict[str, list[Any]] = {
        "prompt": [r.messages for r in rows],
        "env_id": [r.env_id for r in rows],
        "seed": [r.seed for r in rows],
        "task_index": [r.task_index for r in rows],
        "task_id": [r.task_id for r in rows],
    }
    if environment is not None:
        columns["environment"] = [environment] * len(rows)
    return Dataset.from_dict(columns)


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


def reward_from_env(environments: list[Any], **_: Any) -> list[float | None]:
    """For TRL 0.29-1.7 (before `get_reward` became a reward source): each rollout env's verdict reward."""
    return [env.get_reward() if isinstance(env, RlvrTrlEnv) else None for env in environments]


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
