"""Where an env instance lives while the runner plays it: in this process (fast) or in a child process (killable).

The runner talks to both through the same three blocking calls (`reset`, `step`, `close`) that it runs in worker
threads under a timeout. A thread cannot be stopped, and a parser that holds the interpreter lock (a C regex
backtracking on 80,000 newlines) freezes every thread of the process, timers included. A `ProcessEnv` keeps the env
in a child process: the parent's event loop stays free, the timeout fires, and the child is killed and replaced, so
a hung env or verifier costs one episode, never the run.
"""

from __future__ import annotations

import multiprocessing
import multiprocessing.connection
import signal
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from .env import Env, StepResult
from .types import InfraError, Task

ISOLATIONS = ("thread", "process", "auto", "inline")


@dataclass(frozen=True)
class EnvLimits:
    """The time limits an env instance declares (seconds; None = unlimited)."""

    step_s: float | None
    episode_s: float | None
    reset_s: float | None

    @classmethod
    def of(cls, env: Any) -> EnvLimits:
        return cls(
            getattr(env, "step_timeout_s", Env.step_timeout_s),
            getattr(env, "episode_timeout_s", Env.episode_timeout_s),
            getattr(env, "reset_timeout_s", Env.reset_timeout_s),
        )


@dataclass
class ResetOutcome:
    """What the runner needs after a reset: the opening observation, the info dict and the task itself."""

    observation: list[dict[str, Any]]
    info: dict[str, Any]
    task: Task


class RemoteEnvError(Exception):
    """An exception raised by env code in a child process, carried back by name (exceptions may not pickle)."""

    def __init__(self, type_name: str, message: str, *, infra: bool) -> None:
        super().__init__(f"{type_name}: {message}")
        self.type_name = type_name
        self.infra = infra


class EnvProcessDied(RuntimeError):
    """The child process holding the env exited in the middle of a call (crash, OOM kill, segfault)."""


def _reset(env: Env, seed: int | None, options: dict[str, Any]) -> ResetOutcome:
    observation, info = env.reset(seed=seed, options=options)
    assert env.task is not None
    return ResetOutcome(observation, info, env.task)


class LocalEnv:
    """An env object in this process; calls run in the runner's worker threads.

    The object may stand for an env hosted elsewhere (`rlvr_gym.scale.RayEnv`, a Ray actor): such a proxy offers
    `kill`, which ends the remote env at once and so frees a thread blocked on it.
    """

    isolated = False

    def __init__(self, env: Env) -> None:
        self.env = env
        self.limits = EnvLimits.of(env)

    def reset(self, seed: int | None, options: dict[str, Any]) -> ResetOutcome:
        return _reset(self.env, seed, options)

    def step(self, action: str) -> StepResult:
        return self.env.step_result(action)

    def close(self) -> None:
        self.env.close()

    def kill(self) -> None:
        """A plain env has nothing to kill: a thread stuck in it is abandoned (the runner replaces it). A proxy of
        an env hosted elsewhere ends that env, which also frees the thread waiting on it."""
        kill = getattr(self.env, "kill", None)
        if callable(kill):
            kill()


class EnvCalls:
    """The env side of a remote handle (child process or Ray actor): builds the env, runs one request at a time
    and packs the result or the failure as plain data, because exceptions raised by env code may not pickle."""

    def __init__(self, factory: Callable[[], Env]) -> None:
        self.factory = factory
        self.env: Env | None = None

    def open(self) -> tuple[str, Any]:
        """Build the env; ("ok", its limits) or ("raise", failure)."""
        try:
            self.env = self.factory()
        except BaseException as exc:
            return _failure(exc)
        return ("ok", EnvLimits.of(self.env))

    def call(self, op: str, arg: Any) -> tuple[str, Any]:
        """Run `reset` (arg: seed, options), `step` (arg: action) or `close`; ("ok", result) or ("raise", ...)."""
        try:
            if self.env is None:
                raise RuntimeError("the env was not built")
            if op == "reset":
                result: Any = _reset(self.env, *arg)
            elif op == "step":
                result = self.env.step_result(arg)
                result.info = _portable(result.info)
            elif op == "close":
                result = self.env.close()
            else:
                raise ValueError(f"unknown env-worker op {op!r}")
        except Exception as exc:
            return _failure(exc)
        return ("ok", result)


def _failure(exc: BaseException) -> tuple[str, Any]:
    return ("raise", (type(exc).__name__, str(exc), isinstance(exc, InfraError)))


def unpack_reply(reply: tuple[str, Any]) -> Any:
    """The payload of an `EnvCalls` reply, or the env's failure raised here as `RemoteEnvError`."""
    status, payload = reply
    if status == "raise":
        type_name, message, infra = payload
        raise RemoteEnvError(type_name, message, infra=infra)
    return payload


def _serve(conn: multiprocessing.connection.Connection, factory: Callable[[], Env]) -> None:
    """Child process main loop: build the env, then answer (op, arg) requests until `close` or EOF."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's to handle; it kills us when done
    calls = EnvCalls(factory)
    opened = calls.open()
    conn.send(opened)
    if opened[0] != "ok":
        return
    while True:
        try:
            op, arg = conn.recv()
        except (EOFError, OSError):
            return
        message = calls.call(op, arg)
        if op == "close":
            return  # the parent does not wait for a reply; it joins, then kills
        try:
            conn.send(message)
        except Exception as exc:  # an unpicklable result: report it as the env's failure
            conn.send(("raise", (type(exc).__name__, f"result could not be sent: {exc}", False)))


def _portable(info: dict[str, Any]) -> dict[str, Any]:
    from .rollout import jsonable

    return jsonable(info)


@dataclass(frozen=True)
class EnvRecipe:
    """A picklable env factory: the registered entry point and its keyword arguments.

    Built from the registry in the parent, so envs registered at run time (tests, notebooks) can be made in a
    child process whose own registry never saw them, as long as their class is importable there.
    """

    env_id: str
    entry_point: Any
    kwargs: dict[str, Any]

    @classmethod
    def from_registry(cls, env_id: str, kwargs: dict[str, Any]) -> EnvRecipe:
        import gymnasium

        from .registry import env_info

        env_info(env_id)
        spec = gymnasium.spec(env_id)
        return cls(env_id, spec.entry_point, {**(spec.kwargs or {}), **kwargs})

    def env_class(self) -> Any:
        from gymnasium.envs.registration import load_env_creator

        return load_env_creator(self.entry_point) if isinstance(self.entry_point, str) else self.entry_point

    def __call__(self) -> Env:
        env = self.env_class()(**self.kwargs)
        return getattr(env, "unwrapped", env)


_context_lock = threading.Lock()
_context: Any = None


def _mp_context() -> Any:
    """A forkserver context (a clean single-threaded parent, so forking is safe) with the core preloaded."""
    global _context
    with _context_lock:
        if _context is None:
            methods = multiprocessing.get_all_start_methods()
            _context = multiprocessing.get_context("forkserver" if "forkserver" in methods else "spawn")
            if "forkserver" in methods:
                _context.set_forkserver_preload(["rlvr_gym.env_handles"])
        return _context


class ProcessEnv:
    """An env in a child process, driven over a pipe. `kill` ends the child at once (a hung call included)."""

    isolated = True

    def __init__(self, factory: Callable[[], Env]) -> None:
        ctx = _mp_context()
        self._conn, child_conn = ctx.Pipe()
        self._process = ctx.Process(target=_serve, args=(child_conn, factory), name="rlvr-env-worker", daemon=True)
        self._process.start()
        child_conn.close()  # so that our recv sees EOF when the child dies
        self.limits: EnvLimits = self._receive()

    def _receive(self) -> Any:
        try:
            reply = self._conn.recv()
        except (EOFError, OSError) as exc:
            self._process.join(1.0)
            raise EnvProcessDied(f"env worker process exited (exit code {self._process.exitcode})") from exc
        return unpack_reply(reply)

    def _call(self, op: str, arg: Any) -> Any:
        try:
            self._conn.send((op, arg))
        except (OSError, ValueError) as exc:
            raise EnvProcessDied(f"env worker process is gone ({exc})") from exc
        return self._receive()

    def reset(self, seed: int | None, options: dict[str, Any]) -> ResetOutcome:
        return self._call("reset", (seed, options))

    def step(self, action: str) -> StepResult:
        return self._call("step", action)

    def close(self) -> None:
        if self._process.is_alive():
            try:
                self._conn.send(("close", None))
            except (OSError, ValueError):
                pass
            self._process.join(2.0)
        self.kill()

    def kill(self) -> None:
        """SIGKILL the child; a thread blocked in `_receive` then sees EOF and returns (the pipe closes with GC)."""
        if self._process.is_alive():
            self._process.kill()
        self._process.join(1.0)  # SIGKILL is immediate; never hold the event loop long (reaped later otherwise)
