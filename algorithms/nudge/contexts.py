"""Where strategy contexts come from: stored with the data, generated once by an agent and cached, or built in.

A context is a short hint naming a technique ("work with a common denominator"), never a solution. Every source
goes through `safe_hints`, which drops any hint that contains the task's ground truth as a token, so a leaky
generator or data file cannot hand the answer to the policy.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Protocol

from rlvr_gym.types import Message, Task, TaskView

from .problem_hints import PROBLEM_HINTS

_TOKEN = re.compile(r"[^\s,;:!?()\[\]\"'`]+")  # linear: one pass, no nested quantifiers


class ContextSource(Protocol):
    """Gives up to `k` strategy hints for a task, deterministically (same task, same hints, any process)."""

    def contexts(self, task: Task, k: int) -> list[str]: ...


def hint_tokens(text: str) -> set[str]:
    """Whitespace/punctuation-separated tokens, with sentence-final dots and `$` stripped."""
    return {t.strip(".$").lower() for t in _TOKEN.findall(text)} - {""}


def leaks_answer(hint: str, ground_truth: Any) -> bool:
    """True when the ground-truth string (or its un-LaTeXed form) is one of the hint's tokens."""
    if ground_truth is None:
        return False
    gold = str(ground_truth).strip().strip("$").lower()
    if not gold:
        return False
    tokens = hint_tokens(hint)
    return gold in tokens or gold.replace("\\", "") in {t.replace("\\", "") for t in tokens}


def safe_hints(task: Task, hints: Sequence[str], k: int) -> list[str]:
    """The first `k` distinct, non-empty hints that do not contain the task's answer."""
    out: list[str] = []
    for hint in hints:
        text = " ".join(str(hint).split())[:300]
        if text and text not in out and not leaks_answer(text, task.ground_truth):
            out.append(text)
        if len(out) == k:
            break
    return out


# ---- (c) built-in technique hints for the math families --------------------------------------------------------
BUILTIN_MATH_HINTS: dict[str, list[str]] = {
    "arithmetic": [
        "Add or multiply column by column, carrying where needed.",
        "Respect the order of operations: brackets, then products, then sums.",
        "Split each number into tens and ones and combine the parts.",
        "Check the result by estimating the size of the answer first.",
    ],
    "fractions": [
        "Rewrite every fraction over a common denominator.",
        "Simplify by dividing numerator and denominator by their greatest common divisor.",
        "Turn division by a fraction into multiplication by its reciprocal.",
        "Handle the signs first, then the magnitudes.",
    ],
    "linear": [
        "Collect the variable terms on one side and the constants on the other.",
        "Undo operations in reverse order to isolate the variable.",
        "Substitute the candidate back into the equation to check it.",
        "Expand brackets before collecting like terms.",
    ],
    "modular": [
        "Reduce each factor modulo the modulus before combining.",
        "Use repeated squaring for large powers.",
        "Look for a cycle in the successive powers.",
        "Write the number as a multiple of the modulus plus a remainder.",
    ],
    "combinatorics": [
        "Count arrangements with factorials, dividing out repeated letters.",
        "Decide whether order matters: permutations or combinations.",
        "Use the multiplication principle over independent choices.",
        "Count the complement and subtract it from the total.",
    ],
    "radicals": [
        "Factor the radicand to pull out perfect squares.",
        "Combine like radicals only when the radicands match.",
        "Rationalise the denominator by multiplying by a conjugate.",
        "Write roots as fractional exponents.",
    ],
    "units": [
        "Multiply by a conversion factor whose units cancel.",
        "Convert to the base unit first, then to the target unit.",
        "Track the units through each step of the calculation.",
        "Check whether the converted value should be larger or smaller.",
    ],
}
GENERIC_MATH_HINTS = [
    "Restate the problem in your own words before computing.",
    "Break the problem into smaller steps and solve each one.",
    "Work backwards from what the question asks for.",
    "Verify the final result with a quick independent check.",
]


class BuiltinMathHints:
    """Deterministic hints (no model needed: tests, CPU runs): the problem's own (`problem_hints`, from the task's
    `question` metadata) first, then technique hints keyed by its `topic`, then generic ones."""

    def contexts(self, task: Task, k: int) -> list[str]:
        topic = str(task.metadata.get("topic", ""))
        own = PROBLEM_HINTS[topic](str(task.metadata.get("question", ""))) if topic in PROBLEM_HINTS else []
        return safe_hints(task, [*own, *BUILTIN_MATH_HINTS.get(topic, []), *GENERIC_MATH_HINTS], k)


# ---- (a) contexts stored with the data ---------------------------------------------------------------------------
class StoredContexts:
    """Hints from the task's metadata (`hints: list[str]`) or from a JSONL file of `{"task_id", "hints"}` lines."""

    def __init__(
        self, path: str | Path | None = None, *, field: str = "hints", fallback: ContextSource | None = None
    ) -> None:
        self.field = field
        self.fallback = fallback
        self.by_task: dict[str, list[str]] = {}
        if path is not None:
            for record in read_jsonl(Path(path)):
                if isinstance(record.get("task_id"), str) and isinstance(record.get(field), list):
                    self.by_task[record["task_id"]] = [str(h) for h in record[field]]

    def contexts(self, task: Task, k: int) -> list[str]:
        stored = task.metadata.get(self.field)
        hints = stored if isinstance(stored, list) else self.by_task.get(task.id, [])
        out = safe_hints(task, hints, k)
        if len(out) < k and self.fallback is not None:
            out = safe_hints(task, [*out, *self.fallback.contexts(task, k)], k)
        return out


# ---- (b) generated by an agent, cached ----------------------------------------------------------------------------
HINT_REQUEST = (
    "List {k} short strategy hints for the problem below, one per line, numbered 1. to {k}. Each hint names a "
    "mathematical concept, theorem or technique in at most ten words. Do not solve the problem and do not state "
    "its answer or any intermediate result.\n\nProblem:\n{question}"
)
_NUMBERED = re.compile(r"^\s*(?:\d{1,2}[.)]|[-*])\s+(.*)$")


def parse_numbered(text: str) -> list[str]:
    """Items of a numbered or bulleted list (one per line); other lines are ignored."""
    items = []
    for line in text.splitlines()[:200]:
        m = _NUMBERED.match(line[:500])
        if m and m.group(1).strip():
            items.append(m.group(1).strip())
    return items


def task_question(task: Task) -> str:
    """The problem text without the env's answer-format instruction (math tasks keep it in `question`)."""
    q = task.metadata.get("question")
    if isinstance(q, str):
        return q
    return "\n".join(m.text() for m in task.prompt_messages() if m.role == "user")


def cache_key(task: Task) -> str:
    """Task id + a content hash: a regenerated task with new text never reuses stale hints."""
    return f"{task.id}#{hashlib.sha256(task_question(task).encode('utf-8', 'replace')).hexdigest()[:16]}"


class GeneratedContexts:
    """Asks any agent (a `make_agent` spec, e.g. `openai:gpt-4o-mini@http://...` or `hf:/models/x`) for k hints
    per problem once, and caches the raw list in JSONL keyed by `cache_key`; later runs read the cache only."""

    def __init__(
        self,
        cache_path: str | Path,
        *,
        agent: Any = None,
        agent_spec: str | None = None,
        agent_options: dict[str, Any] | None = None,
        num_hints: int = 5,
    ) -> None:
        self.cache_path = Path(cache_path)
        self.num_hints = num_hints
        self._agent, self._spec, self._options = agent, agent_spec, dict(agent_options or {})
        self.cache: dict[str, list[str]] = {}
        for record in read_jsonl(self.cache_path):
            if isinstance(record.get("key"), str) and isinstance(record.get("hints"), list):
                self.cache[record["key"]] = [str(h) for h in record["hints"]]

    def agent(self) -> Any:
        if self._agent is None:
            if self._spec is None:
                raise ValueError("GeneratedContexts needs an agent or an agent spec to fill a cache miss")
            from rlvr_gym.agent import make_agent

            self._agent = make_agent(self._spec, **self._options)
        return self._agent

    def contexts(self, task: Task, k: int) -> list[str]:
        key = cache_key(task)
        if key not in self.cache:
            self.generate([task])
        return safe_hints(task, self.cache[key], k)

    def generate(self, tasks: Sequence[Task]) -> int:
        """Fill the cache for `tasks` (skipping cached ones); returns how many were generated."""
        todo = [t for t in tasks if cache_key(t) not in self.cache]
        if not todo:
            return 0
        hints = asyncio.run(self._ask_all(todo))
        self.cache_path.parent.mkdir(parents=True, exist_ok=True)
        with self.cache_path.open("a", encoding="utf-8") as fh:
            for task, items in zip(todo, hints, strict=True):
                self.cache[cache_key(task)] = items
                fh.write(json.dumps({"key": cache_key(task), "task_id": task.id, "hints": items}) + "\n")
        return len(todo)

    async def _ask_all(self, tasks: Sequence[Task]) -> list[list[str]]:
        return list(await asyncio.gather(*(self._ask(t) for t in tasks)))

    async def _ask(self, task: Task) -> list[str]:
        agent = self.agent()
        text = HINT_REQUEST.format(k=self.num_hints, question=task_question(task))
        seed = int(hashlib.sha256(cache_key(task).encode()).hexdigest()[:8], 16)
        ctx = agent.start(TaskView(id=f"hints/{task.id}", prompt=text), seed=seed)
        step = await agent.act(ctx, [Message(role="user", content=text)])
        return parse_numbered(step.text)[: self.num_hints]


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    """Records of a JSONL file; missing file = none, broken lines skipped (a killed writer leaves a partial line)."""
    if not path.exists():
        return []
    out = []
    for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
        try:
            record = json.loads(line)
        except ValueError:
            continue
        if isinstance(record, dict):
            out.append(record)
    return out


def make_context_source(kind: str = "builtin", **options: Any) -> ContextSource:
    """`builtin`, `stored` (path=..., field=...) or `generated` (cache_path=..., agent_spec=...), from config."""
    if kind == "builtin":
        return BuiltinMathHints()
    if kind == "stored":
        return StoredContexts(options.get("path"), field=options.get("field", "hints"), fallback=BuiltinMathHints())
    if kind == "generated":
        return GeneratedContexts(
            options["cache_path"],
            agent_spec=options.get("agent_spec"),
            agent_options=options.get("agent_options"),
            num_hints=options.get("num_hints", 5),
        )
    raise ValueError(f"unknown context source {kind!r}: builtin, stored or generated")
