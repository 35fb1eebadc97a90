"""Rollout runner: many episodes at once on asyncio, envs off the event loop, streamed to JSONL, resumable.

Design points (each one a known pain in other frameworks):
- env calls are sync and run in worker threads, never on the event loop (except for envs that declare
  `isolation = "inline"`: every call bounded by construction, see `Env.isolation`); each env instance serves one
  episode at a time. Envs that may hang while holding the interpreter lock run in a child process instead
  (`isolation="process"`, declared by the env as `isolation = "process"` or chosen by the caller; `"auto"`
  switches to processes after the first timeout): a timeout then really stops the call, because the child is
  killed. A thread stuck in a timed-out call is abandoned and replaced, so hung calls never starve the pool;
- every episode ends as exactly one of scored / invalid / infrastructure error (`Episode.outcome`). Failures (env
  crash, `InfraError` from a verifier, policy error, timeouts, Ctrl-C) become a typed `EpisodeError` with no
  reward, and the run goes on;
- time limits are the env's own (`step_timeout_s`, `episode_timeout_s`, `reset_timeout_s`) unless the caller
  overrides them;
- episodes stream to JSONL as they finish (see `episode_log`); resume re-runs missing, corrupted and errored
  episodes; a run manifest refuses to mix configurations and a file lock refuses a second writer;
- one seed is derived per episode from (run seed, task, sample) and forwarded to both the env and the agent.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from collections import deque
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .agent import Agent
from .env import Env, StepResult
from .env_handles import ISOLATIONS, EnvLimits, EnvRecipe, LocalEnv, ProcessEnv, RemoteEnvError
from .episode_log import EpisodeLog, LogScan, RunLock
from .family import stable_seed
from .manifest import build_manifest, check_resume, write_manifest
from .types import (
    EPISODE_SCHEMA_VERSION,
    Episode,
    EpisodeError,
    ErrorKind,
    InfraError,
    Message,
    PolicyError,
    Task,
    Turn,
    assign,
    trusted,
)
from .workers import EnvWorkers

__all__ = ["EpisodeLog", "EpisodeSpec", "Runner", "collect", "collect_sync", "plan_episodes"]

log = logging.getLogger(__name__)

TaskSpec = int | Sequence[int] | Sequence[Task]
_EMPTY_EPISODE = {  # an Episode's fields after the plan's, at their defaults (new containers made per episode)
    "turns": None,
    "final_observation": None,
    "total_reward": 0.0,
    "verdict": None,
    "error": None,
    "terminated": False,
    "truncated": False,
    "task_metadata": None,
    "timings": None,
}
EnvHandle = LocalEnv | ProcessEnv


@dataclass(frozen=True)
class EpisodeSpec:
    """One episode to run: which task, which sample of its group, and its derived seed."""

    episode_id: str
    group_id: str
    task_key: str
    task_index: int | None
    task: Task | None
    sample_index: int
    seed: int


def plan_episodes(env_id: str, tasks: TaskSpec, group_size: int, seed: int) -> list[EpisodeSpec]:
    if group_size < 1:
        raise ValueError("group_size must be >= 1")
    if isinstance(tasks, int):
        items: list[int | Task] = list(range(tasks))
    else:
        items = list(tasks)
    specs = []
    for item in items:
        if isinstance(item, Task):
            key, index, task = f"task={item.id}", item.metadata.get("index"), item
        else:
            key, index, task = f"index={int(item)}", int(item), None
        group_id = f"{env_id}|{key}"
        for sample in range(group_size):
            episode_id = f"{group_id}|s{sample}"
            specs.append(
                EpisodeSpec(episode_id, group_id, key, index, task, sample, stable_seed(seed, key, sample, bits=31))
            )
    return specs


@dataclass(frozen=True)
class Timeouts:
    """Caller overrides of the env's declared limits (None = use the env's own)."""

    step_s: float | None = None
    episode_s: float | None = None
    reset_s: float | None = None


class _EnvPool:
    """Env handles shared by the episodes, one episode per handle at a time; a handle whose call failed or hung is
    discarded.

    An episode without an idle handle waits for the first of: a handle released by another episode, or a new one
    built for the waiters. Builds are started only for waiters that the recent release rate will not serve within
    one build time, and at most max(2, live handles) at once (a slow start): 512 episodes in flight with a fast
    agent then share a few envs instead of building 512 (7-50 ms each for a dataset env), while slow agents that
    hold their envs still get one each after log2(512) build rounds. Nor is a handle built once the pool holds
    twice the handles in use on average (Little's law: release rate x how long an episode keeps its handle, from
    the moment it resumes with it): with inline envs and a fast agent, episodes keep a handle for microseconds and
    two handles serve 512 waiters, where building one per waiter cost more CPU than the episodes themselves.
    """

    def __init__(self, factory: Callable[[], Env], isolation: str, call: Callable[..., Any]) -> None:
        self.factory = factory
        self.isolation = isolation  # "thread" or "process": what new handles are
        self.build_timeout: float | None = None
        self.idle: list[EnvHandle] = []
        self.live: set[EnvHandle] = set()
        self._call = call  # the runner's bounded env call (a worker thread, or inline)
        self._waiters: deque[asyncio.Future] = deque()
        self._building = 0
        self._build_s: float | None = None  # moving average of build times
        self._releases: deque[float] = deque()  # release times within the last build time
        self._lent: dict[EnvHandle, float] = {}  # handle -> when its episode resumed with it
        self._hold_s: float | None = None  # moving averages: how long an episode keeps its handle,
        self._interval_s: float | None = None  # and the time between two releases
        self._last_release: float | None = None
        self._pump_timer: asyncio.TimerHandle | None = None
        self._closed = False

    def _fits(self, handle: EnvHandle) -> bool:
        return handle.isolated == (self.isolation == "process")

    async def acquire(self) -> EnvHandle:
        while self.idle:
            handle = self.idle.pop()
            if self._fits(handle):
                self._lent[handle] = time.perf_counter()
                return handle
            self._close(handle)
        waiter = asyncio.get_running_loop().create_future()
        self._waiters.append(waiter)
        self._pump()
        try:
            handle = await waiter
            self._lent[handle] = time.perf_counter()
            return handle
        except asyncio.CancelledError:
            if waiter.done() and not waiter.cancelled() and waiter.exception() is None:
                self.release(waiter.result())  # handed over just as the episode was cancelled
            raise

    def _next_waiter(self) -> asyncio.Future | None:
        while self._waiters:
            waiter = self._waiters.popleft()
            if not waiter.done():
                return waiter
        return None

    def release(self, handle: EnvHandle) -> None:
        now = time.perf_counter()
        since = self._lent.pop(handle, None)
        if since is not None:
            self._hold_s = _average(self._hold_s, now - since)
            if self._last_release is not None:
                self._interval_s = _average(self._interval_s, now - self._last_release)
            self._last_release = now
        if self._closed or not self._fits(handle):
            self._close(handle)
            self._pump()
            return
        self._releases.append(now)
        waiter = self._next_waiter()
        if waiter is not None:
            waiter.set_result(handle)
        else:
            self.idle.append(handle)

    def discard(self, handle: EnvHandle) -> None:
        self._lent.pop(handle, None)
        self.live.discard(handle)
        handle.kill()
        self._pump()

    def _recent_releases(self) -> int:
        if self._build_s is None:
            return 0
        horizon = time.perf_counter() - self._build_s
        while self._releases and self._releases[0] < horizon:
            self._releases.popleft()
        return len(self._releases)

    def _pump(self) -> None:
        """Start the builds that the waiting episodes need (see the class docstring)."""
        if self._closed:
            return
        while self._waiters and self._waiters[0].done():
            self._waiters.popleft()
        if not self._waiters:
            return
        while (
            len(self._waiters) > self._building + self._recent_releases()
            and self._building < max(2, len(self.live))
            and not self._enough()
        ):
            self._building += 1
            asyncio.ensure_future(self._build())
        if self._waiters and self._pump_timer is None:  # releases may stop: look again after one build time
            delay = max(self._build_s, 0.005) if self._build_s is not None else 0.05
            self._pump_timer = asyncio.get_running_loop().call_later(delay, self._repump)

    def _enough(self) -> bool:
        """Twice the handles in use on average (release rate x hold time), plus two, are live or being built."""
        if self._hold_s is None or not self._interval_s:
            return False
        return len(self.live) + self._building >= 2 * self._hold_s / self._interval_s + 2

    def _repump(self) -> None:
        self._pump_timer = None
        self._pump()

    def _make(self) -> EnvHandle:
        """Runs in a worker thread (a process start included), or on the loop for an inline env."""
        return ProcessEnv(self.factory) if self.isolation == "process" else LocalEnv(self.factory())

    async def _build(self) -> None:
        t0 = time.perf_counter()
        try:
            handle = await self._call(self._make, timeout=self.build_timeout)
        except BaseException as exc:
            self._building -= 1
            waiter = self._next_waiter()  # the oldest waiting episode reports the failure ("make: ...")
            if waiter is not None and isinstance(exc, asyncio.CancelledError):
                waiter.cancel()
            elif waiter is not None:
                waiter.set_exception(exc)
            if not isinstance(exc, Exception):
                raise
            self._pump()
            return
        self._building -= 1
        seconds = time.perf_counter() - t0
        self._build_s = _average(self._build_s, seconds)
        if self._closed:
            handle.kill()
            return
        self.live.add(handle)
        self.release(handle)
        self._pump()

    def _close(self, handle: EnvHandle) -> None:
        self.live.discard(handle)
        try:
            handle.close()
        except Exception:
            pass

    def close(self) -> None:
        self._closed = True
        if self._pump_timer is not None:
            self._pump_timer.cancel()
        for waiter in self._waiters:
            waiter.cancel()
        self._waiters.clear()
        for handle in self.idle:
            self._close(handle)
        self.idle.clear()
        for handle in list(self.live):  # in use at shutdown (Ctrl-C): kill child processes, abandon threads
            self.live.discard(handle)
            handle.kill()


def _average(mean: float | None, value: float) -> float:
    """Exponential moving average (weight 0.2 for the new value)."""
    return value if mean is None else 0.8 * mean + 0.2 * value


class _StepTimeout(Exception):
    pass


class _EnvFailure(Exception):
    """An exception raised inside env code, kept apart from agent/policy failures."""

    def __init__(self, original: BaseException) -> None:
        super().__init__(
            str(original) if isinstance(original, RemoteEnvError) else f"{type(original).__name__}: {original}"
        )
        self.original = original

    @property
    def kind(self) -> ErrorKind:
        infra = isinstance(self.original, InfraError) or getattr(self.original, "infra", False)
        return ErrorKind.VERIFIER_ERROR if infra else ErrorKind.ENV_ERROR

    @property
    def type_name(self) -> str:
        return getattr(self.original, "type_name", type(self.original).__name__)


def env_class_limits(recipe: EnvRecipe | None) -> EnvLimits:
    """The limits a registered env declares, read from its class and arguments without building it."""
    if recipe is None:
        return EnvLimits.of(Env)
    try:
        cls = recipe.env_class()
    except Exception:
        cls = Env
    declared = EnvLimits.of(cls)
    return EnvLimits(
        recipe.kwargs.get("step_timeout_s", declared.step_s),
        recipe.kwargs.get("episode_timeout_s", declared.episode_s),
        recipe.kwargs.get("reset_timeout_s", declared.reset_s),
    )


class Runner:
    """Runs planned episodes with bounded concurrency; see `collect` for the one-call form."""

    def __init__(
        self,
        env_id: str,
        agent: Agent,
        *,
        concurrency: int = 8,
        env_kwargs: dict[str, Any] | None = None,
        env_factory: Callable[[], Env] | None = None,
        step_timeout_s: float | None = None,
        episode_timeout_s: float | None = None,
        reset_timeout_s: float | None = None,
        isolation: str | None = None,
    ) -> None:
        if concurrency < 1:
            raise ValueError("concurrency must be >= 1")
        recipe = EnvRecipe.from_registry(env_id, dict(env_kwargs or {})) if env_factory is None else None
        declared_isolation = "thread"
        if recipe is not None:
            try:
                declared_isolation = getattr(recipe.env_class(), "isolation", "thread") or "thread"
            except Exception:
                pass
        isolation = isolation or declared_isolation
        if isolation not in ISOLATIONS:
            raise ValueError(f"isolation must be one of {ISOLATIONS}, got {isolation!r}")
        self.env_id = env_id
        self.agent = agent
        self.concurrency = concurrency
        self.auto_isolation = isolation == "auto"
        # Builds go where the env's calls go: an "inline" env's constructor is bounded too (see `Env.isolation`).
        self.pool = _EnvPool(env_factory or recipe, "thread" if isolation == "auto" else isolation, self._env_call)  # type: ignore[arg-type]
        self.timeouts = Timeouts(step_timeout_s, episode_timeout_s, reset_timeout_s)
        self.declared = env_class_limits(recipe)
        self.pool.build_timeout = self._limit(self.timeouts.reset_s, self.declared.reset_s)
        self._workers: EnvWorkers | None = None
        self._deadlines: _Deadlines | None = None

    @property
    def isolation(self) -> str:
        return self.pool.isolation

    @property
    def workers(self) -> EnvWorkers:
        if self._workers is None:
            # Spare threads so that a burst of hung env calls does not delay the others before replacements start.
            self._workers = EnvWorkers(asyncio.get_running_loop(), self.concurrency + 4)
        return self._workers

    def _limit(self, override: float | None, declared: float | None) -> float | None:
        return override if override is not None else declared

    async def _call(self, fn: Callable[..., Any], *args: Any, timeout: float | None) -> Any:
        """`fn(*args)` in a worker thread; a timer (not a `wait_for` task) fails the call after `timeout` seconds."""

        def guarded() -> Any:
            try:
                return fn(*args)
            except Exception as exc:
                raise _EnvFailure(exc) from exc

        future = self.workers.submit(guarded)
        timer = None if timeout is None else asyncio.get_running_loop().call_later(timeout, _expire, future, timeout)
        try:
            return await future
        except _StepTimeout:
            self._gave_up_on_call()
            raise
        except asyncio.CancelledError:
            self._gave_up_on_call()  # episode timeout or Ctrl-C while the call runs
            raise
        finally:
            if timer is not None:
                timer.cancel()

    async def _env_call(self, fn: Callable[..., Any], *args: Any, timeout: float | None) -> Any:
        """An env call: in a worker thread (`_call`), or run right here when the env declared `isolation = "inline"`.

        An inline call cannot be interrupted; one that returns after its limit fails its episode as a timeout, as in
        a thread, and moves later calls to threads (the env's bound did not hold on this machine)."""
        if self.pool.isolation != "inline":
            return await self._call(fn, *args, timeout=timeout)
        t0 = time.perf_counter()
        try:
            result = fn(*args)
        except Exception as exc:
            raise _EnvFailure(exc) from exc
        if timeout is not None and time.perf_counter() - t0 > timeout:
            log.warning(
                "%s: an inline env call took over %.1fs; running further calls in threads", self.env_id, timeout
            )
            self.pool.isolation = "thread"
            raise _StepTimeout(f"env call exceeded {timeout:.1f}s (inline)")
        return result

    def _gave_up_on_call(self) -> None:
        """The thread running the abandoned call may be stuck for good: add a fresh one in its place."""
        self.workers.replace_one()
        if self.auto_isolation and self.pool.isolation == "thread":
            log.warning("%s: an env call timed out; running further envs in child processes", self.env_id)
            self.pool.isolation = "process"

    async def _run(self, spec: EpisodeSpec, episode: Episode) -> None:
        options = {"task": spec.task} if spec.task is not None else {"task_index": spec.task_index}
        holder: list[EnvHandle] = []  # the handle, once acquired (a failed reset discards it)
        t0 = time.perf_counter()
        healthy = False
        try:
            holder.append(await self.pool.acquire())
            reset = await self._env_call(
                holder[0].reset, spec.seed, options, timeout=self._limit(self.timeouts.reset_s, self.declared.reset_s)
            )
        except _StepTimeout as exc:
            episode.error = EpisodeError(kind=ErrorKind.STEP_TIMEOUT, message=f"reset: {exc}", turn=0)
            return self._finish(holder, healthy)
        except _EnvFailure as exc:
            stage = "reset" if holder else "make"
            episode.error = EpisodeError(kind=exc.kind, message=f"{stage}: {exc}", turn=0, exception_type=exc.type_name)
            return self._finish(holder, healthy)
        except BaseException:
            self._finish(holder, healthy)
            raise
        handle = holder[0]
        episode.timings["reset_s"] = time.perf_counter() - t0
        try:
            step_timeout = self._limit(self.timeouts.step_s, handle.limits.step_s)
            task = reset.task
            assign(
                episode,
                task_id=reset.info.get("task_id", task.id),
                task_index=reset.info.get("task_index", spec.task_index),
                task_metadata=dict(reset.info.get("task_metadata") or {}),
            )
            reference = task.reference_actions if self.agent.reads_reference else None
            ctx = self.agent.start(task.view(), seed=spec.seed, sample_index=spec.sample_index, reference=reference)
            observation = [Message.model_validate(m) for m in reset.observation]
            while True:
                ctx.turn = len(episode.turns)
                t_gen = time.perf_counter()
                step = await self.agent.act(ctx, observation)
                gen_s = time.perf_counter() - t_gen
                t_env = time.perf_counter()
                try:
                    result: StepResult = await self._env_call(handle.step, step.text, timeout=step_timeout)
                except _StepTimeout as exc:
                    episode.error = EpisodeError(kind=ErrorKind.STEP_TIMEOUT, message=str(exc), turn=ctx.turn)
                    return
                self._record_turn(episode, ctx.turn, observation, step, result, gen_s, time.perf_counter() - t_env)
                observation = list(result.observation)
                if result.terminated or result.truncated:
                    assign(
                        episode,
                        terminated=bool(result.terminated),
                        truncated=bool(result.truncated),
                        verdict=result.verdict,
                        final_observation=observation,
                    )
                    healthy = True
                    return
        except PolicyError as exc:
            healthy = True
            episode.error = EpisodeError(
                kind=exc.kind, message=str(exc), turn=len(episode.turns), exception_type=type(exc).__name__
            )
        except _EnvFailure as exc:
            episode.error = EpisodeError(
                kind=exc.kind, message=str(exc), turn=len(episode.turns), exception_type=exc.type_name
            )
        except Exception as exc:
            healthy = True  # the agent failed; the env instance is still sound
            episode.error = EpisodeError(
                kind=ErrorKind.AGENT_ERROR,
                message=f"{type(exc).__name__}: {exc}",
                turn=len(episode.turns),
                exception_type=type(exc).__name__,
            )
        finally:
            self._finish(holder, healthy)

    def _finish(self, holder: list[EnvHandle], healthy: bool) -> None:
        if not holder:
            return
        if healthy:
            self.pool.release(holder[0])
        else:
            self.pool.discard(holder[0])

    @staticmethod
    def _record_turn(
        episode: Episode,
        index: int,
        observation: list[Message],
        step: Any,
        result: StepResult,
        gen_s: float,
        env_s: float,
    ) -> None:
        generation = step.generation
        values = {
            "index": index,
            "observation": observation,
            "action": step.text,
            "prompt_token_ids": generation.prompt_token_ids if generation else None,
            "token_ids": generation.token_ids if generation else None,
            "logprobs": generation.logprobs if generation else None,
            "reward": float(result.reward),
            "valid_action": result.valid_action,
            "info": dict(jsonable(result.info)),
            "generation_s": gen_s,
            "env_s": env_s,
        }
        # Without a generation every value is ours and of its field's type once the agent's text is a str: no
        # validation (~5 us an episode); a model agent's turn (token lists to copy) or an odd action is validated.
        plain = generation is None and type(step.text) is str and type(result.valid_action) is bool
        episode.turns.append(trusted(Turn, values) if plain else Turn(**values))
        assign(episode, total_reward=episode.total_reward + float(result.reward))

    def new_episode(self, spec: EpisodeSpec) -> Episode:
        given = {
            "episode_id": spec.episode_id,
            "env_id": self.env_id,
            "task_id": spec.task.id if spec.task else spec.task_key,
            "task_index": spec.task_index,
            "seed": spec.seed,
            "group_id": spec.group_id,
            "sample_index": spec.sample_index,
            "agent": self.agent.name,
        }
        if type(self.env_id) is not str or type(self.agent.name) is not str:
            return Episode(**given)
        # The plan's own values (`plan_episodes`): built without validation, defaults as the model has them.
        values = {"schema_version": EPISODE_SCHEMA_VERSION, **given, **_EMPTY_EPISODE}
        values.update(turns=[], final_observation=[], task_metadata={}, timings={})
        return trusted(Episode, values, given.keys())

    async def run_episode(self, spec: EpisodeSpec, episode: Episode | None = None) -> Episode:
        episode = episode if episode is not None else self.new_episode(spec)
        budget = self._limit(self.timeouts.episode_s, self.declared.episode_s)
        t0 = time.perf_counter()
        expired = False
        if budget is None:
            await self._run(spec, episode)
        else:
            loop = asyncio.get_running_loop()
            if self._deadlines is None or self._deadlines.loop is not loop:
                self._deadlines = _Deadlines(loop)
            expired = await self._deadlines.within(budget, self._run(spec, episode))
        if expired:
            episode.error = EpisodeError(
                kind=ErrorKind.EPISODE_TIMEOUT, message=f"episode exceeded {budget}s", turn=len(episode.turns)
            )
        episode.timings["total_s"] = time.perf_counter() - t0
        return episode

    async def run(
        self,
        specs: Iterable[EpisodeSpec],
        *,
        log: EpisodeLog | None = None,
        on_episode: Callable[[Episode], None] | None = None,
    ) -> list[Episode]:
        """Run `specs`; on cancellation (Ctrl-C) the episodes in flight are written as `interrupted` errors."""
        specs = list(specs)
        results: dict[str, Episode] = {}
        todo = iter(specs)

        def finished(episode: Episode) -> None:
            results[episode.episode_id] = episode
            if log is not None:
                log.write(episode)
            if on_episode is not None:
                on_episode(episode)

        async def worker() -> None:
            # `concurrency` workers pull from one plan: no task, semaphore wait or wait_for task per episode.
            for spec in todo:
                episode = self.new_episode(spec)
                try:
                    await self.run_episode(spec, episode)
                except asyncio.CancelledError:
                    episode.error = EpisodeError(
                        kind=ErrorKind.INTERRUPTED, message="the run was interrupted", turn=len(episode.turns)
                    )
                    finished(episode)
                    raise
                finished(episode)

        tasks = [asyncio.ensure_future(worker()) for _ in range(min(self.concurrency, len(specs)))]
        try:
            await asyncio.gather(*tasks)
        except BaseException:
            # Let every episode record itself (interrupted ones included) before the caller closes the log.
            for task in tasks:
                task.cancel()
            if tasks:
                await asyncio.wait(tasks)
            raise
        return [results[spec.episode_id] for spec in specs]

    def close(self) -> None:
        self.pool.close()
        if self._deadlines is not None:
            self._deadlines.close()
        if self._workers is not None:
            self._workers.close()


def _expire(future: asyncio.Future, timeout: float) -> None:
    if not future.done():
        future.set_exception(_StepTimeout(f"env call exceeded {timeout:.1f}s"))


class _Deadlines:
    """Episode time limits on one loop timer, armed at the earliest deadline in flight.

    One `call_later` per episode costs a heap push and a lazy removal of Python-compared timer handles, ~10-30 us an
    episode with 512 in flight; here an episode adds and removes a dict entry, and the one timer is moved only when a
    new deadline comes before it. When it fires, it cancels the tasks whose deadline passed and re-arms itself at
    the next one (a scan of the episodes in flight, once per earliest deadline).
    """

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop
        self.due: dict[asyncio.Task, float] = {}  # one episode per task at a time: the runner's worker tasks
        self.expired: set[asyncio.Task] = set()
        self.timer: asyncio.TimerHandle | None = None

    def _arm(self, when: float) -> None:
        if self.timer is not None:
            if self.timer.when() <= when:
                return
            self.timer.cancel()
        self.timer = self.loop.call_at(when, self._fire)

    def _fire(self) -> None:
        self.timer = None
        now = self.loop.time()
        for task, when in list(self.due.items()):
            if when <= now:
                del self.due[task]
                self.expired.add(task)
                task.cancel()
        if self.due:
            self._arm(min(self.due.values()))

    async def within(self, budget: float, coro: Any) -> bool:
        """Await `coro` in the current task, cancelled after `budget` seconds; True when the budget ran out.

        Like `asyncio.timeout` (3.11+), without the extra task of `wait_for`; an outside cancellation that arrives
        together with the deadline is passed on, not swallowed.
        """
        task = asyncio.current_task()
        assert task is not None
        when = self.loop.time() + budget
        self.due[task] = when
        self._arm(when)
        try:
            await coro
        except asyncio.CancelledError:
            if task not in self.expired:
                raise
            self.expired.discard(task)
            uncancel = getattr(task, "uncancel", None)
            if uncancel is not None and uncancel() > 0:
                raise  # cancelled from outside as well
            return True
        finally:
            self.due.pop(task, None)
            self.expired.discard(task)
        return False

    def close(self) -> None:
        if self.timer is not None:
            self.timer.cancel()
            self.timer = None


def jsonable(value: Any) -> Any:
    """Info dicts may hold models or numpy values; keep what JSON can carry."""
    if not value and type(value) is dict:
        return value
    try:
        json.dumps(value)
        return value
    except (TypeError, ValueError):
        return json.loads(json.dumps(value, default=_default))


def _default(obj: Any) -> Any:
    if hasattr(obj, "model_dump"):
        return obj.model_dump(mode="json")
    if hasattr(obj, "tolist"):
        return obj.tolist()
    return repr(obj)


@dataclass
class RunStore:
    """An output file opened for a run: the lock held, the manifest checked/written, the log ready to append."""

    log: EpisodeLog
    lock: RunLock
    scan: LogScan
    manifest_diffs: list[str]

    def close(self) -> None:
        self.log.close()
        self.lock.release()


def open_store(
    output: str | Path, manifest: dict[str, Any], *, resume: bool, keep_errors: bool = False, force: bool = False
) -> RunStore:
    """Lock the output, check the manifest on resume (see `manifest.check_resume`), scan and open the log."""
    lock = RunLock(output)
    lock.acquire()
    try:
        diffs = check_resume(output, manifest, force=force) if resume else []
        episode_log = EpisodeLog(output)
        scan = episode_log.scan(keep_errors=keep_errors) if resume else LogScan()
        write_manifest(output, manifest, forced_over=diffs)
        episode_log.open(append=resume)
    except BaseException:
        lock.release()
        raise
    return RunStore(episode_log, lock, scan, diffs)


async def collect(
    env_id: str,
    agent: Agent,
    *,
    tasks: TaskSpec,
    group_size: int = 1,
    concurrency: int = 8,
    seed: int = 0,
    output: str | Path | None = None,
    resume: bool = False,
    keep_errors: bool = False,
    force: bool = False,
    env_kwargs: dict[str, Any] | None = None,
    env_factory: Callable[[], Env] | None = None,
    step_timeout_s: float | None = None,
    episode_timeout_s: float | None = None,
    reset_timeout_s: float | None = None,
    isolation: str | None = None,
    agent_identity: dict[str, Any] | None = None,
    on_episode: Callable[[Episode], None] | None = None,
    on_resume: Callable[[LogScan], None] | None = None,
) -> list[Episode]:
    """Run `group_size` samples of each task; returns all episodes (resumed ones included) in plan order.

    With `output`, episodes stream to that JSONL beside a run manifest; `resume=True` keeps the finished episodes
    already there (errored ones are retried unless `keep_errors`) and refuses a different configuration unless
    `force`. `agent_identity` describes the agent for the manifest (default: its spec name).
    """
    specs = plan_episodes(env_id, tasks, group_size, seed)
    runner = Runner(
        env_id,
        agent,
        concurrency=concurrency,
        env_kwargs=env_kwargs,
        env_factory=env_factory,
        step_timeout_s=step_timeout_s,
        episode_timeout_s=episode_timeout_s,
        reset_timeout_s=reset_timeout_s,
        isolation=isolation,
    )
    store: RunStore | None = None
    finished: dict[str, Episode] = {}
    try:
        if output is not None:
            manifest = build_manifest(
                env_id=env_id,
                env_kwargs=dict(env_kwargs or {}),
                agent=agent_identity or {"spec": agent.name},
                seed=seed,
                run={
                    "group_size": group_size,
                    "concurrency": concurrency,
                    "isolation": isolation,
                    "timeouts": {"step_s": step_timeout_s, "episode_s": episode_timeout_s, "reset_s": reset_timeout_s},
                },
            )
            store = open_store(output, manifest, resume=resume, keep_errors=keep_errors, force=force)
            planned = {s.episode_id for s in specs}
            finished = {k: v for k, v in store.scan.episodes.items() if k in planned}
            if on_resume is not None:
                on_resume(store.scan)
        for episode in finished.values():
            if on_episode is not None:
                on_episode(episode)
        todo = [s for s in specs if s.episode_id not in finished]
        new = await runner.run(todo, log=store.log if store else None, on_episode=on_episode)
    finally:
        runner.close()
        if store is not None:
            store.close()
    done = {**finished, **{e.episode_id: e for e in new}}
    return [done[s.episode_id] for s in specs]


def collect_sync(*args: Any, **kwargs: Any) -> list[Episode]:
    """`collect` for synchronous callers."""
    return asyncio.run(collect(*args, **kwargs))
