"""Non-solving tool policies for `rlvr-gym check-env`'s reward floor (the env hook `floor_policies`).

A constant answer, calls with empty or sample arguments to whatever tools are offered, and the reference chain
stopped short of a right answer (a wrong final value, or none). The reward contract (docs/reward-contract.md)
allows none of them more than 5% of the oracle's mean.
"""

from __future__ import annotations

import json
import random

from rlvr_gym import Task, ToolCall
from rlvr_gym.tool_markup import format_tool_calls

from . import bfcl
from .catalog import default_toolset
from .verifier import wrong_answers


def _call(name: str, args: dict) -> str:
    return format_tool_calls([ToolCall(id="0", name=name, arguments=json.dumps(args))])


def floor_policies(task: Task, rng: random.Random) -> dict[str, list[str]]:
    """Depth tasks: constant answers, offered tools called blindly, the chain with a wrong or no answer."""
    if (task.ground_truth or {}).get("kind") == "bfcl":
        functions = task.ground_truth.get("function") or [{"name": "f"}]
        return {"no_call": [bfcl.NO_CALL_TEXT], "first_function_no_args": [bfcl.hermes([(functions[0]["name"], {})])]}
    toolset = default_toolset()
    names = sorted(task.metadata.get("tool_names") or [])
    policies = {"answer_zero": ["Answer: 0"], "answer_yes": ["Answer: yes"]}
    for name in names:
        policies[f"blind_{name}"] = [_call(name, {}), "Answer: 0"]
        sample = toolset[name].meta.get("sample") if name in toolset else None
        if sample is not None:
            policies[f"sample_{name}"] = [_call(name, sample(rng)), "Answer: 0"]
    right_chain_wrong_answer, *_ = wrong_answers(task, rng)
    policies["chain_wrong_answer"] = right_chain_wrong_answer
    policies["chain_no_answer"] = right_chain_wrong_answer[:-1]
    return policies
