"""`rlvr-gym new-env NAME`: scaffold a working env family that passes `rlvr-gym check-env` out of the box.

The scaffold is a small installable package in the family shape (tasks, verifier, env) with its entry point and a
test. Its example task (add a few integers, answer on an `Answer:` line) is deliberately tiny but complete: a
seeded per-index generator with disjoint splits, a verifier that refuses ambiguous answers, and a wrong-answer
generator, so the author replaces the task and keeps the structure.
"""

from __future__ import annotations

import argparse
import keyword
import re
import sys
from collections.abc import Sequence
from pathlib import Path

PYPROJECT = '''[build-system]
requires = ["setuptools>=77"]
build-backend = "setuptools.build_meta"

[project]
name = "rlvr-{name}"
version = "0.1.0"
dependencies = ["rlvr-gym"]

[project.entry-points."rlvr_gym.envs"]
{name} = "{pkg}:register_envs"

# gymnasium.make("{env_id}") right after `import rlvr_gym` (README, "Register your own env")
[project.entry-points."rlvr_gym.env_ids"]
"{env_id}" = "{pkg}:register_envs"
'''

INIT = '''"""{title}: an rlvr-gym env family (tasks, verifier, env)."""


def register_envs() -> None:
    from rlvr_gym import register

    register("{env_id}", "{pkg}.env:{camel}Env", family="{name}", description="Add a few integers.")
'''

TASKS = '''"""Tasks: per-index seeded, splits disjoint by content hash (TaskSource.draw)."""

from rlvr_gym import Task, TaskSource


class {camel}Tasks(TaskSource):
    family = "{name}"

    def __init__(self, *, split: str = "train", seed: int = 0, difficulty: int = 1) -> None:
        super().__init__(split=split, seed=seed)
        self.difficulty = difficulty

    def task(self, index: int) -> Task:
        count = 1 + self.difficulty
        numbers = self.draw(index, lambda rng: [rng.randint(-99, 999) for _ in range(count)], str)
        answer = sum(numbers)
        prompt = f"Add these numbers: {{', '.join(map(str, numbers))}}. Reply with a final line `Answer: <number>`."
        return self.make_task(index, prompt=prompt, ground_truth=answer, reference_actions=[f"Answer: {{answer}}"],
                              difficulty=self.difficulty)
'''

VERIFIER = '''"""Verifier: the committed answer is the value on the `Answer:` lines; disagreeing lines make it invalid."""

import random
import re

from rlvr_gym import Task, Trajectory, Verdict

INTEGER = re.compile(r"[+-]?[0-9]{{1,30}}")


def extract(text: str) -> int | None | str:
    """The answer (None if absent, an error string if ambiguous or malformed); linear in the text."""
    values, at = set(), text.find("Answer:")
    while at != -1:
        start = at
        while start > 0 and text[start - 1] in " \\t":
            start -= 1
        if start == 0 or text[start - 1] == "\\n":  # only `Answer:` at the start of a line counts
            end = text.find("\\n", at, at + 80)
            values.add(text[at + 7 : end if end != -1 else at + 80].strip())
        at = text.find("Answer:", at + 7)
    if not values:
        return None
    if len(values) > 1:
        return "two different answers"
    value = values.pop()
    return int(value) if INTEGER.fullmatch(value) else f"not an integer: {{value[:40]!r}}"


def verify(task: Task, trajectory: Trajectory) -> Verdict:
    answer = extract(trajectory[-1] if trajectory else "")
    if not isinstance(answer, int):
        return Verdict.invalid(answer or "no `Answer:` line")
    correct = float(answer == task.ground_truth)
    return Verdict(reward=correct, passed=bool(correct), components={{"correct": correct}})


def wrong_answers(task: Task, rng: random.Random) -> list[list[str]]:
    gold = int(task.ground_truth)
    near = [gold + 1, gold - 1, gold * 10, -gold or 1, gold + rng.randint(2, 50)]
    return [[f"Answer: {{value}}"] for value in near] + [[f"Answer: {{gold}}\\nAnswer: {{gold + 1}}"]]
'''

ENV = '''"""Env: one attempt per task; scoring is the family verifier."""

import random
from typing import Any

from rlvr_gym import AnswerEnv, Task, Verdict

from .tasks import {camel}Tasks
from .verifier import verify, wrong_answers


class {camel}Env(AnswerEnv):
    family = "{name}"

    def __init__(self, *, split: str = "train", seed: int = 0, difficulty: int = 1, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.source = {camel}Tasks(split=split, seed=seed, difficulty=difficulty)

    def score_answer(self, task: Task, text: str) -> Verdict:
        return verify(task, [text])

    def wrong_answers(self, task: Task, rng: random.Random) -> list[list[str]]:
        return wrong_answers(task, rng)
'''

TEST = '''import rlvr_gym
from rlvr_gym.checks import run_checks
from {pkg} import register_envs


def test_reference_passes_and_check_env_holds():
    register_envs()
    env = rlvr_gym.make("{env_id}")
    env.reset(options={{"task_index": 3}})
    *_, info = env.step(env.task.reference_actions[0])
    assert info["verdict"].passed
    report = run_checks("{env_id}", tasks=10)
    assert report.ok, [(r.check, r.detail) for r in report.results if r.status == "fail"]
'''


def camel_case(name: str) -> str:
    return "".join(part.capitalize() for part in re.split(r"[_\W]+", name) if part)


def scaffold(name: str, directory: Path) -> list[Path]:
    """Write the family package for `name` under `directory/rlvr-<name>/`; returns the files written."""
    if not re.fullmatch(r"[a-z][a-z0-9_]{0,40}", name) or keyword.iskeyword(name):
        raise ValueError(f"family name must be lower-case letters, digits and _, starting with a letter: {name!r}")
    fields = {"name": name, "pkg": f"rlvr_{name}", "camel": camel_case(name), "title": name.replace("_", " ")}
    fields["env_id"] = f"rlvr/{fields['camel']}-v0"
    root = directory / f"rlvr-{name.replace('_', '-')}"
    if root.exists():
        raise FileExistsError(f"{root} already exists")
    files = {
        root / "pyproject.toml": PYPROJECT,
        root / fields["pkg"] / "__init__.py": INIT,
        root / fields["pkg"] / "tasks.py": TASKS,
        root / fields["pkg"] / "verifier.py": VERIFIER,
        root / fields["pkg"] / "env.py": ENV,
        root / "tests" / f"test_{name}.py": TEST,
    }
    for path, template in files.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(template.format(**fields), encoding="utf-8")
    return list(files)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="rlvr-gym new-env", description=__doc__.splitlines()[0])
    parser.add_argument("name", help="family name, e.g. word_sort (lower case)")
    parser.add_argument("--dir", default=".", help="where to create rlvr-<name>/ (default: here)")
    args = parser.parse_args(list(sys.argv[1:] if argv is None else argv))
    try:
        files = scaffold(args.name, Path(args.dir))
    except (ValueError, FileExistsError) as exc:
        print(f"new-env: {exc}", file=sys.stderr)
        return 2
    root = files[0].parent
    print(f"created {root}:")
    for path in files:
        print(f"  {path.relative_to(root)}")
    print(f"next: pip install -e {root} && rlvr-gym check-env rlvr/{camel_case(args.name)}-v0 && pytest {root}/tests")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
