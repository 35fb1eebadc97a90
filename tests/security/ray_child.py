"""A driver for test_ray_cleanup.py: connects a private Ray, places an env actor and a policy replica, reports what
Ray started, then leaves the session by an error or by Ctrl-C and uses the stale handles afterwards."""

from __future__ import annotations

import json
import signal
import sys
import time

from rlvr_gym.scale import RayEnvFactory, RayEnvLost, RayPolicy, connect
from rlvr_gym.scale.cleanup import node_processes
from rlvr_gym.types import PolicyError


class EchoPolicy:
    async def generate(self, requests):
        return []


def main(mode: str) -> None:
    # a user's Ctrl-C reaches a driver whose SIGINT handler is Python's; a test run started in the background of a
    # non-interactive shell would hand this process SIGINT ignored (and Python then installs no handler)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    env = policy = None
    try:
        with connect(num_cpus=2) as session:
            import ray

            env = RayEnvFactory.from_registry("rlvr/MathArithmetic-v0")()
            env.reset(options={"task_index": 0})
            policy = RayPolicy(EchoPolicy, replicas=1)
            started = node_processes([ray._private.worker._global_node])
            print(json.dumps({"temp_dir": session._temp_dir, "procs": started}), flush=True)
            if mode == "error":
                sys.stdin.readline()  # the test has noted our listeners (leaving at once would race it)
                raise RuntimeError("boom")
            time.sleep(120)  # the test sends SIGINT here
    except (RuntimeError, KeyboardInterrupt) as exc:
        print(json.dumps({"left_by": type(exc).__name__}), flush=True)
    env.kill()  # the error paths of a runner's worker thread, after the session is gone
    env.close()
    policy.kill()
    try:
        env.reset(options={"task_index": 1})
    except RayEnvLost:
        pass
    try:
        import asyncio

        asyncio.run(policy.generate([]))
    except PolicyError:
        pass
    import ray

    print(json.dumps({"ray_initialized": ray.is_initialized()}), flush=True)


if __name__ == "__main__":
    main(sys.argv[1])
