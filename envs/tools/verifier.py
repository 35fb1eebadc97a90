"""`verify(task, trajectory) -> Verdict` for tool tasks, and the wrong answers `rlvr-gym check-env` tries.

Depth tasks are replayed: every action is parsed, its calls run in a fresh world by the `Executor`, which records
where each argument came from; the verdict is computed from those records alone: which required values grounded
calls produced, in any order and by any tools (`provenance.py`), scored by the task's reward mode (`tier.py`). The
env plays the very same `ToolEpisode`, so an offline re-score equals the live reward. An episode ends at the first
action without calls (a final `Answer:`) or at a TIER chain (`<tool_call return="one">`, whose last output is the
answer). A message that mixes a chain with other call blocks, or holds two chains, commits to several plans at once
and is invalid. BFCL tasks are scored by BFCL's AST rules (`bfcl.score_action`).
"""

from __future__ import annotations

import json
import random
from collections.abc import Sequence
from typing import Any

from rlvr_gym import Message, Task, ToolCall, Verdict
from rlvr_gym.tool_markup import format_tool_calls

from . import bfcl
from .answers import Ambiguous, answer_matches, extract_answer
from .catalog import default_toolset
from .executor import Executor, Record, value_key
from .parsing import ParsedOutput, parse_tool_calls
from .provenance import trace
from .tier import DEFAULT_MODE, RUBRICS, Evidence
from .toolset import Toolset


class ToolEpisode:
    """One depth-task episode in progress: parse, execute, keep the evidence; `verdict()` judges it."""

    def __init__(self, task: Task, toolset: Toolset | None = None) -> None:
        self.task = task
        self.toolset = toolset or default_toolset()
        self.executor = Executor(self.toolset, task.metadata.get("tool_names") or [])
        self.evidence = Evidence()
        self.actions = 0
        self.final: tuple[str, Any] | None = None  # ("chain", returned record) / ("text", answer) / ("invalid", why)
        self.notes: list[str] = []

    @property
    def done(self) -> bool:
        return self.final is not None

    def act(self, action: str) -> tuple[ParsedOutput, list[Record]]:
        """Play one action; returns what was parsed and the records of the calls it made."""
        parsed = parse_tool_calls(action)
        index, self.actions = self.actions, self.actions + 1
        e = self.evidence
        e.syntax_failures += not parsed.syntax_ok
        self.notes.extend(err.describe() for err in parsed.errors[:5])
        if parsed.format == "tier" and (parsed.errors or parsed.blocks > 1):
            self.final = ("invalid", "a chain must be the only call block of its message")
        records = self.executor.run(parsed, index) if parsed.calls else []
        for i, record in enumerate(records):
            outcome = record.outcome
            e.calls += 1
            e.exec_failures += not outcome.ok
            e.param_mismatches += outcome.param_errors
            e.type_mismatches += outcome.type_errors
            if outcome.error_kind == "unknown_tool":  # TIER: each argument of an unknown tool is an unknown parameter
                e.unknown_names += 1
                e.param_mismatches += len(parsed.arguments(i))
        if self.final is None and parsed.format == "tier":
            returned = records[-1] if parsed.return_mode == "one" and records else None
            self.final = ("chain", returned) if returned is not None else ("invalid", "a chain must return one output")
        elif self.final is None and not parsed.calls and parsed.syntax_ok:
            try:
                self.final = ("text", extract_answer(parsed.content))
            except Ambiguous as exc:
                self.final = ("invalid", str(exc))
        return parsed, records

    def verdict(self) -> Verdict:
        """The verdict from the executor's records (also for an episode that ended without a final answer)."""
        truth = self.task.ground_truth
        flow = trace(truth, self.executor.records, self.toolset)
        e = self.evidence
        e.progress = flow.progress
        e.unrelated_calls = sum(1 for r in self.executor.records if r.position not in flow.related)
        answers = [self.executor.records[p] for p in flow.producers[-1]]
        kind, value = self.final or ("invalid", "no final answer")
        if kind == "chain":  # the returned call must be grounded and return the produced answer
            e.answer_correct = bool(answers) and value.position in flow.grounded and _same(value, answers[0])
        elif kind == "text":
            e.answer_correct = any(_states(value, r.outcome.result) for r in answers)
        rubric = RUBRICS[truth.get("reward_mode", DEFAULT_MODE)]
        verdict = rubric.score(evidence=e, feedback="; ".join(self.notes[:10]) or None)
        metrics = {
            "progress": e.progress,
            "values_produced": float(sum(flow.produced)),
            "calls": float(e.calls),
            "unrelated_calls": float(e.unrelated_calls),
            "param_mismatches": float(e.param_mismatches),
            "type_mismatches": float(e.type_mismatches),
            "exec_failures": float(e.exec_failures),
        }
        verdict = verdict.model_copy(update={"components": {**verdict.components, **metrics}})
        if kind == "invalid":  # no committed answer, or several: nothing is earned (process parts stay visible)
            return Verdict.invalid(value, components={**verdict.components, "reward_if_valid": verdict.reward})
        return verdict


def _same(record: Record, other: Record) -> bool:
    return value_key(record.outcome.result) == value_key(other.outcome.result)


def _states(answer: str, output: Any) -> bool:
    try:
        return answer_matches(answer, output)
    except Ambiguous:
        return False


def verify(task: Task, trajectory: Sequence[str]) -> Verdict:
    """The one verifier signature: pure, deterministic, the same verdict the env gives live."""
    if (task.ground_truth or {}).get("kind") == "bfcl":
        if not trajectory:
            return Verdict.invalid("no action")
        return bfcl.score_action(task, trajectory[0])
    episode = ToolEpisode(task)
    for action in trajectory:
        episode.act(action if isinstance(action, str) else str(action))
        if episode.done:
            break
    return episode.verdict()


# ---- wrong answers for check-env -----------------------------------------------------------------------------


def wrong_answers(task: Task, rng: random.Random) -> list[list[str]]:
    """Plausible trajectories that must not pass (see docs/tools.md for what each one attacks)."""
    if (task.ground_truth or {}).get("kind") == "bfcl":
        return _bfcl_wrong(task)
    truth = task.ground_truth
    steps, outputs, answer = truth["chain"], truth["outputs"], truth["answer"]
    literal = [_literal_call(s, outputs, k) for k, s in enumerate(steps)]
    turns = [format_tool_calls([c]) for c in literal]
    wrong = [
        [*turns, f"Answer: {_near_miss(answer, rng)}"],  # the right chain, a wrong final value
        [f"Answer: {_show(answer)}"],  # the right value without any call
        [*turns[:-1], f"Answer: {_show(answer)}"],  # skipped the last step, stated its value anyway
        [_unrelated(task, rng), f"Answer: {_show(answer)}"],  # an unrelated call, then the right value
        [*turns, f"Answer: {_show(answer)}\nAnswer: {_near_miss(answer, rng)}"],  # two committed answers
    ]
    if len(steps) >= 2:
        wrong.append([format_tool_calls(literal, style="tier")])  # one chain with outputs typed in: no provenance
        # skipped a middle step: its successor gets the value typed in
        skipped = [c for k, c in enumerate(literal) if k != len(steps) - 2]
        wrong.append([format_tool_calls(skipped), f"Answer: {_show(answer)}"])
    if isinstance(answer, int | float) and not isinstance(answer, bool):  # laundering through neutral operations
        for name, args in (
            ("multiply", {"a": answer, "b": 1}),
            ("add_numbers", {"a": answer, "b": 0}),
            ("round_number", {"value": answer, "digits": 4}),
        ):
            call = ToolCall(id="0", name=name, arguments=json.dumps(args))
            wrong.append([format_tool_calls([call], style="tier")])
            wrong.append([format_tool_calls([call]), f"Answer: {_show(answer)}"])
    return wrong


def _literal_call(step: dict[str, Any], outputs: list[Any], k: int) -> ToolCall:
    args = dict(step["arguments"])
    if step["chained"]:
        args[step["chained"]] = outputs[k - 1]
    return ToolCall(id=str(k), name=step["name"], arguments=json.dumps(args))


def _unrelated(task: Task, rng: random.Random) -> str:
    """A well-formed call to an offered tool that is not in the chain (or the first tool with other arguments)."""
    toolset = default_toolset()
    chain = {s["name"] for s in task.ground_truth["chain"]}
    others = sorted(n for n in task.metadata.get("tool_names", []) if n not in chain) or sorted(chain)
    tool = toolset[rng.choice(others)]
    args = tool.meta["sample"](rng)
    return format_tool_calls([ToolCall(name=tool.name, arguments=json.dumps(args))])


def _show(value: Any) -> str:
    return str(int(value)) if isinstance(value, float) and value.is_integer() else str(value)


def _near_miss(value: Any, rng: random.Random) -> str:
    if isinstance(value, bool) or not isinstance(value, int | float):
        text = str(value)
        return text + "s" if rng.random() < 0.5 else text[:-1] or "x"
    if float(value).is_integer():
        return str(int(value) + rng.choice([-1, 1]))
    digits = max(1, -_exponent(value))
    return f"{value + rng.choice([-1, 1]) * 10**-digits:.{digits}f}"


def _exponent(value: float) -> int:
    from decimal import Decimal

    return int(Decimal(repr(float(value))).as_tuple().exponent)


def _bfcl_wrong(task: Task) -> list[list[str]]:
    category = task.metadata.get("category", "simple")
    functions = task.ground_truth.get("function") or []
    if category in bfcl.NO_CALL_CATEGORIES:
        fn = functions[0] if functions else {"name": "f"}
        return [[bfcl.hermes([(fn["name"], {})])]]
    if category in bfcl.ANY_CALL_CATEGORIES:
        return [[bfcl.NO_CALL_TEXT], [""]]
    calls = bfcl.reference_calls({"function": functions, "ground_truth": task.ground_truth.get("ground_truth")})
    (name, args), rest = calls[0], calls[1:]
    return [
        [bfcl.hermes([(name + "_x", args), *rest])],  # a function that does not exist
        [bfcl.hermes([(name, {**args, "bogus_param_zz": 1}), *rest])],  # a parameter outside the schema
        [bfcl.hermes([*calls, calls[0]])],  # one call too many
        [bfcl.NO_CALL_TEXT],  # no call at all
    ]


def tool_messages(parsed: ParsedOutput, records: list[Record]) -> list[Message]:
    """The env's reply to a turn with calls: one tool message per call, then any syntax problems."""
    messages = [
        Message(role="tool", tool_call_id=r.call_id, name=r.name, content=r.outcome.as_content()) for r in records
    ]
    syntax = [e for e in parsed.errors if e.call_index is None]
    if syntax:
        messages.append(
            Message(
                role="user",
                content="Some tool call blocks could not be parsed:\n" + "\n".join(f"- {e.describe()}" for e in syntax),
            )
        )
    return messages
