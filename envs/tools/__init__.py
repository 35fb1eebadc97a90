"""Tool-calling envs: depth-stratified call chains over typed tools in a simulated world (TIER components, reward
following provenance) and BFCL single-turn categories (AST checking). Registration reads no data.
"""

from __future__ import annotations


def register_envs() -> None:
    from rlvr_gym import register

    env = "rlvr_gym.envs.tools.env"
    register(
        "rlvr/ToolDepth-v0",
        f"{env}:ToolDepthEnv",
        family="tools",
        description="Compositional tool-call chains of depth 1-6 (DepthBench-like), TIER components with "
        "provenance; kwargs depths, split (train|eval), tools (seen|unseen|all), seed, size",
    )
    register(
        "rlvr/ToolDepth12-v0",
        f"{env}:ToolDepthEnv",
        family="tools",
        description="ToolDepth restricted to depths 1-2",
        depths=[1, 2],
    )
    register(
        "rlvr/ToolDepthUnseen-v0",
        f"{env}:ToolDepthEnv",
        family="tools",
        description="ToolDepth chains that use held-out tools (eval split)",
        tools="unseen",
        split="eval",
    )
    register(
        "rlvr/BFCL-v0",
        f"{env}:BFCLEnv",
        family="tools",
        description="BFCL v4 single-turn categories (from the bfcl-eval package) with AST checking; "
        "kwarg category; eval-only",
        category="simple",
    )
