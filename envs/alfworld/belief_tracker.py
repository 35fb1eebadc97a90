"""Ground-truth belief tracker for ALFWorld, built from observation text only (ReBel §1.2, env side).

It reads what the agent has actually been shown (the intro, "On the X, you see ...", "You pick up the Y from the
X", "You heat the Y using the X", inventory, ...) and keeps what an ideal observer would know. Its snapshot is
the ground truth that ReBel's belief-consistency reward compares the policy's belief against; facts never shown
are not in it, so beliefs about them cannot be penalised (observability masking).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

_NAME = r"[a-z]+(?: [a-z]+)*? \d+"
_LIST_RE = re.compile(rf"\b(?:a|an) ({_NAME})")
_ROOM_RE = re.compile(r"looking quickly around you, you see (.*?)\.(?:\n|$)", re.S)
_ON_RE = re.compile(rf"on the ({_NAME}), you see (.*?)\.(?:\s|$)", re.S)
_IN_RE = re.compile(rf"the ({_NAME}) is open\. in it, you see (.*?)\.(?:\s|$)", re.S)
_CLOSED_RE = re.compile(rf"the ({_NAME}) is closed")
_ARRIVE_RE = re.compile(rf"you arrive at ({_NAME})")
_PICK_RE = re.compile(rf"you pick up the ({_NAME}) from the ({_NAME})")
_MOVE_RE = re.compile(rf"you (?:move|put) the ({_NAME}) (?:to|in|on|into) the ({_NAME})")
_CHANGE_RE = re.compile(rf"you (heat|cool|clean|slice)d? the ({_NAME})")
_EXAMINE_RE = re.compile(rf"this is a (hot|cold|cool|clean|sliced)(?: and clean)? (?:sliced )?({_NAME})")
_CARRY_RE = re.compile(r"you are carrying: (.*?)\.(?:\s|$)", re.S)
_STATE_WORDS = {
    "heat": "heated",
    "cool": "cooled",
    "clean": "cleaned",
    "slice": "sliced",
    "hot": "heated",
    "cold": "cooled",
    "clean_": "cleaned",
    "sliced": "sliced",
}


def _names(listing: str) -> list[str]:
    return [] if listing.strip() == "nothing" else _LIST_RE.findall(listing)


@dataclass
class GroundTruthTracker:
    """Observed facts: receptacles seen, receptacles visited, object locations, inventory, object states."""

    receptacles: list[str] = field(default_factory=list)
    visited: list[str] = field(default_factory=list)
    objects: dict[str, str] = field(default_factory=dict)
    inventory: list[str] = field(default_factory=list)
    states: dict[str, str] = field(default_factory=dict)
    cleared: list[str] = field(default_factory=list)

    def _visit(self, rec: str) -> None:
        if rec not in self.visited:
            self.visited.append(rec)
        if rec not in self.receptacles:
            self.receptacles.append(rec)

    def _contents(self, rec: str, listing: str) -> None:
        seen = _names(listing)
        for obj, loc in list(self.objects.items()):
            if loc == rec and obj not in seen:
                del self.objects[obj]
        for obj in seen:
            self.objects[obj] = rec
            if obj in self.inventory:
                self.inventory.remove(obj)
        if not seen and rec not in self.cleared:
            self.cleared.append(rec)

    def observe(self, text: str) -> None:
        """Update from one observation (the intro or a step's feedback)."""
        text = (text or "").lower()
        room = _ROOM_RE.search(text)
        if room:
            for rec in _names(room.group(1)):
                if rec not in self.receptacles:
                    self.receptacles.append(rec)
        for rec in _ARRIVE_RE.findall(text):
            self._visit(rec)
        for rec, listing in _ON_RE.findall(text):
            self._visit(rec)
            self._contents(rec, listing)
        for rec, listing in _IN_RE.findall(text):
            self._visit(rec)
            self._contents(rec, listing)
        for rec in _CLOSED_RE.findall(text):
            self._visit(rec)
        for obj, _rec in _PICK_RE.findall(text):
            self.objects[obj] = "in_hand"
            if obj not in self.inventory:
                self.inventory.append(obj)
        for obj, rec in _MOVE_RE.findall(text):
            self.objects[obj] = rec
            if obj in self.inventory:
                self.inventory.remove(obj)
        for verb, obj in _CHANGE_RE.findall(text):
            self.states[obj] = _STATE_WORDS[verb]
        for word, obj in _EXAMINE_RE.findall(text):
            self.states[obj] = _STATE_WORDS[word]
        carry = _CARRY_RE.search(text)
        if carry:
            self.inventory = _names(carry.group(1))
            for obj in self.inventory:
                self.objects[obj] = "in_hand"
        elif "you are not carrying anything" in text:
            self.inventory = []

    def snapshot(self) -> dict[str, Any]:
        """Plain-JSON ground truth (the shape `rlvr_gym.algorithms.rebel.rewards` scores against)."""
        return {
            "objects": dict(self.objects),
            "inventory": list(self.inventory),
            "states": dict(self.states),
            "visited": list(self.visited),
            "receptacles": list(self.receptacles),
            "cleared": list(self.cleared),
        }
