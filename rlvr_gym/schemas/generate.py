"""Regenerate the shipped JSON Schemas from the pydantic models: `python -m rlvr_gym.schemas.generate`."""

from . import write_episode_schema

if __name__ == "__main__":
    print(write_episode_schema())
