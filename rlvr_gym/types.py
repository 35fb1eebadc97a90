"""Core data contracts: messages, tasks, verdicts, generations and episode records.

Everything that crosses a boundary (episode files, HTTP, the CLI) is JSON of these pydantic models, so a record
written by one part of the project can be read back by any other and re-scored from its metadata alone.
"""

from __future__ import annotations

import enum
import math
from typing import Any, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field, computed_field, field_validator

Role = Literal["system", "user", "assistant", "tool"]
Model = TypeVar("Model", bound=BaseModel)
_new = object.__new__
_set = object.__setattr__


def trusted(cls: type[Model], values: dict[str, Any], fields_set: set[str] | None = None) -> Model:
    """A model instance from values the caller already knows are valid, without running pydantic's validation.

    For records built by our own code on the hot path (a verdict the verifier just computed, a step result): a
    validating constructor costs 1-5 us, more than a whole episode of a cheap env. `values` must hold every field
    (the instance takes the dict as its own); `fields_set` (default: all of them) is what `exclude_unset` dumps keep.
    The result compares, dumps and copies like a validated one. Data from outside (files, HTTP, model output) must go
    through the validating constructor, never through this.
    """
    obj = _new(cls)
    _set(obj, "__dict__", values)
    _set(obj, "__pydantic_fields_set__", set(values if fields_set is None else fields_set))
    _set(obj, "__pydantic_extra__", None)
    _set(obj, "__pydantic_private__", None)
    return obj


def assign(record: BaseModel, **values: Any) -> None:
    """Set fields of a record our own code owns to values of the fields' types, marking them set, without
    pydantic's `__setattr__` (no validation there either, but ~0.4 us a field on the hot path)."""
    record.__dict__.update(values)
    record.__pydantic_fields_set__.update(values)


class ContentPart(BaseModel):
    """One part of a multimodal message: text, or an image given as a data URL / path."""

    type: Literal["text", "image_url"] = "text"
    text: str | None = None
    image_url: dict[str, str] | None = None


class ToolCall(BaseModel):
    """A function call in OpenAI format; `arguments` stays the raw JSON string the model wrote."""

    id: str = ""
    type: Literal["function"] = "function"
    name: str
    arguments: str = "{}"


class Message(BaseModel):
    """An OpenAI-style chat message."""

    model_config = ConfigDict(extra="forbid")

    role: Role
    content: str | list[ContentPart] | None = ""
    tool_calls: list[ToolCall] | None = None
    tool_call_id: str | None = None
    name: str | None = None

    def text(self) -> str:
        """The message's text, with image parts left out."""
        if self.content is None:
            return ""
        if isinstance(self.content, str):
            return self.content
        return "".join(part.text or "" for part in self.content if part.type == "text")

    def as_dict(self) -> dict[str, Any]:
        """Plain JSON-able dict without unset optional fields (the env observation format); content always kept."""
        fields = self.__dict__
        if type(fields["content"]) is str and fields["tool_calls"] is fields["tool_call_id"] is fields["name"] is None:
            return {"role": fields["role"], "content": fields["content"]}  # the common message, without a dump
        data = self.model_dump(exclude_none=True)
        data.setdefault("content", None)
        return data


class TaskView(BaseModel):
    """What an agent may see of a task: its id, prompt and public metadata, never the ground truth.

    Agents receive this view; the answers reach only agents that declare `reads_reference` (the oracle), through
    `EpisodeContext.reference`, so a model agent cannot be handed the solution by accident.
    """

    model_config = ConfigDict(frozen=True)

    id: str
    prompt: str | list[Message]
    metadata: dict[str, Any] = Field(default_factory=dict)

    def prompt_messages(self) -> list[Message]:
        if isinstance(self.prompt, str):
            return [Message(role="user", content=self.prompt)]
        return list(self.prompt)


class Task(BaseModel):
    """One task: prompt material, hidden ground truth and metadata enough to rebuild or re-score it.

    `id` is `family/split/index` (see `rlvr_gym.family.task_id`); `metadata` is public (agents see it) and holds
    at least `family`, `split`, `index` and, for generated tasks, `difficulty` on the shared 1..5 scale.
    """

    id: str
    prompt: str | list[Message]
    ground_truth: Any = None
    reference_actions: list[str] | None = Field(
        default=None, description="A known-good action sequence (oracle runs and tests); hidden from agents."
    )
    metadata: dict[str, Any] = Field(default_factory=dict)

    def prompt_messages(self) -> list[Message]:
        if isinstance(self.prompt, str):
            return [Message(role="user", content=self.prompt)]
        return list(self.prompt)

    def view(self) -> TaskView:
        """The agent-facing part of the task (no ground truth, no reference actions).

        Built from this task's own validated fields with the copies validation would make (a new metadata dict and
        prompt list), without validating them again: the runner builds one view per episode."""
        prompt = self.prompt if type(self.prompt) is str else list(self.prompt)
        return trusted(TaskView, {"id": self.id, "prompt": prompt, "metadata": dict(self.metadata)})


class Verdict(BaseModel):
    """The verifier's judgement of one trajectory.

    `valid` says whether the response was in the form the task asks for (an answer could be extracted, the
    program parsed, the action was recognised); an invalid response is scored as the env defines, usually 0.
    `error` names what made it invalid or unscorable, for people reading the record.
    """

    reward: float
    passed: bool
    valid: bool = True
    components: dict[str, float] = Field(default_factory=dict)
    feedback: str | None = None
    error: str | None = None

    @classmethod
    def invalid(
        cls, error: str, *, reward: float = 0.0, components: dict[str, float] | None = None, feedback: str | None = None
    ) -> Verdict:
        """An unscorable response (no answer in the asked format, ambiguous answers, unparseable program)."""
        return cls(
            reward=reward,
            passed=False,
            valid=False,
            components=components or {},
            error=error,
            feedback=feedback or error,
        )

    @field_validator("reward")
    @classmethod
    def _finite(cls, value: float) -> float:
        if not math.isfinite(value):
            raise ValueError(f"reward must be finite, got {value}")
        return value


class SamplingParams(BaseModel):
    """The one definition of sampling settings; configs and agent options are checked against these fields."""

    temperature: float = Field(1.0, ge=0.0)
    top_p: float = Field(1.0, gt=0.0, le=1.0)
    max_new_tokens: int = Field(256, ge=1)
    stop: list[str] = Field(default_factory=list)
    seed: int | None = None
    logprobs: bool = True


class GenerationRequest(BaseModel):
    """What a policy is asked to continue: chat messages, a raw prompt, or exact prompt token ids."""

    messages: list[Message] | None = None
    prompt: str | None = None
    prompt_token_ids: list[int] | None = None
    tools: list[dict[str, Any]] | None = None
    sampling: SamplingParams = Field(default_factory=SamplingParams)


class Usage(BaseModel):
    prompt_tokens: int = 0
    completion_tokens: int = 0


class Generation(BaseModel):
    """A policy's answer to one request; token ids and logprobs are those of the sampled tokens."""

    text: str
    token_ids: list[int] | None = None
    logprobs: list[float] | None = None
    prompt_token_ids: list[int] | None = None
    finish_reason: str | None = None
    tool_calls: list[ToolCall] | None = None
    usage: Usage = Field(default_factory=Usage)
    latency_s: float = 0.0


class ErrorKind(str, enum.Enum):
    """Why an episode failed: always an infrastructure failure, never a judgement of the model's answer.

    An errored episode has no reward (it is not a 0), is counted apart in summaries and is retried on resume.
    """

    ENV_ERROR = "env_error"  # the env raised in reset/step
    AGENT_ERROR = "agent_error"  # the agent code raised
    POLICY_ERROR = "policy_error"  # the model endpoint/backend failed after its retries
    VERIFIER_ERROR = "verifier_error"  # the verifier's own machinery failed (sandbox down, engine crash)
    STEP_TIMEOUT = "step_timeout"
    EPISODE_TIMEOUT = "episode_timeout"
    GENERATION_TIMEOUT = "generation_timeout"
    INTERRUPTED = "interrupted"  # the run was stopped (Ctrl-C) while this episode was in flight


class Outcome(str, enum.Enum):
    """How an episode ended: exactly one of these."""

    SCORED = "scored"  # the verifier judged a well-formed response
    INVALID = "invalid"  # the response was malformed; scored as the env defines (usually 0)
    ERROR = "error"  # infrastructure failure: no reward


class EpisodeError(BaseModel):
    kind: ErrorKind
    message: str
    turn: int | None = None
    exception_type: str | None = None


class Turn(BaseModel):
    """One agent action and the env's answer to it."""

    index: int
    observation: list[Message]
    action: str
    prompt_token_ids: list[int] | None = None
    token_ids: list[int] | None = None
    logprobs: list[float] | None = None
    reward: float = 0.0
    valid_action: bool = True
    info: dict[str, Any] = Field(default_factory=dict)
    generation_s: float = 0.0
    env_s: float = 0.0


EPISODE_SCHEMA_VERSION = 2


class Episode(BaseModel):
    """A whole rollout, as streamed to JSONL (one record per line; `schema_version` marks the format)."""

    schema_version: int = EPISODE_SCHEMA_VERSION
    episode_id: str
    env_id: str
    task_id: str
    task_index: int | None = None
    seed: int | None = None
    group_id: str
    sample_index: int = 0
    agent: str = ""
    turns: list[Turn] = Field(default_factory=list)
    final_observation: list[Message] = Field(default_factory=list)
    total_reward: float = 0.0
    verdict: Verdict | None = None
    error: EpisodeError | None = None
    terminated: bool = False
    truncated: bool = False
    task_metadata: dict[str, Any] = Field(default_factory=dict)
    timings: dict[str, float] = Field(default_factory=dict)

    @property
    def passed(self) -> bool:
        return bool(self.verdict and self.verdict.passed and self.error is None)

    @computed_field  # type: ignore[prop-decorator]
    @property
    def outcome(self) -> Outcome:
        """scored / invalid / error: the three ways an episode can end (written to the record for readers)."""
        if self.error is not None:
            return Outcome.ERROR
        if self.verdict is not None and not self.verdict.valid:
            return Outcome.INVALID
        return Outcome.SCORED

    @property
    def reward(self) -> float | None:
        """The scalar used for learning: the verdict's reward when there is one, else the summed step rewards.

        None for an infrastructure error: such an episode has no reward, and averaging it in as 0 would lie.
        """
        if self.error is not None:
            return None
        return self.verdict.reward if self.verdict is not None else self.total_reward


class PolicyError(RuntimeError):
    """Raised by a policy when its backend fails for good (after retries); becomes a typed episode error."""

    def __init__(self, message: str, *, kind: ErrorKind = ErrorKind.POLICY_ERROR, status: int | None = None):
        super().__init__(message)
        self.kind = kind
        self.status = status


class InfraError(RuntimeError):
    """Raised by a verifier or env when its own machinery failed (sandbox, engine, service), not the answer.

    The runner records it as an infrastructure error (`ErrorKind.VERIFIER_ERROR`), never as a reward of 0.
    """


class EnvUnavailable(RuntimeError):
    """Raised by an env constructor when a resource it needs is absent (user data set, optional engine).

    `rlvr-gym list` still shows such envs; the all-envs test suite skips them with this message as the reason.
    """
