"""Robot-program family (RoboEval-style): our own generated tasks, programs run in the sandbox, trusted replay.

`simulator.py` is the robot, `temporal.py`/`checkspec.py` the checks over its call trace,
`constraint_kinds.py`/`tasks.py` the task generator, `execution.py` + `sandbox_job.py` the sandboxed batch runs,
`replay.py` the trusted replay, `verifier.py` the reward, `env.py` the envs and `roboeval.py` the eval-only loader
of a user's RoboEval checkout.
Licence: no RoboEval content is in this package; see docs/robot.md.
"""

from __future__ import annotations

ENV_MODULE = "rlvr_gym.envs.robot.env"


def register_envs() -> None:
    """Register the robot envs in the rlvr namespace (called through the `rlvr_gym.envs` entry point)."""
    from rlvr_gym import register

    register(
        "rlvr/RobotProgram-v0",
        f"{ENV_MODULE}:RobotProgramEnv",
        family="robot",
        description="Write a Python robot program (go_to, ask, say, pick, place, ...) for a generated RoboEval-style "
        "task; it runs in the sandbox on 2-3 hidden world states and temporal checks judge the replayed call "
        "trace (difficulty 1..5 by constraint kind).",
    )
    register(
        "rlvr/RobotInteractive-v0",
        f"{ENV_MODULE}:RobotInteractiveEnv",
        family="robot",
        description="The robot tasks played one API call per turn on a world state: the agent sees each result and "
        "can repair mistakes; done() ends the episode and the task's temporal check judges the trace.",
    )
    register(
        "rlvr/RoboEval-v0",
        f"{ENV_MODULE}:RoboEvalEnv",
        family="robot",
        description="EVALUATION ONLY - the original RoboEval tasks read from a checkout you supply "
        "(--env-arg roboeval_path=PATH or $RLVR_ROBOEVAL_PATH); its licence forbids using them as training data. "
        "Programs run in the sandbox, the checkout's own checks judge the replayed trace.",
    )
