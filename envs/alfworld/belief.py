"""The belief protocol the ALFWorld env speaks: `<belief>{json}</belief><think>...</think><action>...</action>`.

The env defines this format (its `rebel` prompt style asks for it and shows the cumulative belief back inside
`<belief_prev>`); algorithms such as ReBel read it from here, the env never imports an algorithm. The belief JSON is
normalised into a `Belief` (lower-cased, stripped, missing keys empty) and merged into a *cumulative* belief.
Parsing is linear-time (`tags`) and bounded: a belief block over `MAX_BELIEF_CHARS` or nested too deeply for the
JSON decoder is simply no belief. See docs/alfworld.md.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from .tags import tag_blocks

MAX_BELIEF_CHARS = 32_768  # a real belief is a few hundred characters; bigger blocks are not parsed
_CJK_RE = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff]")

PHASES = ("find", "navigate", "pickup", "transform", "place", "done")


@dataclass
class Belief:
    """ALFWorld belief: object locations/states, visited and candidate receptacles, task phase, one prediction."""

    objects: dict[str, str] = field(default_factory=dict)
    states: dict[str, str] = field(default_factory=dict)
    visited: list[str] = field(default_factory=list)
    unvisited: list[str] = field(default_factory=list)
    phase: str = ""
    target: str = ""
    subgoal: str = ""
    prediction: str = ""

    def holding(self) -> bool:
        """Whether the belief claims something is in hand (the `has_inventory` grouping bit)."""
        return any("in_hand" in value for value in self.objects.values())

    def to_json(self) -> dict[str, Any]:
        """The belief in the prompt schema (what `<belief_prev>` shows the model)."""
        return {
            "state": {
                "objects": dict(self.objects),
                "states": dict(self.states),
                "visited": list(self.visited),
                "unvisited_candidates": list(self.unvisited),
            },
            "task": {"phase": self.phase, "target": self.target, "subgoal": self.subgoal},
            "prediction": self.prediction,
        }


@dataclass
class ParsedOutput:
    """One policy output split into its parts; `format_ok` is the projection's acceptance test."""

    belief: Belief | None
    think: str | None
    action: str | None
    format_ok: bool


def _clean(value: Any) -> str:
    return str(value).strip().lower() if value is not None else ""


def _str_dict(value: Any) -> dict[str, str]:
    if not isinstance(value, dict):
        return {}
    return {_clean(k): _clean(v) for k, v in value.items() if _clean(k)}


def _str_list(value: Any) -> list[str]:
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, (list, tuple)):
        return []
    return _dedup(_clean(v) for v in value if _clean(v))


def _dedup(items: Any) -> list[str]:
    out: list[str] = []
    for item in items:
        if item not in out:
            out.append(item)
    return out


def belief_from_json(data: Any) -> Belief | None:
    """Normalise a decoded belief object; None when it is not a JSON object."""
    if not isinstance(data, dict):
        return None
    state = data.get("state") if isinstance(data.get("state"), dict) else {}
    task = data.get("task") if isinstance(data.get("task"), dict) else {}
    return Belief(
        objects=_str_dict(state.get("objects")),
        states=_str_dict(state.get("states")),
        visited=_str_list(state.get("visited")),
        unvisited=_str_list(state.get("unvisited_candidates")),
        phase=_clean(task.get("phase")),
        target=_clean(task.get("target")),
        subgoal=_clean(task.get("subgoal")),
        prediction=_clean(data.get("prediction")),
    )


def parse_belief(text: str) -> Belief | None:
    """The first `<belief>` JSON of an output; retries with single quotes swapped for double quotes."""
    raw = _tag(text or "", "belief")
    if raw is None or len(raw) > MAX_BELIEF_CHARS:
        return None
    for candidate in (raw, raw.replace("'", '"')):
        try:
            return belief_from_json(json.loads(candidate))
        except (ValueError, RecursionError):  # JSONDecodeError is a ValueError; deep nesting is a RecursionError
            continue
    return None


def _tag(text: str, name: str) -> str | None:
    blocks = tag_blocks(text, name, limit=1)
    return blocks[0].strip() if blocks else None


def parse_output(text: str) -> ParsedOutput:
    """Split an output into belief/think/action; format is valid iff all tags exist, no CJK, belief JSON parses."""
    text = text or ""
    belief = parse_belief(text)
    think = _tag(text, "think")
    action = _tag(text, "action")
    ok = belief is not None and think is not None and action is not None and not _CJK_RE.search(text)
    return ParsedOutput(belief=belief, think=think, action=action, format_ok=ok)


def initial_belief(objects: dict[str, str] | None = None, receptacles: list[str] | None = None) -> Belief:
    """Cumulative belief at reset: objects seen in the first observation, visible receptacles unvisited, phase find."""
    return Belief(objects=dict(objects or {}), unvisited=_dedup(receptacles or []), phase="find")


def merge_belief(cumulative: Belief, new: Belief | None) -> Belief:
    """Cumulative merge: dicts last-write-wins, visited dedup-append, unvisited = union − visited, latest task fields."""
    if new is None:
        return Belief(**{k: (v.copy() if hasattr(v, "copy") else v) for k, v in cumulative.__dict__.items()})
    visited = _dedup([*cumulative.visited, *new.visited])
    unvisited = [r for r in _dedup([*cumulative.unvisited, *new.unvisited]) if r not in visited]
    return Belief(
        objects={**cumulative.objects, **new.objects},
        states={**cumulative.states, **new.states},
        visited=visited,
        unvisited=unvisited,
        phase=new.phase or cumulative.phase,
        target=new.target or cumulative.target,
        subgoal=new.subgoal or cumulative.subgoal,
        prediction=new.prediction,
    )


def gt_phase(admissible_commands: Sequence[str], holding: bool, won: bool = False) -> str:
    """Env-derived task phase from the admissible commands (priority order of the reference; never "navigate").

    ALFWorld 0.4.2 spells placing as `move X to Y` and picking as `take X from Y`; older releases used `put` and
    `pick up`, so both spellings count. `holding` is the belief's in-hand claim, as in the reference code.
    """
    if won:
        return "done"
    cmds = [c.lower() for c in admissible_commands]
    if any(c.startswith(("heat ", "cool ", "clean ")) for c in cmds):
        return "transform"
    if holding and any(c.startswith(("put ", "move ")) for c in cmds):
        return "place"
    if any(c.startswith(("pick up", "take ")) for c in cmds):
        return "pickup"
    return "find"


def format_output(belief: Belief, think: str, action: str) -> str:
    """Render an output in the ReBel format (expert demonstrations, tests)."""
    return f"<belief>{json.dumps(belief.to_json())}</belief><think>{think}</think><action>{action}</action>"
