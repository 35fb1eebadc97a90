"""Visual-trajectory puzzles (VideoRLVR domains): Sokoban, Maze and FlowFree as text envs and frame envs.

Family layout (docs/family-template.md): `tasks.py` (one TaskSource per puzzle, ids `<puzzle>/<split>/<index>`),
`verifier.py` (`verify(task, trajectory)`, `wrong_answers(task, rng)`), `env.py` (the six envs). The game modules
(`sokoban*.py`, `maze.py`, `flowfree*.py`) hold the rules, generators and solvers; `frames.py`, `decode.py` and
`media.py` the video path. Importing this package is light: `register_envs` only records entry points.
"""

from __future__ import annotations

_ENVS = {
    "Sokoban": "Sokoban: push every box onto a goal",
    "Maze": "Maze: walk from S to the exit G",
    "FlowFree": "FlowFree: join same-coloured endpoints with paths that fill the board",
}


def register_envs() -> None:
    """Register the text (`rlvr/Sokoban-v0`) and frame-sequence (`rlvr/SokobanFrames-v0`) variant of each."""
    from rlvr_gym import register

    for name, description in _ENVS.items():
        register(
            f"rlvr/{name}-v0",
            "rlvr_gym.envs.puzzles.env:PuzzleTextEnv",
            family="puzzles",
            description=f"{description} (text board, moves as text)",
            game=name.lower(),
        )
        register(
            f"rlvr/{name}Frames-v0",
            "rlvr_gym.envs.puzzles.env:PuzzleFramesEnv",
            family="puzzles",
            description=f"{description} (frame sequence in, verified frame by frame)",
            game=name.lower(),
        )


def verify(task, trajectory, **kwargs):
    """Lazy re-export of `verifier.verify` (keeps this import light)."""
    from .verifier import verify as _verify

    return _verify(task, trajectory, **kwargs)
