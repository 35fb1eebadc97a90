"""Action parsing and the ground-truth belief tracker (pure text; no engine needed)."""

from __future__ import annotations

import subprocess
import sys
import time

import pytest
from alfworld_cases import ADVERSARIAL

from rlvr_gym.envs.alfworld.actions import (
    ParsedAction,
    canonical_command,
    extract_command,
    invalid_feedback,
    parse_action,
    suggestions,
)
from rlvr_gym.envs.alfworld.belief import parse_output
from rlvr_gym.envs.alfworld.belief_tracker import GroundTruthTracker
from rlvr_gym.envs.alfworld.tags import action_lines, ascii_view, tag_blocks

ADMISSIBLE = ["go to fridge 1", "move apple 1 to fridge 1", "take mug 1 from shelf 1", "look", "inventory"]


@pytest.mark.parametrize(
    ("text", "command"),
    [
        ("go to fridge 1", "go to fridge 1"),
        ("  Go To   Fridge 1. ", "go to fridge 1"),
        ("<think>cold</think><action>go to fridge 1</action>", "go to fridge 1"),
        ("<action>go to fridge 1</action> so <ACTION> Go to fridge 1 </ACTION>", "go to fridge 1"),
        ("I will go.\nAction: go to fridge 1", "go to fridge 1"),
        ("  action :  look  \nthen nothing", "look"),
    ],
)
def test_extract_command(text, command):
    assert extract_command(text) == command


@pytest.mark.parametrize(
    "text",
    [
        "<action>look</action> then <action>go to fridge 1</action>",  # two different committed commands
        "Action: look\nAction: go to fridge 1",
        "<action>look</action>" * 9,  # more tags than any honest reply has
        "go to fridge 1" + " " * 5000 + "x",  # longer than any command
    ],
)
def test_ambiguous_or_oversized_replies_are_refused(text):
    parsed = parse_action(text)
    assert parsed.command == "" and parsed.error
    assert "ambiguous or malformed" in invalid_feedback(parsed, ADMISSIBLE)


def test_tag_pairing_matches_the_lazy_regex():
    import re

    texts = ["<a>1</a><a>2</a>", "<a><a>x</a>y</a>", "</a><a>z</a>", "<A>up</a>", "<a>open", "<a></a>", "a</a><a>"]
    for text in texts:
        assert tag_blocks(text, "a") == re.findall(r"<a>(.*?)</a>", text, re.S | re.I), text
    assert action_lines("x\n Action: a\naction:b\nno action: c") == [" a", "b"]


@pytest.mark.parametrize(
    ("command", "canon"),
    [
        ("go to fridge 1", "go to fridge 1"),
        ("put apple 1 in fridge 1", "move apple 1 to fridge 1"),
        ("put apple 1 on fridge 1", "move apple 1 to fridge 1"),
        ("put apple 1 in/on fridge 1", "move apple 1 to fridge 1"),
        ("put the apple 1 in the fridge 1", "move apple 1 to fridge 1"),
        ("pick up mug 1 from shelf 1", "take mug 1 from shelf 1"),
        ("go to fridge 2", None),
        ("", None),
    ],
)
def test_canonical_command(command, canon):
    assert canonical_command(command, ADMISSIBLE) == canon


def test_invalid_feedback_suggests_close_commands():
    assert suggestions("go to fridge 2", ADMISSIBLE)[0] == "go to fridge 1"
    assert "Did you mean: 'go to fridge 1'" in invalid_feedback(ParsedAction("go to fridge 2"), ADMISSIBLE)
    assert "No action" in invalid_feedback(ParsedAction(""), ADMISSIBLE)
    assert len(invalid_feedback(ParsedAction("x" * 190), ADMISSIBLE)) < 250  # never echoes a long reply back


def _best_of(fn, text: str, runs: int = 3) -> float:
    best = float("inf")
    for _ in range(runs):  # the best of a few runs: a busy machine must not fail a linear parser
        t0 = time.perf_counter()
        fn(text)
        best = min(best, time.perf_counter() - t0)
    return best


@pytest.mark.parametrize("name", sorted(ADVERSARIAL))
def test_parsers_handle_1mb_adversarial_replies_fast(name):
    """Every ALFWorld reply parser on 1 MB of hostile text: < 100 ms and no exception (issue #14 item 2)."""
    text = ADVERSARIAL[name]

    def parse_everything(reply: str) -> None:
        ascii_view.cache_clear()  # measure the cold path: a new reply pays its conversion too
        parsed = parse_action(reply)
        canonical_command(parsed.command, ADMISSIBLE)
        invalid_feedback(parsed, ADMISSIBLE)
        parse_output(reply)

    assert _best_of(parse_everything, text) < 0.1
    if text.endswith(("go to the moon", "go to the moon</action>")):  # the command after the junk is still found
        assert parse_action(text).command == "go to the moon"


INTRO = (
    "-= Welcome to TextWorld, ALFRED! =-\n\nYou are in the middle of a room. Looking quickly around you, you see "
    "a cabinet 1, a countertop 1, a fridge 1, and a microwave 1.\n\nYour task is to: put a hot apple in fridge."
)


def test_tracker_follows_a_heat_episode():
    tr = GroundTruthTracker()
    tr.observe(INTRO)
    assert tr.receptacles == ["cabinet 1", "countertop 1", "fridge 1", "microwave 1"] and tr.visited == []
    tr.observe("You arrive at countertop 1. On the countertop 1, you see a apple 1, and a mug 2.")
    assert tr.objects == {"apple 1": "countertop 1", "mug 2": "countertop 1"} and tr.visited == ["countertop 1"]
    tr.observe("You pick up the apple 1 from the countertop 1.")
    assert tr.objects["apple 1"] == "in_hand" and tr.inventory == ["apple 1"]
    tr.observe("You arrive at microwave 1. The microwave 1 is closed.")
    tr.observe("You heat the apple 1 using the microwave 1.")
    assert tr.states == {"apple 1": "heated"}
    tr.observe("You arrive at fridge 1. The fridge 1 is closed.")
    tr.observe("You open the fridge 1. The fridge 1 is open. In it, you see nothing.")
    assert "fridge 1" in tr.cleared
    tr.observe("You move the apple 1 to the fridge 1.")
    snap = tr.snapshot()
    assert snap["objects"]["apple 1"] == "fridge 1" and snap["inventory"] == []
    assert snap["visited"] == ["countertop 1", "microwave 1", "fridge 1"]


def test_tracker_drops_objects_no_longer_seen_and_reads_inventory():
    tr = GroundTruthTracker()
    tr.observe("On the shelf 1, you see a mug 1, and a cup 2.")
    tr.observe("You arrive at shelf 1. On the shelf 1, you see a cup 2.")
    assert tr.objects == {"cup 2": "shelf 1"}
    tr.observe("You are carrying: a mug 1.")
    assert tr.inventory == ["mug 1"] and tr.objects["mug 1"] == "in_hand"
    tr.observe("You are not carrying anything.")
    assert tr.inventory == []
    tr.observe("This is a cold cup 2.")
    assert tr.states["cup 2"] == "cooled"


def test_package_import_is_light():
    code = (
        "import sys, rlvr_gym.envs.alfworld as a; a.register_envs(); "
        "bad = [m for m in ('alfworld', 'textworld', 'fast_downward') if m in sys.modules]; "
        "assert not bad, bad"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_registered_ids():
    import rlvr_gym

    ids = {info.id for info in rlvr_gym.list_envs()}
    assert {"rlvr/ALFWorld-v0", "rlvr/ALFWorldOfficial-v0"} <= ids
