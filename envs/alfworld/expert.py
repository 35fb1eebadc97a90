"""Expert replies in the ReBel format for ALFWorld's reference plans (SFT cold-start data, docs/alfworld.md).

The paper tags expert trajectories with a teacher LLM that writes belief and think text under explicit phase rules.
Here no teacher is needed: every turn's belief is what the env's own `GroundTruthTracker` has observed before the
action (objects, states, visited and still-unvisited receptacles), the phase is the env's phase rule applied to the
state the action leads to (`belief.gt_phase`: the same rule the belief-consistency reward scores, so a tagged reply earns
r_task), the prediction is the engine's own wording for the action's outcome, and the think text is a template.

Where this differs from the paper's tagging: the phase is never "navigate" (the env-derived phase has no such state,
so a reply claiming it would earn no r_task); the think text is a fixed template, not 2-3 free sentences.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from .belief import Belief, format_output, gt_phase

_PREDICTIONS = (  # command pattern -> the engine's wording of the outcome (what r_pred compares with)
    (re.compile(r"go to (.+)"), "you arrive at {0}"),
    (re.compile(r"(?:take|pick up) (.+?) from (.+)"), "you pick up the {0} from the {1}"),
    (re.compile(r"(?:move|put) (.+?) (?:to|in|on|in/on) (.+)"), "you move the {0} to the {1}"),
    (re.compile(r"open (.+)"), "you open the {0}"),
    (re.compile(r"close (.+)"), "you close the {0}"),
    (re.compile(r"(heat|cool|clean|slice) (.+?) with (.+)"), "you {0} the {1} using the {2}"),
    (re.compile(r"examine (.+)"), "this is a {0}"),
)
MINIMAL_REPLY = format_output(Belief(phase="find"), "I look.", "look")
"""The shortest reply that follows the schema: every key present, empty values, a 2-word think, a 1-word action.
No well-formed belief reply is shorter (the config check refuses token budgets below its length)."""


def predict(action: str) -> str:
    """ "If I execute [action], I expect [outcome]." with the outcome in the engine's words."""
    for pattern, template in _PREDICTIONS:
        match = pattern.fullmatch(action)
        if match:
            return f"If I execute {action}, I expect {template.format(*match.groups())}."
    return f"If I execute {action}, I expect to see the result."


def plan_target(actions: Sequence[str], task_desc: str) -> str:
    """The object the plan carries (first take/pick up), else the task's object word."""
    for action in actions:
        match = re.match(r"(?:take|pick up) (.+?) from ", action)
        if match:
            return match.group(1)
    words = task_desc.split()
    return words[2] if len(words) > 2 else ""


_SUBGOALS = {
    "find": "find the {t}",
    "pickup": "pick up the {t}",
    "transform": "process the {t} as the task asks",
    "place": "put the {t} where the task asks",
    "done": "the task is complete",
}


def tag_step(gt_before: dict[str, Any], action: str, target: str, phase: str, task_desc: str) -> tuple[Belief, str]:
    """Belief and think text for one expert step: observed facts before the action, the phase it leads to."""
    visited = list(gt_before.get("visited", []))
    belief = Belief(
        objects=dict(gt_before.get("objects", {})),
        states=dict(gt_before.get("states", {})),
        visited=visited,
        unvisited=[r for r in gt_before.get("receptacles", []) if r not in visited],
        phase=phase,
        target=target,
        subgoal=_SUBGOALS[phase].format(t=target),
        prediction=predict(action),
    )
    where = belief.objects.get(target)
    known = (
        f"The {target} is {'in my hand' if where == 'in_hand' else f'at {where}'}."
        if where
        else (f"I have not seen the {target} yet.")
    )
    think = f"{known} Next I will {action}."
    return belief, think


def expert_replies(game: Any, actions: Sequence[str], task_desc: str) -> list[str]:
    """Play `actions` on a freshly started `play.Game` and return one tagged ReBel reply per action."""
    target = plan_target(actions, task_desc)
    replies = []
    for action in actions:
        before = game.tracker.snapshot()
        move = game.play(action)
        after = game.tracker.snapshot()
        phase = gt_phase(game.admissible(), bool(after.get("inventory")), move.won)
        belief, think = tag_step(before, action, target, phase, task_desc)
        replies.append(format_output(belief, think, action))
    return replies
