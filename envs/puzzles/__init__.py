"""Visual-trajectory puzzles (VideoRLVR domains): Sokoban, Maze and FlowFree as text envs and frame envs.

Importing this package is light (no numpy work, no generation); `register_envs` only records entry points.
Pure verifier for any model's frames: `rlvr_gym.envs.puzzles.verify.verify_frames(task, frames)`.
"""

from __future__ import annotations

_ENVS = {
    "Sokoban": ("sokoban", "Sokoban: push every box onto a goal"),
    "Maze": ("maze", "Maze: walk from S to the exit G"),
    "FlowFree": ("flowfree", "FlowFree: join same-coloured endpoints with paths that fill the board"),
}


def register_envs() -> None:
    """Register the text (`rlvr/Sokoban-v0`) and frame-sequence (`rlvr/SokobanFrames-v0`) variant of each."""
    from rlvr_gym import register

    for name, (_, description) in _ENVS.items():
        register(f"rlvr/{name}-v0", f"rlvr_gym.envs.puzzles.text_env:{name}Env", family="puzzles",
                 description=f"{description} (text board, moves as text)")
        register(f"rlvr/{name}Frames-v0", f"rlvr_gym.envs.puzzles.frames_env:{name}FramesEnv", family="puzzles",
                 description=f"{description} (frame sequence in, verified frame by frame)")


def verify_frames(task, frames, **kwargs):
    """Lazy re-export of `verify.verify_frames` (keeps this import light)."""
    from .verify import verify_frames as _verify

    return _verify(task, frames, **kwargs)
