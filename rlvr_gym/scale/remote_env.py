"""Envs hosted by Ray actors, spread over a cluster, played by the ordinary runner.

One actor holds one env instance and serves one episode at a time, like a worker process of `ProcessEnv`; the
runner's pool reuses it across episodes. Requests and replies are the same plain-data `EnvCalls` messages a child
process uses, so env failures arrive typed, and the env is rebuilt on the remote node from its `EnvRecipe` (entry
point + kwargs): the same env id, seed and task give the same task and verdict as a local run.

A call costs a round trip (~1 ms), so each is batched: reset brings back the observation, info and task at once.
An actor or node that dies mid-call is an infrastructure failure (`RayEnvLost`, an `InfraError`), never a reward.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any

from ..env import StepResult
from ..env_handles import EnvCalls, EnvLimits, EnvRecipe, RemoteEnvError, ResetOutcome, unpack_reply
from ..types import InfraError, Task
from .session import RayUnavailable, connected_ray, import_ray

CLOSE_WAIT_S = 5.0


class RayEnvLost(InfraError):
    """The Ray actor holding the env (or its node) died, could not be placed, or the connection to it failed."""


class EnvActor:
    """The actor body: an `EnvCalls` around the env, plus where it runs (for placement checks and logs)."""

    def __init__(self, recipe: EnvRecipe) -> None:
        self.calls = EnvCalls(recipe)

    def open(self) -> tuple[tuple[str, Any], dict[str, Any]]:
        import ray

        return self.calls.open(), {"node_id": ray.get_runtime_context().get_node_id(), "pid": os.getpid()}

    def call(self, op: str, arg: Any) -> tuple[str, Any]:
        return self.calls.call(op, arg)


_actor_class: Any = None


def _remote_actor_class() -> Any:
    global _actor_class
    if _actor_class is None:
        _actor_class = import_ray().remote(EnvActor)
    return _actor_class


@dataclass(frozen=True)
class Placement:
    """How env actors are placed: CPUs reserved per env and Ray's scheduling strategy.

    `num_cpus=0` (the default) lets any number of mostly-waiting envs share a node; give sandboxed, CPU-bound envs
    a real share (e.g. 1) so a node never runs more of them than it has cores. "SPREAD" puts consecutive actors on
    different nodes; "DEFAULT" packs them where Ray likes.
    """

    num_cpus: float = 0.0
    strategy: str = "SPREAD"
    resources: dict[str, float] = field(default_factory=dict)
    start_timeout_s: float = 120.0  # an actor not placed and built by then (no node fits) is given up

    def actor_options(self) -> dict[str, Any]:
        options: dict[str, Any] = {"num_cpus": self.num_cpus, "scheduling_strategy": self.strategy}
        if self.resources:
            options["resources"] = dict(self.resources)
        return options


class RayEnv:
    """An env proxy: the env methods the runner uses, each forwarded to one Ray actor.

    The runner wraps it like an in-process env (`LocalEnv`) and calls it from worker threads under its timeouts;
    on a timeout or failure it calls `kill`, which ends the actor and so also frees the thread waiting on it.
    """

    def __init__(self, recipe: EnvRecipe, placement: Placement | None = None) -> None:
        ray = import_ray()
        if not ray.is_initialized():
            raise RayUnavailable("not connected to Ray: call rlvr_gym.scale.connect(address) first")
        self.env_id = recipe.env_id
        self.task: Task | None = None
        self._ray = ray
        placement = placement or Placement()
        self._actor = _remote_actor_class().options(**placement.actor_options()).remote(recipe)
        try:
            opened, where = self._get(self._actor.open.remote(), timeout=placement.start_timeout_s)
            limits: EnvLimits = unpack_reply(opened)
        except BaseException:
            self.kill()  # never leave a pending or half-built actor behind
            raise
        self.node_id: str = where["node_id"]
        self.pid: int = where["pid"]
        self.step_timeout_s = limits.step_s
        self.episode_timeout_s = limits.episode_s
        self.reset_timeout_s = limits.reset_s

    def _get(self, ref: Any, timeout: float | None = None) -> Any:
        from ray import exceptions as rex

        try:
            return self._ray.get(ref, timeout=timeout)
        except rex.RayTaskError as exc:  # the env's reply itself failed (it would not pickle): the env's fault
            cause = exc.cause if exc.cause is not None else exc
            raise RemoteEnvError(type(cause).__name__, str(cause), infra=False) from exc
        except rex.GetTimeoutError as exc:
            raise RayEnvLost(f"{self.env_id}: no env actor could be started within {timeout}s") from exc
        except rex.RayError as exc:
            raise RayEnvLost(f"{self.env_id}: env actor lost ({type(exc).__name__}): {exc}") from exc

    def _call(self, op: str, arg: Any) -> Any:
        if connected_ray() is None:  # the session closed: a call now would start a default Ray
            raise RayEnvLost(f"{self.env_id}: not connected to Ray any more (the session was closed)")
        return unpack_reply(self._get(self._actor.call.remote(op, arg)))

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[Any, dict[str, Any]]:
        outcome: ResetOutcome = self._call("reset", (seed, options or {}))
        self.task = outcome.task
        return outcome.observation, outcome.info

    def step_result(self, action: str) -> StepResult:
        return self._call("step", action)

    def close(self) -> None:
        """Let the env release what it holds (sandboxes), briefly, then end the actor either way."""
        try:
            if connected_ray() is not None:
                self._ray.wait([self._actor.call.remote("close", None)], timeout=CLOSE_WAIT_S)
        finally:
            self.kill()

    def kill(self) -> None:
        """End the actor now (a call in flight then fails with `RayEnvLost`); safe to call twice, and a no-op once
        the session is closed (its actors ended with it; calling Ray then would start a second, default one)."""
        if connected_ray() is None:
            return
        try:
            self._ray.kill(self._actor, no_restart=True)
        except Exception:
            pass


class RayEnvFactory:
    """A picklable env factory for the runner (`env_factory=`): each call places one more env actor."""

    def __init__(self, recipe: EnvRecipe, placement: Placement | None = None) -> None:
        self.recipe = recipe
        self.placement = placement or Placement()

    @classmethod
    def from_registry(
        cls, env_id: str, env_kwargs: dict[str, Any] | None = None, placement: Placement | None = None
    ) -> RayEnvFactory:
        return cls(EnvRecipe.from_registry(env_id, dict(env_kwargs or {})), placement)

    def __call__(self) -> RayEnv:
        return RayEnv(self.recipe, self.placement)
