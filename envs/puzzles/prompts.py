"""What an agent is shown and what the oracle sends, for the text and the frames variant of each puzzle."""

from __future__ import annotations

from rlvr_gym import ContentPart, Message

from .base import Puzzle
from .render import png_data_url, render_moves, render_state
from .tasks import GAMES, Instance

_MOVES = (
    "Send moves as letters U, D, L, R (e.g. 'R R D' or 'RRD' or 'right, right, down'). You may send the "
    "whole solution in one message or a few moves per message; after each message you see the new board. A "
    "message with an illegal move is rejected as a whole (none of its moves are played), and so is one that "
    "goes on moving after the puzzle is solved."
)
_FORMATS = {
    "sokoban": _MOVES + " 'restart' puts the board back to the start.",
    "maze": _MOVES,
    "flowfree": "Send one line per colour: 'A: (0,0) (0,1) (1,1)' lists colour A's path as (row,col) cells. You may "
    "send all paths in one message, or some paths (even unfinished ones) per message and extend them "
    "later; after each message you see the new board. Give each colour at most once per message. A "
    "message with a path that breaks the rules is rejected as a whole.",
}


def intro(game: str, puzzle: Puzzle) -> str:
    return f"You are solving a {GAMES[game].title} puzzle ({puzzle.rows}x{puzzle.cols} board). {puzzle.legend()}"


def text_prompt(game: str, instance: Instance, max_turns: int) -> list[Message]:
    puzzle = instance.puzzle
    text = (
        f"{intro(game, puzzle)}\n\nBoard:\n{puzzle.text(puzzle.initial_state())}\n\n{_FORMATS[game]} You have "
        f"{max_turns} messages. Put only your answer in the message, or wrap it in <answer>...</answer>."
    )
    return [Message(role="user", content=text)]


def text_reference(game: str, instance: Instance) -> list[str]:
    return [GAMES[game].answer_text(instance.puzzle, instance.moves)]


def frames_prompt(game: str, instance: Instance, *, tile: int, max_moves: int, max_frames: int) -> list[Message]:
    puzzle = instance.puzzle
    names = ", ".join(
        f"{name} = RGB{tuple(int(v) for v in colour)}"
        for name, colour in zip(puzzle.class_names, puzzle.active_palette(), strict=False)
    )
    group = "one legal move" if max_moves == 1 else f"at most {max_moves} legal moves"
    text = (
        f"{intro(game, puzzle)}\n\nBoard (also shown as the image):\n{puzzle.text(puzzle.initial_state())}\n\n"
        f"Answer with a video of the solution: a sequence of at most {max_frames} RGB frames (a (T, H, W, 3) "
        f"uint8 array, or one animated PNG/GIF as a data:image/png;base64 URL). Frame 0 must show this board; "
        f"each next frame shows the board after {group} (a repeated frame is allowed); the last frame shows "
        f"the solved board. Draw the {puzzle.rows}x{puzzle.cols} board filling the whole frame as a grid of "
        f"equal flat tiles ({tile} px each here; any resolution works) in these colours: {names}."
    )
    image = png_data_url(render_state(puzzle, puzzle.initial_state(), tile))
    return [
        Message(
            role="user",
            content=[ContentPart(type="text", text=text), ContentPart(type="image_url", image_url={"url": image})],
        )
    ]


def frames_reference(instance: Instance, *, tile: int, fps: float) -> list[str]:
    return [png_data_url(render_moves(instance.puzzle, instance.moves, tile), fps)]
