"""Every puzzle parser is linear-time or bounded: a 1 MB adversarial action is handled in < 100 ms by every env."""

from __future__ import annotations

import time

import pytest

import rlvr_gym

IDS = [f"rlvr/{name}{variant}-v0" for name in ("Sokoban", "Maze", "FlowFree") for variant in ("", "Frames")]
MB = 1_000_000
ADVERSARIAL = {
    "newlines": "\n" * MB,
    "backticks": "`" * MB,
    "fences": "```\n" * (MB // 4),
    "brackets": "[" * (MB // 2) + "]" * (MB // 2),
    "parens": "(" * (MB // 2) + ")" * (MB // 2),
    "spaces": " " * MB,
    "blank_lines": " \t\n" * (MB // 3),
    "answer_tags": "<answer>" * (MB // 8),
    "closing_tags": "</answer>" * (MB // 9),
    "moves_lines": "moves:\n" * (MB // 7),
    "colon_lines": "A:" * (MB // 2),
    "path_lines": "A: (0,0)\n" * (MB // 9),
    "digits": "1" * MB,
    "digit_pairs": "(1,1) " * (MB // 6),
    "letters": "U" * MB,
    "moves": "U " * (MB // 2),
    "words": "up " * (MB // 3),
    "data_urls": "data:image/png;base64," * (MB // 22),
    "base64": "data:image/png;base64," + "A" * MB,
    "surrogates": "\ud800x" * (MB // 2),
}


def _step_seconds(env, action: str) -> float:
    """CPU seconds of one step: on a shared machine wall time measures the neighbours, CPU time the parser."""
    env.reset(options={"task_index": 0})
    start = time.process_time()
    env.step_result(action)  # must not raise
    return time.process_time() - start


@pytest.mark.parametrize("env_id", IDS)
def test_one_megabyte_adversarial_actions_under_100_ms(env_id):
    env = rlvr_gym.make(env_id, max_turns=2)
    slow = {}
    for name, action in ADVERSARIAL.items():
        seconds = min(_step_seconds(env, action) for _ in range(3))  # best of three
        if seconds >= 0.1:
            slow[name] = round(seconds * 1000)
    assert not slow, f"{env_id}: slow 1 MB actions (ms): {slow}"


def test_answer_formats_still_read_after_the_linear_rewrite():
    from rlvr_gym.envs.puzzles.base import answer_region, parse_directions

    assert answer_region("think <answer>bad</answer> more <ANSWER> R R </Answer> tail") == " R R "
    assert answer_region("blah\n  Moves : U D\nmore text") == " U D"
    assert answer_region("moves: L\nthen\nanswer: R") == " R"
    assert answer_region("no markers at all") == "no markers at all"
    assert parse_directions("<answer>→ ↓, up</answer>") == (["R", "D", "U"], None)
    assert parse_directions("`R` [D] (L)") == (["R", "D", "L"], None)
    assert parse_directions("U" * 10_001)[1]  # over the move cap: refused, not played
    flow = rlvr_gym.make("rlvr/FlowFree-v0", difficulty=1)
    flow.reset(options={"task_index": 0})
    puzzle = flow.puzzle
    lines = flow.task.reference_actions[0].splitlines()
    text = "Here is my plan.\n" + "\n".join(f"  - {line}" for line in lines)
    moves, error = puzzle.parse_action(text)
    assert error is None and len(moves) == len(lines)
    assert puzzle.parse_action("Idea: A is easy\n" + "\n".join(lines))[0] == moves  # inline 'a:' is not a line
    assert "off the board" in puzzle.parse_action("A: (0,0) (0,99999)")[1]
