"""The reward floor: what policies that never solve anything earn, next to what the oracle earns.

A dense reward is only safe to optimise when doing nothing useful pays (almost) nothing: otherwise a policy learns
to farm the floor (reply `restart` forever, submit `return True`, propose one fixed program) instead of the task.
`rlvr-gym check-env`'s `reward_floor` check plays a battery of such policies and fails an env whose best one earns
more than `FLOOR_SHARE` (5%) of the oracle's mean reward on the same tasks (docs/reward-contract.md).

The generic battery needs no knowledge of the env, only the text the agent is shown:

- **template echo**: the prompt's own answer slots (`\\boxed{...}`, `<answer>...</answer>`, `Answer: <value>`,
  fenced blocks such as ```` ```output ````, `search[keywords]`, quoted examples after "e.g.") sent back as the
  answer: as they stand, with the slot's body replaced by a placeholder token, and with each placeholder inside it
  (`<value>`, `...`) replaced by that token; and all the prompt's slot kinds at once, one per line (a
  multi-part reply format echoed whole);
- **constants** (`0`, `1`, `yes`, ...) and the **prompt echo**.

Families add policies in their own action syntax (restart loops, constant programs, fixed scripts) through the
env hook `floor_policies(task, rng) -> {name: trajectory}`; the core never names a family. Every policy is played
as one fixed action repeated for up to `FLOOR_TURNS` turns (a family trajectory is played as given).
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

FLOOR_SHARE = 0.05  # the most a non-solving policy may earn, as a share of the oracle's mean reward
FLOOR_TURNS = 3  # turns a repeated generic action is played for (fewer when the env allows fewer)
FILL_TOKENS = ("N", "x", "answer", "<value>", "0", "...")
CONSTANTS = ("0", "1", "yes", "A", "N", "True")

Trajectory = list[str]


@dataclass(frozen=True)
class Slot:
    """One answer slot of a prompt: `text` as it appears, `body` the span inside it a policy fills."""

    kind: str  # stable across tasks of one env: "fence:output", "tag:answer", "boxed", "label:Answer", ...
    text: str
    body: tuple[int, int]


_FENCE = re.compile(r"```([A-Za-z0-9_+-]{0,20})[ \t]*\n(.{0,2000}?)\n?```", re.DOTALL)
_TAG = re.compile(r"<([A-Za-z_][\w-]{0,30})((?:\s[^<>\n]{0,100})?)>(.{0,600}?)</\1>", re.DOTALL)
_BOXED = re.compile(r"\\boxed\{([^{}\n]{0,100})\}")
_CALL = re.compile(r"\b([a-z_]{2,20})\[([^\[\]\n]{0,100})\]")
_LABEL = re.compile(r"\b([A-Za-z][A-Za-z]{1,20}):[ \t]*(<[^<>\n]{1,60}>)")
_CODE_LABEL = re.compile(r"(?<=`)([A-Za-z][A-Za-z]{1,20}):[ \t]*([^`<>\n]{1,60})(?=`)")  # `Answer: n` in backticks
_EXAMPLE = re.compile(r"(?:e\.g\.|for example)[,:]?\s*(?:'([^'\n]{1,120})'|([A-Za-z_]\w{0,30}\([^()\n]{0,120}\)))")
_PLACEHOLDER = re.compile(r"<[^<>\n]{1,40}>|\.\.\.|…")


def _slots_of(pattern: re.Pattern[str], prompt: str, kind: Callable[[re.Match[str]], str], group: int) -> list[Slot]:
    slots = []
    for match in pattern.finditer(prompt):
        start, end = match.span(group)
        base = match.start()
        slots.append(Slot(kind(match), match.group(0), (start - base, end - base)))
    return slots


def answer_slots(prompt: str) -> list[Slot]:
    """Every answer slot the prompt shows, in a fixed order (fences, tags, boxed, calls, labels, examples)."""
    slots = [
        *_slots_of(_FENCE, prompt, lambda m: f"fence:{m.group(1).lower() or 'plain'}", 2),
        *_slots_of(_TAG, prompt, lambda m: f"tag:{m.group(1).lower()}", 3),
        *_slots_of(_BOXED, prompt, lambda m: "boxed", 1),
        *_slots_of(_CALL, prompt, lambda m: f"call:{m.group(1)}", 2),
        *_slots_of(_LABEL, prompt, lambda m: f"label:{m.group(1).lower()}", 2),
        *_slots_of(_CODE_LABEL, prompt, lambda m: f"label:{m.group(1).lower()}", 2),
    ]
    for match in _EXAMPLE.finditer(prompt):
        group = 1 if match.group(1) is not None else 2
        text = match.group(group)
        slots.append(Slot("example", text, (0, len(text))))
    return slots


def fills(slot: Slot) -> Iterator[tuple[str, str]]:
    """(name, action) for one slot: as it stands, body replaced by each token, placeholders replaced by each."""
    start, end = slot.body
    head, body, tail = slot.text[:start], slot.text[start:end], slot.text[end:]
    yield f"template_echo:{slot.kind}:as_is", slot.text
    for token in FILL_TOKENS:
        yield f"template_echo:{slot.kind}:body={token}", head + token + tail
        if _PLACEHOLDER.search(body):
            yield f"template_echo:{slot.kind}:inner={token}", head + _PLACEHOLDER.sub(token, body) + tail


def whole_template(slots: list[Slot], token: str) -> str:
    """Every slot kind's first slot, each with its body replaced by `token`, one per line in prompt order: the
    echo of a multi-part reply format (`<belief>..</belief> <think>..</think> <action>..</action>`)."""
    first: dict[str, Slot] = {}
    for slot in slots:
        first.setdefault(slot.kind, slot)
    return "\n".join(s.text[: s.body[0]] + token + s.text[s.body[1] :] for s in first.values())


def generic_actions(prompt: str) -> dict[str, str]:
    """The generic battery for one prompt: template echoes, constants and the prompt echo (name -> action)."""
    actions: dict[str, str] = {}
    slots = answer_slots(prompt)
    for slot in slots:
        for name, action in fills(slot):
            actions.setdefault(name, action)
    if len({slot.kind for slot in slots}) > 1:
        for token in FILL_TOKENS:
            actions[f"template_echo:all_slots:body={token}"] = whole_template(slots, token)
    for constant in CONSTANTS:
        actions[f"constant:{constant}"] = constant
    actions["prompt_echo"] = prompt
    return actions


def family_policies(env: Any, task: Any, rng: random.Random) -> dict[str, Trajectory]:
    """The env's own non-solving policies (the `floor_policies` hook), or none."""
    hook = getattr(env, "floor_policies", None)
    if hook is None:
        return {}
    return {f"family:{name}": list(trajectory) for name, trajectory in hook(task, rng).items()}


def battery(env: Any, task: Any, prompt: str, rng: random.Random) -> dict[str, Trajectory]:
    """Every non-solving trajectory to play on `task`; identical trajectories are played once (first name kept)."""
    turns = max(1, min(int(getattr(env, "max_turns", 1)), FLOOR_TURNS))
    policies = {name: [action] * turns for name, action in generic_actions(prompt).items()}
    policies.update(family_policies(env, task, rng))
    unique: dict[tuple[str, ...], str] = {}
    for name, trajectory in policies.items():
        unique.setdefault(tuple(trajectory), name)
    return {name: list(trajectory) for trajectory, name in unique.items()}


@dataclass
class FloorResult:
    """Mean reward per policy over the tasks, the oracle's mean, and the verdict of the comparison."""

    means: dict[str, float]
    oracle_mean: float
    tasks: int

    @property
    def best(self) -> tuple[str, float]:
        if not self.means:
            return "none", 0.0
        name = max(self.means, key=lambda k: (self.means[k], k))
        return name, self.means[name]

    @property
    def limit(self) -> float:
        return FLOOR_SHARE * self.oracle_mean

    @property
    def ok(self) -> bool:
        return self.oracle_mean > 0.0 and self.best[1] <= self.limit + 1e-9

    def detail(self) -> str:
        name, value = self.best
        if self.oracle_mean <= 0.0:
            return f"the oracle's mean reward is {self.oracle_mean:.3g}: no floor can be measured"
        played = f"{len(self.means)} policies, {self.tasks} tasks"
        if value <= 0.0:
            return f"no non-solving policy earns anything (oracle's mean {self.oracle_mean:.3f}; {played})"
        share = value / self.oracle_mean
        return (
            f"best non-solving policy {name} earns {value:.3f} = {share:.1%} of the oracle's mean "
            f"{self.oracle_mean:.3f} (limit {FLOOR_SHARE:.0%}; {played})"
        )


def measure_floor(
    score: Callable[[Any, Trajectory], float],
    tasks: list[tuple[Any, str]],
    policies_of: Callable[[Any, str], dict[str, Trajectory]],
) -> FloorResult:
    """Play every policy on every (task, prompt); a policy missing on a task counts 0 there."""
    totals: dict[str, float] = {}
    oracle = 0.0
    for task, prompt in tasks:
        oracle += score(task, list(task.reference_actions or []))
        for name, trajectory in policies_of(task, prompt).items():
            totals[name] = totals.get(name, 0.0) + score(task, trajectory)
    n = max(len(tasks), 1)
    return FloorResult({k: v / n for k, v in totals.items()}, oracle / n, len(tasks))
