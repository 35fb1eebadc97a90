"""Math env family: procedurally generated problems and GSM8K/MATH-style dataset files, verified with math-verify.

Importing this package is light (no sympy, no math-verify): the verifier loads them on the first symbolic answer.
Pure scoring without an env: `rlvr_gym.envs.math.verifier.verify_answer(output, gold)`.
"""

from __future__ import annotations

ENV_MODULE = "rlvr_gym.envs.math.env"


def register_envs() -> None:
    """Register the math envs in the rlvr namespace (called through the `rlvr_gym.envs` entry point)."""
    from rlvr_gym import register

    register(
        "rlvr/Math-v0",
        f"{ENV_MODULE}:MathEnv",
        family="math",
        description="Generated math problems mixing arithmetic, fractions, linear equations, modular arithmetic "
        "and combinatorics word problems (difficulty 3 of 1..5); answer in \\boxed{}.",
        difficulty=3,
    )
    register(
        "rlvr/MathArithmetic-v0",
        f"{ENV_MODULE}:MathEnv",
        family="math",
        description="Single-digit addition (arithmetic, difficulty 1): learnable by a 135M model in a quick RL demo.",
        families=["arithmetic"],
        difficulty=1,
    )
    register(
        "rlvr/MathDataset-v0",
        f"{ENV_MODULE}:MathDatasetEnv",
        family="math",
        description="Math problems from JSONL/parquet files (question/answer fields, GSM8K `####` or MATH "
        "\\boxed{} answers); data_files= for your own, a bundled 20-problem sample by default.",
    )
