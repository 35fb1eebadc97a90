"""Math env family: generated problems and GSM8K/MATH-style dataset files, in the family template.

`tasks.MathTasks` / `dataset.MathDatasetTasks` make tasks, `verifier.verify(task, trajectory)` judges them (the
extraction rule is in `extract`, the accepted number notations in `notation`), `env` holds the Gymnasium envs.
Importing this package is light: sympy and math-verify load only for symbolic dataset answers. See docs/math.md.
"""

from __future__ import annotations

ENV_MODULE = "rlvr_gym.envs.math.env"
# Arithmetic is what the 135M model can do at difficulty 1; the other kinds show where it cannot.
STARTER_MIX = {
    "arithmetic": 4.0,
    "fractions": 1.0,
    "linear": 1.0,
    "modular": 1.0,
    "combinatorics": 1.0,
    "radicals": 1.0,
    "units": 1.0,
}


def register_envs() -> None:
    """Register the math envs in the rlvr namespace (called through the `rlvr_gym.envs` entry point)."""
    from rlvr_gym import register

    register(
        "rlvr/Math-v0",
        f"{ENV_MODULE}:MathEnv",
        family="math",
        description="Generated math problems mixing arithmetic, fractions, linear equations, modular arithmetic, "
        "combinatorics word problems, radicals and unit conversions (difficulty 3 of 1..5); answer in \\boxed{}.",
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
        "rlvr/MathAddition-v0",
        f"{ENV_MODULE}:MathEnv",
        family="math",
        description="Addition of two numbers from 0 to 49 with a worked one-shot example: the embedded SmolLM2-135M "
        "starts at about 0.4 pass@1 and a 2-core GRPO run raises it (configs/quickstart-math.yaml, "
        "docs/results/quickstart.md); ~250 held-out questions.",
        families=["addition"],
        difficulty=2,
        prompt_style="one_shot",
    )
    register(
        "rlvr/MathStarter-v0",
        f"{ENV_MODULE}:MathEnv",
        family="math",
        description="Difficulty-1 problems of every kind (arithmetic weighted 4:1) with a worked one-shot example in "
        "the prompt: the embedded SmolLM2-135M solves most arithmetic ones and few others, a first eval that means "
        "something.",
        difficulty=1,
        prompt_style="one_shot",
        families=STARTER_MIX,
    )
    register(
        "rlvr/MathDataset-v0",
        f"{ENV_MODULE}:MathDatasetEnv",
        family="math",
        description="Math problems from JSONL/parquet files (question/answer fields, GSM8K `####` or MATH "
        "\\boxed{} answers); data_files= for your own, a bundled 20-problem sample by default.",
    )
