"""Loading a game closes its file: textworld's loader left that to the file object's finaliser (a ResourceWarning
per game, and an open descriptor wherever a reference cycle keeps the object alive)."""

from __future__ import annotations

import warnings


def test_loading_games_closes_their_files(alfworld_env, generated_records):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", ResourceWarning)
        for index in range(3):
            alfworld_env.reset(options={"task_index": index})
    assert [str(w.message) for w in caught if issubclass(w.category, ResourceWarning)] == []
