"""Tool-calling envs: typed tools over a simulated world, depth-stratified compositional tasks scored with the
TIER rubric, and BFCL single-turn categories with AST checking. Registration stays light (no data is read here).
"""

from __future__ import annotations


def register_envs() -> None:
    from rlvr_gym import register

    register("rlvr/ToolDepth-v0", "rlvr_gym.envs.tools.depth:ToolDepthEnv", family="tools",
             description="Compositional tool-call chains of depth 1-6 (DepthBench-like), TIER reward; kwargs "
                         "depths, split (train|unseen|all), seed, size")
    register("rlvr/ToolDepth12-v0", "rlvr_gym.envs.tools.depth:ToolDepthEnv", family="tools",
             description="ToolDepth restricted to depths 1-2", depths=[1, 2])
    register("rlvr/ToolDepthUnseen-v0", "rlvr_gym.envs.tools.depth:ToolDepthEnv", family="tools",
             description="ToolDepth with held-out tools (unseen split)", split="unseen")
    register("rlvr/BFCL-v0", "rlvr_gym.envs.tools.bfcl:BFCLEnv", family="tools",
             description="BFCL v4 single-turn categories (from the bfcl-eval package) with AST checking; "
                         "kwarg category", category="simple")
