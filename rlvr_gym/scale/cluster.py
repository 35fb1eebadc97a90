"""A multi-node Ray cluster on this machine, on loopback only: for tests, benchmarks and trying the backend out.

Each node is a full Ray node (its own raylet, object store and worker processes) started through Ray's own
`ray.cluster_utils.Cluster`; all of them are children of this process, so stopping the cluster (or one node)
ends exactly the processes it started (and their workers, `cleanup.py`), by pid, and nothing else on the machine.
"""

from __future__ import annotations

import argparse
import atexit
import os
import shutil
import signal
import threading
from typing import Any

from .cleanup import node_processes, reap
from .session import environment, import_ray, loopback_environment, private_temp_dir


class LoopbackCluster:
    """`nodes` Ray nodes bound to 127.0.0.1, sharing a private temp dir and a fresh auth token.

    Use as a context manager; `address` is the head's GCS address for `rlvr_gym.scale.connect`. Each node carries
    a custom resource `node<i>` so that work can be pinned to it.
    """

    def __init__(self, nodes: int = 2, *, cpus_per_node: int = 1, object_store_mb: int = 80) -> None:
        if nodes < 1:
            raise ValueError("a cluster needs at least one node")
        self.size = nodes
        self.cpus_per_node = cpus_per_node
        self.object_store_mb = object_store_mb
        self.temp_dir = ""
        self._cluster: Any = None
        self._env: Any = None
        self.nodes: list[Any] = []

    def start(self) -> LoopbackCluster:
        self.temp_dir = private_temp_dir()
        self._env = environment(loopback_environment(self.temp_dir))
        self._env.__enter__()  # before Ray is imported (see session.py)
        atexit.register(self.stop)
        try:
            import_ray()
            from ray.cluster_utils import Cluster

            self._cluster = Cluster(initialize_head=False, shutdown_at_exit=True)
            for index in range(self.size):
                self.nodes.append(self._cluster.add_node(**self._node_args(index)))
            self._cluster.wait_for_nodes()
        except BaseException:
            self.stop()
            raise
        return self

    def _node_args(self, index: int) -> dict[str, Any]:
        args: dict[str, Any] = {
            "node_ip_address": "127.0.0.1",
            "num_cpus": self.cpus_per_node,
            "object_store_memory": self.object_store_mb * 1024 * 1024,
            "resources": {f"node{index}": 1.0},
        }
        if index == 0:
            args |= {"include_dashboard": False, "temp_dir": self.temp_dir}
        return args

    @property
    def address(self) -> str:
        return self._cluster.address

    def kill_node(self, index: int) -> None:
        """End one worker node's processes at once (SIGKILL): what a crashed machine looks like to the cluster."""
        if index == 0:
            raise ValueError("node 0 is the head; killing it ends the cluster")
        started = node_processes([self.nodes[index]])
        self._cluster.remove_node(self.nodes[index], allow_graceful=False)
        reap(started, wait_s=0.0)  # its workers too, at once, as on a machine that crashed

    def stop(self) -> None:
        """Stop every node and every process they started, then remove the temp dir; safe to call twice."""
        atexit.unregister(self.stop)
        if self._cluster is not None:
            started = node_processes(self._cluster.list_all_nodes())
            self._cluster.shutdown()
            self._cluster = None
            reap(started)
        if self._env is not None:
            self._env.__exit__(None, None, None)
            self._env = None
        if self.temp_dir:
            shutil.rmtree(self.temp_dir, ignore_errors=True)
            self.temp_dir = ""

    def __enter__(self) -> LoopbackCluster:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def main(argv: list[str] | None = None) -> int:
    """`python -m rlvr_gym.scale --nodes 2`: run a loopback cluster until Ctrl-C (or SIGTERM).

    Prints the address for `connect`/`--ray-address` and the variables a driver in another shell needs.
    """
    parser = argparse.ArgumentParser(description=main.__doc__)
    parser.add_argument("--nodes", type=int, default=2)
    parser.add_argument("--cpus-per-node", type=int, default=1)
    args = parser.parse_args(argv)
    stop = threading.Event()
    with LoopbackCluster(args.nodes, cpus_per_node=args.cpus_per_node) as cluster:
        signal.signal(signal.SIGTERM, lambda *_: stop.set())  # after the start: Ray's nodes install their own
        print(
            f"export RAY_AUTH_MODE={os.environ['RAY_AUTH_MODE']} RAY_AUTH_TOKEN={os.environ.get('RAY_AUTH_TOKEN', '')}"
        )
        print(f"address: {cluster.address}", flush=True)
        try:
            stop.wait()
        except KeyboardInterrupt:
            pass
    return 0
