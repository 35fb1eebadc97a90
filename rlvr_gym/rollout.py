"""Rollout runner: many episodes at once on asyncio, envs in worker threads, streamed to JSONL, resumable.

Design points (each one a known pain in other frameworks):
- env calls are sync and run in a thread pool, never on the event loop; each env instance serves one episode at a
  time and an env whose call timed out is discarded, since its thread may still be running;
- every failure (env crash, policy error, timeout) is recorded on that episode as a typed `EpisodeError`, and the
  run goes on;
- episodes stream to JSONL as they finish; `resume=True` reads the file back, drops a torn last line, and runs only
  the episodes whose ids are missing, so a killed run ends with exactly n x G episodes;
- one seed is derived per episode from (run seed, task, sample) and forwarded to both the env and the agent.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .agent import Agent
from .env import Env, StepResult
from .registry import make
from .types import Episode, EpisodeError, ErrorKind, Message, PolicyError, Task, Turn
from .workers import EnvWorkers

TaskSpec = int | Sequence[int] | Sequence[Task]


def stable_int(text: str, bits: int = 31) -> int:
    """A process-independent integer hash (Python's `hash` is salted per process)."""
    return int.from_bytes(hashlib.blake2b(text.encode(), digest_size=8).digest(), "big") % (1 << bits)


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
                EpisodeSpec(episode_id, group_id, key, index, task, sample, stable_int(f"{seed}|{key}|{sample}"))
            )
    return specs


class EpisodeLog:
    """Append-only JSONL of episodes with crash-safe resume (a torn last line is cut off, never parsed)."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self._file: Any = None

    def read_finished(self) -> dict[str, Episode]:
        """Episodes already on disk, by id; truncates a partial trailing line so appends stay valid JSONL."""
        finished: dict[str, Episode] = {}
        if not self.path.exists():
            return finished
        data = self.path.read_bytes()
        end = data.rfind(b"\n") + 1
        if end < len(data):
            with self.path.open("r+b") as f:
                f.truncate(end)
        for line in data[:end].splitlines():
            if not line.strip():
                continue
            try:
                episode = Episode.model_validate_json(line)
            except ValueError:
                continue
            finished.setdefault(episode.episode_id, episode)
        return finished

    def open(self, append: bool) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._file = self.path.open("a" if append else "w", encoding="utf-8")

    def write(self, episode: Episode) -> None:
        self._file.write(episode.model_dump_json() + "\n")
        self._file.flush()

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None


class _EnvPool:
    """Reusable env instances; one episode per instance at a time; poisoned instances are dropped."""

    def __init__(self, factory: Callable[[], Env]) -> None:
        self.factory = factory
        self.idle: list[Env] = []

    def acquire(self) -> Env:
        return self.idle.pop() if self.idle else self.factory()

    def release(self, env: Env) -> None:
        self.idle.append(env)

    def close(self) -> None:
        for env in self.idle:
            try:
                env.close()
            except Exception:
                pass
        self.idle.clear()


class _StepTimeout(Exception):
    pass


class _EnvFailure(Exception):
    """An exception raised inside env code, kept apart from agent/policy failures."""

    def __init__(self, original: BaseException) -> None:
        super().__init__(f"{type(original).__name__}: {original}")
        self.original = original


class Runner:
    """Runs planned episodes with bounded concurrency; see `collect` for the one-call form."""

    default_reset_timeout_s = 300.0  # first reset may build caches (game generation, model files)

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
    ) -> None:
        if concurrency < 1:
            raise ValueError("concurrency must be >= 1")
        self.env_id = env_id
        self.agent = agent
        self.concurrency = concurrency
        kwargs = dict(env_kwargs or {})
        self.pool = _EnvPool(env_factory or (lambda: make(env_id, **kwargs)))
        self.step_timeout_s = step_timeout_s
        self.episode_timeout_s = episode_timeout_s
        self._workers: EnvWorkers | None = None

    @property
    def workers(self) -> EnvWorkers:
        if self._workers is None:
            # Spare threads so that a few hung env calls (abandoned after a timeout) do not starve the run.
            self._workers = EnvWorkers(asyncio.get_running_loop(), self.concurrency + 4)
        return self._workers

    async def _call(self, fn: Callable[..., Any], *args: Any, timeout: float | None = None, **kwargs: Any) -> Any:
        def guarded() -> Any:
            try:
                return fn(*args, **kwargs)
            except Exception as exc:
                raise _EnvFailure(exc) from exc

        future = self.workers.submit(guarded)
        if timeout is None:
            return await future
        try:
            return await asyncio.wait_for(future, timeout)
        except asyncio.TimeoutError as exc:
            raise _StepTimeout(f"env call exceeded {timeout:.1f}s") from exc

    async def _run(self, spec: EpisodeSpec, episode: Episode) -> None:
        options = {"task": spec.task} if spec.task is not None else {"task_index": spec.task_index}
        holder: list[Env] = []

        def acquire_and_reset() -> tuple[Any, dict[str, Any]]:
            # One thread hop for both; the env is handed out before reset so a failed reset can be discarded.
            holder.append(self.pool.acquire())
            return holder[0].reset(seed=spec.seed, options=options)

        t0 = time.perf_counter()
        try:
            obs, info = await self._call(acquire_and_reset, timeout=self.step_timeout_s or self.default_reset_timeout_s)
        except _StepTimeout as exc:
            episode.error = EpisodeError(kind=ErrorKind.STEP_TIMEOUT, message=f"reset: {exc}", turn=0)
            return
        except _EnvFailure as exc:
            stage = "reset" if holder else "make"
            episode.error = EpisodeError(
                kind=ErrorKind.ENV_ERROR, message=f"{stage}: {exc}", turn=0, exception_type=type(exc.original).__name__
            )
            return
        env = holder[0]
        episode.timings["reset_s"] = time.perf_counter() - t0
        healthy = False
        try:
            step_timeout = self.step_timeout_s if self.step_timeout_s is not None else env.step_timeout_s
            task = env.task
            assert task is not None
            episode.task_id = info.get("task_id", task.id)
            episode.task_index = info.get("task_index", spec.task_index)
            episode.task_metadata = dict(info.get("task_metadata") or {})
            reference = task.reference_actions if self.agent.reads_reference else None
            ctx = self.agent.start(task.view(), seed=spec.seed, sample_index=spec.sample_index, reference=reference)
            observation = [Message.model_validate(m) for m in obs]
            while True:
                ctx.turn = len(episode.turns)
                t_gen = time.perf_counter()
                step = await self.agent.act(ctx, observation)
                gen_s = time.perf_counter() - t_gen
                t_env = time.perf_counter()
                try:
                    result: StepResult = await self._call(env.step_result, step.text, timeout=step_timeout)
                except _StepTimeout as exc:
                    episode.error = EpisodeError(kind=ErrorKind.STEP_TIMEOUT, message=str(exc), turn=ctx.turn)
                    return
                generation = step.generation
                reward, terminated, truncated, verdict = result.reward, result.terminated, result.truncated, result.verdict
                episode.turns.append(
                    Turn(
                        index=ctx.turn,
                        observation=observation,
                        action=step.text,
                        prompt_token_ids=generation.prompt_token_ids if generation else None,
                        token_ids=generation.token_ids if generation else None,
                        logprobs=generation.logprobs if generation else None,
                        reward=float(reward),
                        valid_action=result.valid_action,
                        info=_jsonable(result.info),
                        generation_s=gen_s,
                        env_s=time.perf_counter() - t_env,
                    )
                )
                episode.total_reward += float(reward)
                observation = list(result.observation)
                if terminated or truncated:
                    episode.terminated, episode.truncated = bool(terminated), bool(truncated)
                    episode.verdict = verdict
                    episode.final_observation = observation
                    healthy = True
                    return
        except PolicyError as exc:
            healthy = True
            episode.error = EpisodeError(
                kind=exc.kind, message=str(exc), turn=len(episode.turns), exception_type=type(exc).__name__
            )
        except _EnvFailure as exc:
            episode.error = EpisodeError(
                kind=ErrorKind.ENV_ERROR,
                message=str(exc),
                turn=len(episode.turns),
                exception_type=type(exc.original).__name__,
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
            if healthy:
                self.pool.release(env)

    async def run_episode(self, spec: EpisodeSpec) -> Episode:
        episode = Episode(
            episode_id=spec.episode_id,
            env_id=self.env_id,
            task_id=spec.task.id if spec.task else spec.task_key,
            task_index=spec.task_index,
            seed=spec.seed,
            group_id=spec.group_id,
            sample_index=spec.sample_index,
            agent=self.agent.name,
        )
        t0 = time.perf_counter()
        try:
            await asyncio.wait_for(self._run(spec, episode), self.episode_timeout_s)
        except asyncio.TimeoutError:
            episode.error = EpisodeError(
                kind=ErrorKind.EPISODE_TIMEOUT,
                message=f"episode exceeded {self.episode_timeout_s}s",
                turn=len(episode.turns),
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
        specs = list(specs)
        results: dict[str, Episode] = {}
        semaphore = asyncio.Semaphore(self.concurrency)

        async def one(spec: EpisodeSpec) -> None:
            async with semaphore:
                episode = await self.run_episode(spec)
            results[spec.episode_id] = episode
            if log is not None:
                log.write(episode)
            if on_episode is not None:
                on_episode(episode)

        await asyncio.gather(*(one(spec) for spec in specs))
        return [results[spec.episode_id] for spec in specs]

    def close(self) -> None:
        self.pool.close()
        if self._workers is not None:
            self._workers.close()


def _jsonable(value: Any) -> Any:
    """Info dicts may hold models or numpy values; keep what JSON can carry."""
    try:
        json.dumps(value)
        return value
    except TypeError:
        return json.loads(json.dumps(value, default=_default))


def _default(obj: Any) -> Any:
    if hasattr(obj, "model_dump"):
        return obj.model_dump(mode="json")
    if hasattr(obj, "tolist"):
        return obj.tolist()
    return repr(obj)


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
    env_kwargs: dict[str, Any] | None = None,
    env_factory: Callable[[], Env] | None = None,
    step_timeout_s: float | None = None,
    episode_timeout_s: float | None = None,
    on_episode: Callable[[Episode], None] | None = None,
) -> list[Episode]:
    """Run `group_size` samples of each task; returns all episodes (resumed ones included) in plan order."""
    specs = plan_episodes(env_id, tasks, group_size, seed)
    log = EpisodeLog(output) if output is not None else None
    finished: dict[str, Episode] = {}
    if log is not None:
        if resume:
            planned = {s.episode_id for s in specs}
            finished = {k: v for k, v in log.read_finished().items() if k in planned}
        log.open(append=resume)
    for episode in finished.values():
        if on_episode is not None:
            on_episode(episode)
    runner = Runner(
        env_id,
        agent,
        concurrency=concurrency,
        env_kwargs=env_kwargs,
        env_factory=env_factory,
        step_timeout_s=step_timeout_s,
        episode_timeout_s=episode_timeout_s,
    )
    try:
        todo = [s for s in specs if s.episode_id not in finished]
        new = await runner.run(todo, log=log, on_episode=on_episode)
    finally:
        runner.close()
        if log is not None:
            log.close()
    done = {**finished, **{e.episode_id: e for e in new}}
    return [done[s.episode_id] for s in specs]


def collect_sync(*args: Any, **kwargs: Any) -> list[Episode]:
    """`collect` for synchronous callers."""
    return asyncio.run(collect(*args, **kwargs))
