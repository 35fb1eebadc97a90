"""Policy and Agent protocols, and the agent-spec registry (`oracle`, `smollm2`, `openai:<model>@<url>`, ...).

A `Policy` is async and batched: it continues requests. An `Agent` owns one conversation per episode: it turns
observations into the next request, calls its policy and returns the action text with the generation (token ids
and logprobs) attached, so training never has to re-tokenize history.

Agent backends are found through the entry-point group `rlvr_gym.agents` (name = spec prefix, object = factory
`(arg: str | None, **options) -> Agent`), which keeps the core free of imports from `agents/`.
"""

from __future__ import annotations

import importlib.metadata
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from .types import Generation, GenerationRequest, Message, Task

AGENT_GROUP = "rlvr_gym.agents"


@runtime_checkable
class Policy(Protocol):
    async def generate(self, requests: list[GenerationRequest]) -> list[Generation]: ...


@dataclass
class AgentStep:
    """What an agent did this turn: the action text and, for model agents, the generation behind it."""

    text: str
    generation: Generation | None = None


@dataclass
class EpisodeContext:
    """Per-episode agent state: the conversation so far plus anything a backend wants to keep (token ids)."""

    task: Task
    seed: int | None
    sample_index: int = 0
    messages: list[Message] = field(default_factory=list)
    state: dict[str, Any] = field(default_factory=dict)
    turn: int = 0


class Agent(ABC):
    """Base agent. `start` makes the per-episode context; `act` is called once per turn."""

    name: str = "agent"

    def start(self, task: Task, *, seed: int | None = None, sample_index: int = 0) -> EpisodeContext:
        return EpisodeContext(task=task, seed=seed, sample_index=sample_index)

    @abstractmethod
    async def act(self, ctx: EpisodeContext, observation: list[Message]) -> AgentStep:
        """Return the next action for the episode in `ctx` given this turn's new observation messages."""

    async def aclose(self) -> None:
        """Release backend resources (HTTP clients, engines)."""
        return None


def agent_backends() -> dict[str, importlib.metadata.EntryPoint]:
    return {ep.name: ep for ep in importlib.metadata.entry_points(group=AGENT_GROUP)}


def make_agent(spec: str, **options: Any) -> Agent:
    """Build an agent from a spec `prefix[:arg]`, e.g. `oracle`, `constant:42`, `hf:/models/x`, `openai:m@url`."""
    prefix, _, arg = spec.partition(":")
    backends = agent_backends()
    if prefix not in backends:
        raise ValueError(f"unknown agent spec {spec!r}; known prefixes: {', '.join(sorted(backends)) or 'none'}")
    factory = backends[prefix].load()
    agent = factory(arg or None, **options)
    if not isinstance(agent, Agent):
        raise TypeError(f"agent factory {prefix!r} returned {type(agent).__name__}, not an Agent")
    agent.name = spec
    return agent
