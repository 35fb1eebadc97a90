"""Scale-out on Ray: env actors spread over a cluster, played by the ordinary runner, and policy replicas
(see docs/scale.md).

Usage: `with connect("127.0.0.1:6379"): collect_on_ray("rlvr/CodeGen-v0", agent, tasks=64, concurrency=8)`;
`connect()` with no address starts a private one-node Ray on loopback instead.
"""

from .backend import BACKENDS, run_backend
from .cluster import LoopbackCluster
from .policy import PolicyReplica, RayPolicy
from .remote_env import EnvActor, Placement, RayEnv, RayEnvFactory, RayEnvLost
from .run import collect_on_ray, ray_collect_options
from .session import RaySession, RayUnavailable, connect

__all__ = [
    "BACKENDS",
    "EnvActor",
    "LoopbackCluster",
    "Placement",
    "PolicyReplica",
    "RayEnv",
    "RayEnvFactory",
    "RayEnvLost",
    "RayPolicy",
    "RaySession",
    "RayUnavailable",
    "collect_on_ray",
    "connect",
    "ray_collect_options",
    "run_backend",
]
