"""The code envs: the agent may `<run>` code a limited number of times, then `<submit>`s a solution.

Runs execute the task preamble plus the agent's code as a script in the sandbox and answer with its stdout,
stderr and status (truncated). A submission ends the episode with `verifier.verify`'s verdict; `info` carries the
token-level penalty spans of the submitted action. Runs and invalid actions (no code, ambiguous or overlong
submissions) earn 0 and count toward the turn limit.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

from rlvr_gym.env import Env, StepResult, feedback
from rlvr_gym.integrations.episode import ActionTool, ToolParam, tagged
from rlvr_gym.types import Message, Task, Verdict

from . import floor, verifier
from .actions import FORMAT_INSTRUCTIONS, ParsedAction, parse_action
from .execution import CodeExecutor, shared_executor
from .penalties import penalty_map
from .program import assemble
from .spec import spec_of
from .tasks import CodeGenTasks, HumanEvalTasks, MBPPTasks


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[:limit] + f"\n... [{len(text) - limit} more characters cut]"


class CodeEnv(Env):
    """Run-then-submit over a code task source; subclasses name it in `task_source`."""

    family = "code"
    step_timeout_s = 120.0  # a submission runs the whole hidden test suite (at most ~60 s of sandbox wall time)
    trainer_tools: ClassVar[tuple[ActionTool, ...]] = (
        ActionTool(
            "run",
            "Run Python code in the sandbox and see its stdout and stderr (counts as one turn).",
            (ToolParam("code", str, "The Python code to run."),),
            tagged("run"),
        ),
        ActionTool(
            "submit",
            "Submit the full solution; it is final and checked against hidden tests.",
            (ToolParam("code", str, "The complete Python solution."),),
            tagged("submit"),
        ),
    )

    def __init__(
        self,
        *,
        max_runs: int = 3,
        weights: Mapping[str, float] | None = None,
        executor: CodeExecutor | None = None,
        sandbox_backend: str | None = None,
        output_chars: int = 2000,
        max_turns: int | None = None,
        **kwargs: Any,
    ) -> None:
        if max_runs < 0:
            raise ValueError("max_runs must be >= 0")
        super().__init__(max_turns=max_turns or max_runs + 2, **kwargs)
        self.max_runs = max_runs
        self.rubric = verifier.code_rubric(weights)
        self._executor = executor
        self._backend = sandbox_backend
        self.output_chars = output_chars
        self.runs_used = 0

    @property
    def executor(self) -> CodeExecutor:
        if self._executor is None:
            self._executor = CodeExecutor(backend=self._backend) if self._backend else shared_executor()
        return self._executor

    # ---- episode -------------------------------------------------------------------------------------------
    def instructions(self) -> str:
        runs = f"You may run code up to {self.max_runs} time(s). " if self.max_runs else "Running code is disabled. "
        return runs + FORMAT_INSTRUCTIONS

    def start(self, task: Task) -> list[Message]:
        self.runs_used = 0
        return [Message(role="user", content=f"{task.prompt}\n\n{self.instructions()}")]

    def respond(self, action: str) -> StepResult:
        assert self.task is not None
        parsed = parse_action(action)
        if not parsed.has_code:
            why = f" ({parsed.problem})" if parsed.problem else ""
            return StepResult(
                observation=feedback(f"No code found in your reply{why}. {FORMAT_INSTRUCTIONS}"),
                valid_action=False,
                info={"action_kind": parsed.kind},
            )
        if parsed.kind == "run":
            return self._run(parsed)
        return self._submit(parsed)

    def _run(self, parsed: ParsedAction) -> StepResult:
        if self.runs_used >= self.max_runs:
            return StepResult(
                observation=feedback("No runs left: submit your solution with <submit>...</submit>."),
                valid_action=False,
                info={"action_kind": "run", "runs_used": self.runs_used},
            )
        program = assemble(spec_of(self.task).preamble, parsed.code)
        try:
            program.source.encode("utf-8")
        except UnicodeEncodeError as exc:
            return StepResult(
                observation=feedback(f"The code cannot be run: it is not valid Unicode text ({exc.reason})."),
                valid_action=False,
                info={"action_kind": "run", "runs_used": self.runs_used},
            )
        self.runs_used += 1
        result = self.executor.run_snippet(program)
        status = str(getattr(result.status, "value", result.status))
        text = (
            f"[run {self.runs_used}/{self.max_runs}] status: {status}, exit code: {result.exit_code}\n"
            f"--- stdout ---\n{_clip(result.stdout, self.output_chars)}\n"
            f"--- stderr ---\n{_clip(result.stderr, self.output_chars)}"
        )
        return StepResult(
            observation=feedback(text),
            info={"action_kind": "run", "runs_used": self.runs_used, "run_status": status},
        )

    def _submit(self, parsed: ParsedAction) -> StepResult:
        verdict, report = verifier.judge_submission(self.task, parsed.code, rubric=self.rubric, executor=self.executor)
        spans = penalty_map(report, parsed.code, parsed.offset)
        return StepResult(
            reward=verdict.reward,
            terminated=True,
            verdict=verdict,
            info={
                "action_kind": "submit",
                "penalty_spans": [span.as_dict() for span in spans],
                "style_tool": report.style_tool,
            },
        )

    # ---- verifier (the family's `verify`, with this env's rubric, sandbox and turn limit) ------------------------
    def verify(self, task: Task | dict[str, Any], actions: Sequence[str]) -> Verdict:
        return verifier.verify(
            self.coerce_task(task), actions, rubric=self.rubric, executor=self.executor, max_turns=self.max_turns
        )

    def wrong_answers(self, task: Task, rng: random.Random) -> list[list[str]]:
        return verifier.wrong_answers(task, rng)

    def floor_policies(self, task: Task, rng: random.Random) -> dict[str, list[str]]:
        """Constant, None and identity bodies, `pass`, untagged code: check-env's reward floor (floor.py)."""
        return floor.floor_policies(task)


class HumanEvalEnv(CodeEnv):
    """`rlvr/HumanEval-v0`: the 164 HumanEval problems (split `eval`; `train` is empty by design)."""

    check_exceptions = {
        "oracle": "the canonical solutions pass every test (164/164), but 39 carry ruff style findings and one "
        "a security finding (eval in HumanEval/160): their reward is 0.91-0.99, not 1.0"
    }

    task_source = HumanEvalTasks  # split (default `eval`)


class MBPPEnv(CodeEnv):
    """`rlvr/MBPP-v0`: MBPP-style JSONL files (`data_files=`; default: the bundled sample), split by content hash."""

    task_source = MBPPTasks  # data_files, split, show_examples


class CodeGenEnv(CodeEnv):
    """`rlvr/CodeGen-v0`: unbounded procedural tasks; item i depends only on (config, split, i)."""

    task_source = CodeGenTasks  # split, seed and `generator.CodeGenConfig` (difficulty, num_tests, examples, templates)
