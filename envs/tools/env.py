"""The multi-turn tool env: the agent calls tools (any number per turn), the env runs them and answers with tool
messages, until the agent gives a final answer, submits a TIER chain, or the turn limit ends the episode.

Scoring is the TIER rubric over the whole episode (see `tier.py`); the answer is checked against the value the
task's reference chain produced when the task was generated, so any execution path that reaches it gets full credit.
"""

from __future__ import annotations

from typing import Any

from rlvr_gym import Env, Message, StepResult, Task, Verdict
from rlvr_gym.toolcalls import ParsedOutput, normalize_tools, parse_tool_calls

from .answers import text_matches, values_match
from .catalog import default_toolset
from .executor import execute_parsed
from .tier import TIER_PENALTY, TierTally, tier_rubric, tier_verdict
from .toolset import ToolOutcome, Toolset


class ToolEnv(Env):
    """Base of tool-calling envs over a `Toolset`. Subclasses provide `get_task` (and `num_tasks`).

    Tasks carry `metadata["tools"]` (the OpenAI schemas offered to the agent; agents pass them to chat templates and
    servers), `metadata["tool_names"]` and `ground_truth["answer"]`.
    """

    family = "tools"
    max_turns = 10

    def __init__(
        self, *, toolset: Toolset | None = None, tier_weights: dict[str, float] | None = None,
        tier_penalty: float = TIER_PENALTY, **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self.toolset = toolset or default_toolset()
        self.rubric = tier_rubric(tier_weights)
        self.penalty = tier_penalty
        self.world: Any = None
        self.tally = TierTally()

    # -- episode
    def start(self, task: Task) -> list[Message]:
        self.world = self.toolset.new_world()
        self.tally = TierTally()
        return task.prompt_messages()

    def offered(self) -> list[str]:
        assert self.task is not None
        meta = self.task.metadata
        if meta.get("tool_names"):
            return list(meta["tool_names"])
        return list(normalize_tools(meta.get("tools")) or self.toolset.names())

    def respond(self, action: str) -> StepResult:
        assert self.task is not None
        names = self.offered()
        parsed = parse_tool_calls(action, self.toolset.schemas(names))
        self.tally.add_parse(parsed)
        info: dict[str, Any] = {"format": parsed.format, "calls": len(parsed.calls),
                                "parse_errors": [e.describe() for e in parsed.errors]}
        if parsed.calls:
            outcomes = execute_parsed(parsed, self.toolset, self.world, names)
            self.tally.add_outcomes(outcomes)
            if parsed.format == "tier":
                return self.finish(self.chain_correct(parsed, outcomes), info, parsed.syntax_ok)
            return StepResult(observation=self.tool_messages(parsed, outcomes), valid_action=parsed.syntax_ok,
                              info=info)
        if parsed.errors:
            text = "Your tool call could not be used:\n" + "\n".join(f"- {e.describe()}" for e in parsed.errors)
            return StepResult(observation=[Message(role="user", content=text)], valid_action=False, info=info)
        return self.finish(text_matches(parsed.content, self.expected()), info, True)

    # -- scoring
    def expected(self) -> Any:
        assert self.task is not None
        return (self.task.ground_truth or {}).get("answer")

    def chain_correct(self, parsed: ParsedOutput, outcomes: list[ToolOutcome]) -> bool:
        if not outcomes or not all(o.ok for o in outcomes):
            return False
        got = [o.result for o in outcomes] if parsed.return_mode == "all" else outcomes[-1].result
        return values_match(got, self.expected())

    def finish(self, correct: bool, info: dict[str, Any], valid: bool) -> StepResult:
        verdict = self.score(correct)
        return StepResult(reward=verdict.reward, terminated=True, valid_action=valid, verdict=verdict, info=info)

    def score(self, correct: bool) -> Verdict:
        notes = "; ".join(self.tally.notes[:10]) or None
        return tier_verdict(self.tally, correct, rubric=self.rubric, penalty=self.penalty, feedback=notes)

    def truncation_verdict(self) -> Verdict:
        verdict = self.score(False)
        return verdict.model_copy(update={"feedback": f"turn limit of {self.max_turns} reached"})

    # -- observations
    def tool_messages(self, parsed: ParsedOutput, outcomes: list[ToolOutcome]) -> list[Message]:
        messages = [Message(role="tool", tool_call_id=call.id, name=call.name, content=outcome.as_content())
                    for call, outcome in zip(parsed.calls, outcomes, strict=True)]
        syntax = [e for e in parsed.errors if e.call_index is None]
        if syntax:
            messages.append(Message(role="user", content="Some tool call blocks could not be parsed:\n"
                                    + "\n".join(f"- {e.describe()}" for e in syntax)))
        return messages
