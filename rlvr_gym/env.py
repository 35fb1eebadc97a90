"""The env contract: a Gymnasium env whose actions are raw assistant text and whose observations are messages.

Subclasses supply a task source (name its class in `task_source`: every constructor keyword the env does not take
itself is forwarded to it, so an env never repeats its source's options; or set `self.source`, or override
`get_task`/`num_tasks`), the opening messages (`start`) and the reaction to one action (`respond`, returning a typed
`StepResult`). The base
class owns task selection from seed/index, the turn limit and the typed step (`step_result`); Gymnasium's `step`
is a thin adapter over it, so the runner and the episode record never read a flattened dict.

For `rlvr-gym check-env` an env also offers `wrong_answers(task, rng)` (its family's near misses) and may declare
documented exceptions in `check_exceptions`.
"""

from __future__ import annotations

import copy
import random
from abc import abstractmethod
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, ClassVar

import gymnasium
import numpy as np
from gymnasium.utils import seeding
from pydantic import BaseModel, ConfigDict, Field

from .spaces import MessagesSpace, TextSpace
from .types import Message, Task, Verdict, assign, trusted

if TYPE_CHECKING:
    from .family import TaskSource

TASK_CACHE = 4096  # tasks (with their opening messages) kept per env instance; see `Env._opening`
_SCALARS = frozenset({str, int, float, bool, bytes, type(None)})


def _immutable(value: Any) -> bool:
    """Whether nothing reachable from `value` can be changed in place (scalars, tuples/frozensets of them)."""
    kind = type(value)
    if kind in _SCALARS:
        return True
    return kind in (tuple, frozenset) and all(_immutable(item) for item in value)


def _flat(task: Task) -> bool:
    """Whether a shallow copy of `task` shares nothing mutable with it (see `fresh_copy`)."""
    actions = task.reference_actions
    return (
        type(task.prompt) is str
        and _immutable(task.ground_truth)
        and (actions is None or all(type(a) is str for a in actions))
        and all(type(k) is str and _immutable(v) for k, v in task.metadata.items())
    )


def _copied(value: Any, depth: int = 0) -> Any:
    """`copy.deepcopy` for task data (JSON-like containers, tuples, pydantic models of them) without its memo
    bookkeeping, several times faster on a chat prompt or a game state; anything else, or nesting past 32 levels,
    goes to `copy.deepcopy` itself."""
    kind = type(value)
    if kind in _SCALARS:
        return value
    if depth < 32:
        depth += 1
        if kind is dict:
            return {key: _copied(item, depth) for key, item in value.items()}
        if kind is list:
            return [_copied(item, depth) for item in value]
        if kind is tuple:
            return tuple(_copied(item, depth) for item in value)
        if isinstance(value, BaseModel) and value.__pydantic_extra__ is None and value.__pydantic_private__ is None:
            fields = {key: _copied(item, depth) for key, item in value.__dict__.items()}
            return trusted(kind, fields, value.__pydantic_fields_set__)
    return copy.deepcopy(value)


def fresh_copy(task: Task, flat: bool) -> Task:
    """A copy of a cached task that shares nothing mutable with it, so no holder of one episode's task (the agent,
    the caller reading `info["task_metadata"]`) can change the task a later reset hands out. A `flat` task (see
    `_flat`: the common case) needs new `metadata` and `reference_actions` containers only (~1 us); any other
    task is deep-copied (`_copied`)."""
    if not flat:
        return _copied(task)
    values = dict(task.__dict__)
    values["metadata"] = dict(values["metadata"])
    if values["reference_actions"] is not None:
        values["reference_actions"] = list(values["reference_actions"])
    return trusted(Task, values, task.__pydantic_fields_set__)


class StepResult(BaseModel):
    """Typed output of one env step (SkyRL-Gym style); `Env.step` turns it into the Gymnasium 5-tuple.

    `verdict` is set on the step that ends the episode; `info` holds only extra, JSON-able diagnostics.
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)

    observation: list[Message] = Field(default_factory=list)
    reward: float = 0.0
    terminated: bool = False
    truncated: bool = False
    valid_action: bool = True
    verdict: Verdict | None = None
    turn: int = 0
    info: dict[str, Any] = Field(default_factory=dict)


def feedback(text: str) -> list[Message]:
    """The usual env reply: one user message."""
    return [Message(role="user", content=text)]


class Env(gymnasium.Env):
    """Base class of every rlvr-gym env. See the module docstring for what subclasses implement."""

    metadata: ClassVar[dict[str, Any]] = {"render_modes": ["ansi"]}
    family: ClassVar[str] = ""
    max_turns: int = 1
    step_timeout_s: float | None = 60.0
    episode_timeout_s: float | None = 600.0
    reset_timeout_s: float | None = 300.0  # first resets may build caches (game generation, model files)
    # Where the runner hosts the env: "thread" (cheap) or "process" (a child the runner can kill when a step hangs:
    # set it for envs whose parsers or engines run C code that holds the interpreter), or "inline": calls run on the
    # runner's event loop, without the two thread hand-offs that cost ~300 us an episode on a loaded 2-core machine,
    # but no timer can interrupt them. Only for envs whose every call is bounded by construction (pure Python,
    # linear-time parsing, no engines or I/O; `rlvr-gym check-env`'s step budget holds); a call that still overruns
    # its limit fails its episode as a timeout and moves the rest of the run to threads.
    isolation: ClassVar[str] = "thread"
    task_source: ClassVar[type[TaskSource] | None] = None  # built from the options the env does not take itself
    source: TaskSource | None = None
    _pending_seed: int | None = None  # a reset seed whose numpy generator is not built yet (see `_np_random`)
    _rng: np.random.Generator | None = None
    _rng_seed: int | None = None
    # `_opening`'s cache: index -> (task, flat, opening messages, their dicts), valid for the source `_tasks_of`
    _tasks: dict[int, tuple[Task, bool, list[Message] | None, list[dict[str, Any]] | None]] | None = None
    _tasks_of: object = None
    _size_of: tuple[object, int | None] | None = None  # (source, its size): `num_tasks` without a call per reset

    # ---- what `rlvr-gym check-env` holds the env to ------------------------------------------------------------
    max_reward: ClassVar[float] = 1.0  # full marks: what the reference solution must score
    check_step_budget_s: ClassVar[float] = 0.1  # wall time one adversarial 1 MB action may take in `step`
    verify_budget_s: ClassVar[float] = 1.0  # p99 wall time of one `verify` call on a reference trajectory
    check_exceptions: ClassVar[dict[str, str]] = {}  # check name -> why it legitimately does not hold here

    def __init__(
        self,
        *,
        max_turns: int | None = None,
        step_timeout_s: float | None = None,
        episode_timeout_s: float | None = None,
        reset_timeout_s: float | None = None,
        render_mode: str | None = None,
        task_cache: int = TASK_CACHE,
        **task_options: Any,
    ) -> None:
        if max_turns is not None:
            if max_turns < 1:
                raise ValueError("max_turns must be >= 1")
            self.max_turns = max_turns
        if step_timeout_s is not None:
            self.step_timeout_s = step_timeout_s
        if episode_timeout_s is not None:
            self.episode_timeout_s = episode_timeout_s
        if reset_timeout_s is not None:
            self.reset_timeout_s = reset_timeout_s
        self.render_mode = render_mode
        if task_cache < 0:
            raise ValueError("task_cache must be >= 0")
        self.task_cache = task_cache
        self.observation_space = MessagesSpace()
        self.action_space = TextSpace()
        self.task: Task | None = None
        self.task_index: int | None = None
        self.turn = 0
        self.actions: list[str] = []
        self.done = False
        self.verdict: Verdict | None = None
        self._last_observation: list[Message] = []
        if self.task_source is not None:
            self.source = self.make_source(**task_options)
        elif task_options:
            raise TypeError(f"{type(self).__name__} got unexpected keyword arguments {sorted(task_options)}")

    def make_source(self, **options: Any) -> TaskSource:
        """The env's task source from the constructor keywords the env did not take (override to adapt them)."""
        assert self.task_source is not None
        return self.task_source(**options)

    # ---- task source -------------------------------------------------------------------------------------------
    @property
    def num_tasks(self) -> int | None:
        """Number of distinct tasks, or None for an unbounded procedural generator.

        A source's size is fixed (a task is a pure function of config and index), so it is read once per source:
        an unbounded generator answers by raising `TypeError`, which would otherwise cost every reset."""
        source = self.source
        if source is None:
            return None
        known = self._size_of
        if known is None or known[0] is not source:
            known = self._size_of = (source, source.size)
        return known[1]

    def get_task(self, index: int) -> Task:
        """The task at `index`; must be a pure function of the env's config and the index."""
        if self.source is None:
            raise NotImplementedError(f"{type(self).__name__} sets no task source and does not override get_task")
        return self.source.task(index)

    def _opening(self, index: int) -> tuple[Task, list[Message] | None, list[dict[str, Any]] | None]:
        """A fresh copy of the task at `index`, with its opening messages and their dicts (None: call `start`).

        `get_task` is a pure function of the index, so a task is built and validated once per index and source,
        not on every reset (a `Task` plus its prompt `Message` cost more than a whole episode of a cheap env). The
        cached task itself is never handed out: each reset gets a `fresh_copy`, so a caller that edits its task
        or `info["task_metadata"]` changes its own episode only. The opening is kept only when the env does not
        override `start` (an override may start game state) and its dicts hold only strings (copied by `dict`).
        At most `task_cache` indices (constructor keyword, default `TASK_CACHE`) are kept per env.
        """
        cache = self._tasks
        if cache is None or self._tasks_of is not self.source:
            cache = self._tasks = {}
            self._tasks_of = self.source
        entry = cache.get(index)
        if entry is None:
            if len(cache) >= self.task_cache:
                cache.clear()
            task = self.get_task(index)
            messages = dicts = None
            if type(self).start is Env.start:
                messages = task.prompt_messages()
                dicts = [m.as_dict() for m in messages]
                if not all(type(v) is str for d in dicts for v in d.values()):
                    dicts = None
            entry = (task, _flat(task), messages, dicts)
            if self.task_cache:
                cache[index] = entry
        task, flat, messages, dicts = entry
        return fresh_copy(task, flat), messages, dicts

    def wrong_answers(self, task: Task, rng: random.Random) -> list[list[str]]:
        """Plausible trajectories that must not pass (near-miss numbers, mutated programs, wrong plans).

        Every family provides one; `rlvr-gym check-env` fails an env that does not.
        """
        raise NotImplementedError(f"{type(self).__name__} provides no wrong-answer generator")

    def floor_policies(self, task: Task, rng: random.Random) -> dict[str, list[str]]:
        """Non-solving policies in this env's own action syntax (restart loops, constant programs, fixed scripts),
        played by `rlvr-gym check-env`'s `reward_floor` check next to the generic battery (`rlvr_gym.floor`): none
        may earn over 5% of the oracle's mean (docs/reward-contract.md). Default: none beyond the generic ones."""
        return {}

    def coerce_task(self, task: Task | dict[str, Any]) -> Task:
        return task if isinstance(task, Task) else Task.model_validate(task)

    def task_index_for_seed(self, seed: int) -> int:
        n = self.num_tasks
        return seed % n if n else seed

    # ---- episode hooks -------------------------------------------------------------------------------------------
    def start(self, task: Task) -> list[Message]:
        """Opening messages of an episode (after the task is set); default: the task prompt."""
        return task.prompt_messages()

    @abstractmethod
    def respond(self, action: str) -> StepResult:
        """React to one assistant action. Must not raise on any string."""

    def truncation_verdict(self) -> Verdict:
        """Verdict when the turn limit ends the episode before the env terminated it."""
        return Verdict(reward=0.0, passed=False, feedback=f"turn limit of {self.max_turns} reached")

    # ---- verifier ----------------------------------------------------------------------------------------------
    def verify(self, task: Task | dict[str, Any], actions: Sequence[str]) -> Verdict:
        """Score a finished trajectory offline by replaying its actions (pure envs override with a direct check)."""
        self.reset(options={"task": self.coerce_task(task)})
        for action in actions:
            result = self.step_result(action)
            if result.verdict is not None:
                return result.verdict
        return self.truncation_verdict()

    # ---- gymnasium surface -------------------------------------------------------------------------------------
    # Seeding numpy's generator costs ~80 us, more than a whole reset of a cheap env, and most envs never draw from
    # it: `reset(seed=s)` only records `s`, and gymnasium's slots behind `np_random`/`np_random_seed` build the
    # generator from it on first read (the same stream as an eager seeding, so Gymnasium's semantics hold).
    @property
    def _np_random(self) -> np.random.Generator | None:  # type: ignore[override]
        if self._pending_seed is not None:
            self._rng, self._rng_seed = seeding.np_random(self._pending_seed)
            self._pending_seed = None
        return self._rng

    @_np_random.setter
    def _np_random(self, value: np.random.Generator | None) -> None:
        self._pending_seed = None
        self._rng = value

    @property
    def _np_random_seed(self) -> int | None:  # type: ignore[override]
        return self._pending_seed if self._pending_seed is not None else self._rng_seed

    @_np_random_seed.setter
    def _np_random_seed(self, value: int | None) -> None:
        self._rng_seed = value

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        if seed is not None:  # what gymnasium.Env.reset does, deferred to the first `np_random` access
            if not isinstance(seed, int) or seed < 0:
                seeding.np_random(seed)  # raises gymnasium's own error for a bad seed
            self._pending_seed = seed
        options = options or {}
        opening = dicts = None
        if options.get("task") is not None:
            self.task = self.coerce_task(options["task"])
            self.task_index = self.task.metadata.get("index")
        else:
            if options.get("task_index") is not None:
                index = int(options["task_index"])
            elif seed is not None:
                index = self.task_index_for_seed(seed)
            else:
                index = self.task_index_for_seed(int(self.np_random.integers(0, 2**31 - 1)))
            size = self.num_tasks
            if size is not None and not 0 <= index < size:
                raise IndexError(f"task_index {index} out of range 0..{size - 1}")
            self.task, opening, dicts = self._opening(index)
            self.task_index = index
        self.turn = 0
        self.actions = []
        self.done = False
        self.verdict = None
        task = self.task
        if opening is None:
            opening = self.start(task)
        self._last_observation = opening
        info = {
            "task_id": task.id,
            "task_index": self.task_index,
            "task_metadata": task.metadata,
            "max_turns": self.max_turns,
        }
        if dicts is not None:
            return [dict(d) for d in dicts], info
        return [m.as_dict() for m in opening], info

    def step_result(self, action: str) -> StepResult:
        """The typed step: what the runner and the episode record use."""
        if self.task is None:
            raise RuntimeError("reset() must be called before step()")
        if not isinstance(action, str):
            action = str(action)
        if self.done:
            return StepResult(
                observation=feedback("The episode is over; call reset()."),
                terminated=True,
                valid_action=False,
                verdict=self.verdict,
                turn=self.turn,
            )
        self.turn += 1
        self.actions.append(action)
        result = self.respond(action)
        assign(result, turn=self.turn, truncated=not result.terminated and self.turn >= self.max_turns)
        if result.terminated or result.truncated:
            self.done = True
            if result.verdict is None:
                if result.terminated:
                    raise RuntimeError(f"{type(self).__name__}.respond terminated without a verdict")
                result.verdict = self.truncation_verdict()
            self.verdict = result.verdict
        else:
            result.verdict = None
        self._last_observation = result.observation
        return result

    def step(self, action: str):
        """Gymnasium adapter over `step_result`; `info["verdict"]` is the same typed `Verdict` object."""
        result = self.step_result(action)
        info: dict[str, Any] = {"valid_action": result.valid_action, "turn": result.turn, **result.info}
        if result.verdict is not None:
            info["verdict"] = result.verdict
        observation = [m.as_dict() for m in result.observation]
        return observation, float(result.reward), result.terminated, result.truncated, info

    def render(self) -> str | None:
        if self.render_mode != "ansi":
            return None
        return "\n\n".join(f"[{m.role}] {m.text()}" for m in self._last_observation)


class AnswerEnv(Env):
    """An env where the agent answers and a verifier scores the answer, with up to `max_attempts` tries.

    After a wrong answer the env replies with feedback; the reward of a later attempt is multiplied by
    `attempt_decay ** (attempt - 1)`. Subclasses implement `score_answer` (the pure verifier).
    """

    def __init__(self, *, max_attempts: int = 1, attempt_decay: float = 0.5, **kwargs: Any) -> None:
        if "max_turns" in kwargs:  # one turn per attempt: a second spelling would only collide
            raise TypeError(
                f"{type(self).__name__} sets its turns as max_attempts (one turn per answer), not max_turns"
            )
        if max_attempts < 1:
            raise ValueError("max_attempts must be >= 1")
        if not 0.0 <= attempt_decay <= 1.0:
            raise ValueError("attempt_decay must be in [0, 1]")
        super().__init__(max_turns=max_attempts, **kwargs)
        self.max_attempts = max_attempts
        self.attempt_decay = attempt_decay

    @abstractmethod
    def score_answer(self, task: Task, text: str) -> Verdict:
        """Pure, deterministic verdict of one answer text."""

    def retry_feedback(self, verdict: Verdict, attempts_left: int) -> str:
        base = verdict.feedback or "That answer is not correct."
        return f"{base} You have {attempts_left} attempt(s) left. Try again."

    def decayed(self, verdict: Verdict, attempt: int) -> Verdict:
        if attempt == 1:
            return verdict
        factor = self.attempt_decay ** (attempt - 1)
        components = {**verdict.components, "attempts": float(attempt)}
        return verdict.model_copy(update={"reward": verdict.reward * factor, "components": components})

    def respond(self, action: str) -> StepResult:
        assert self.task is not None
        verdict = self.score_answer(self.task, action)
        attempt = self.turn
        valid = verdict.valid
        if verdict.passed or attempt >= self.max_attempts:
            final = self.decayed(verdict, attempt)
            return trusted(StepResult, {  # our own values: no validation on the hot path
                "observation": [], "reward": final.reward, "terminated": True, "truncated": False,
                "valid_action": valid, "verdict": final, "turn": 0, "info": {},
            })  # fmt: skip
        return StepResult(
            observation=feedback(self.retry_feedback(verdict, self.max_attempts - attempt)),
            valid_action=valid,
            info={"attempt_verdict": verdict},
        )

    def verify(self, task: Task | dict[str, Any], actions: Sequence[str]) -> Verdict:
        task = self.coerce_task(task)
        verdict = Verdict(reward=0.0, passed=False, feedback="no answer given")
        for attempt, action in enumerate(actions[: self.max_attempts], start=1):
            verdict = self.decayed(self.score_answer(task, action), attempt)
            if verdict.passed:
                break
        return verdict
