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
from typing import Any, ClassVar, Protocol, runtime_checkable

from .plugins import entry_points
from .types import Generation, GenerationRequest, Message, TaskView

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
    """Per-episode agent state: the conversation so far plus anything a backend wants to keep (token ids).

    `task` is the agent-facing view (no ground truth). `reference` holds the reference actions only for agents
    that declare `reads_reference` (the oracle): the one explicit path by which answers reach an agent.
    """

    task: TaskView
    seed: int | None
    sample_index: int = 0
    messages: list[Message] = field(default_factory=list)
    state: dict[str, Any] = field(default_factory=dict)
    turn: int = 0
    reference: list[str] | None = None


class Agent(ABC):
    """Base agent. `start` makes the per-episode context; `act` is called once per turn."""

    name: str = "agent"
    reads_reference: ClassVar[bool] = False  # True only for oracle-style agents that play the known solution

    def start(self, task: TaskView, *, seed: int | None = None, sample_index: int = 0,
              reference: list[str] | None = None) -> EpisodeContext:
        return EpisodeContext(task=task, seed=seed, sample_index=sample_index, reference=reference)

    @abstractmethod
    async def act(self, ctx: EpisodeContext, observation: list[Message]) -> AgentStep:
        """Return the next action for the episode in `ctx` given this turn's new observation messages."""

    async def aclose(self) -> None:
        """Release backend resources (HTTP clients, engines)."""
        return None


def agent_backends() -> dict[str, importlib.metadata.EntryPoint]:
    return entry_points(AGENT_GROUP)


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
