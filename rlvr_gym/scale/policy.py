"""Policy replicas as Ray actors: one model copy per actor, spread over the cluster, behind the Policy protocol.

A `Policy` is stateless and batched (`generate(requests) -> generations`), so any replica can serve any call:
`RayPolicy` sends each call to the live replica with the fewest calls in flight, and a replica's own batcher
merges concurrent calls (replica actors are async, so calls overlap there). The conversation and the token trajectory
stay in the agent (`ChatAgent`) in the driver; give `RayPolicy` the tokenizer so token-in/token-out still works.

A replica that dies is a `PolicyError` for the calls it held (policy errors, no reward, never an empty answer) and
leaves the rotation; the others go on serving.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

from ..types import Generation, GenerationRequest, PolicyError
from .remote_env import Placement
from .session import RayUnavailable, connected_ray, import_ray


class PolicyReplica:
    """The actor body: a policy built on its node from a picklable factory (model files must exist there)."""

    def __init__(self, factory: Callable[[], Any]) -> None:
        self.policy = factory()

    def where(self) -> dict[str, Any]:
        import ray

        return {"node_id": ray.get_runtime_context().get_node_id(), "pid": os.getpid()}

    async def generate(self, requests: list[GenerationRequest]) -> list[Generation]:
        return await self.policy.generate(requests)

    async def aclose(self) -> None:
        close = getattr(self.policy, "aclose", None)
        if close is not None:
            await close()


class RayPolicy:
    """`replicas` copies of the policy made by `factory`, each in a Ray actor; a Policy for any agent."""

    def __init__(
        self,
        factory: Callable[[], Any],
        *,
        replicas: int = 2,
        tokenizer: Any = None,
        placement: Placement | None = None,
        num_gpus: float = 0.0,
    ) -> None:
        ray = import_ray()
        if not ray.is_initialized():
            raise RayUnavailable("not connected to Ray: call rlvr_gym.scale.connect(address) first")
        if replicas < 1:
            raise ValueError("replicas must be >= 1")
        self.tokenizer = tokenizer
        self._ray = ray
        placement = placement or Placement(num_cpus=1.0)
        actor_class = ray.remote(PolicyReplica).options(**placement.actor_options(), num_gpus=num_gpus)
        self._replicas = [actor_class.remote(factory) for _ in range(replicas)]
        self._in_flight = [0] * replicas
        self._served = [0] * replicas
        self._alive = [True] * replicas
        try:
            self.where = ray.get([r.where.remote() for r in self._replicas], timeout=placement.start_timeout_s)
        except Exception as exc:
            self.kill()
            raise PolicyError(f"policy replicas could not be started: {type(exc).__name__}: {exc}") from exc

    def _pick(self) -> int:
        """The live replica with the fewest calls in flight (then the fewest served, so load rotates)."""
        live = [i for i in range(len(self._replicas)) if self._alive[i]]
        if not live:
            raise PolicyError("every policy replica is lost")
        return min(live, key=lambda i: (self._in_flight[i], self._served[i]))

    async def generate(self, requests: list[GenerationRequest]) -> list[Generation]:
        if connected_ray() is None:  # the session closed: calling Ray now would start a default one
            raise PolicyError("policy replicas are gone: not connected to Ray any more")
        index = self._pick()
        self._in_flight[index] += 1
        self._served[index] += 1
        try:
            return await self._replicas[index].generate.remote(requests)
        except self._ray.exceptions.RayTaskError as exc:  # the policy itself raised on the replica
            cause = exc.cause if exc.cause is not None else exc
            if isinstance(cause, PolicyError):
                raise cause from exc
            raise PolicyError(f"policy replica {index} failed: {type(cause).__name__}: {cause}") from exc
        except self._ray.exceptions.RayError as exc:
            self._alive[index] = False  # its process or node is gone: later calls go to the others
            raise PolicyError(f"policy replica {index} lost ({type(exc).__name__}): {exc}") from exc
        finally:
            self._in_flight[index] -= 1

    async def aclose(self) -> None:
        try:
            if connected_ray() is not None:
                await self._gather_quietly([r.aclose.remote() for r in self._replicas])
        finally:
            self.kill()

    async def _gather_quietly(self, refs: list[Any]) -> None:
        for ref in refs:
            try:
                await ref
            except Exception:
                pass

    def kill(self) -> None:
        """End every replica; a no-op once the session is closed (they ended with it)."""
        if connected_ray() is None:
            return
        for replica in self._replicas:
            try:
                self._ray.kill(replica, no_restart=True)
            except Exception:
                pass
