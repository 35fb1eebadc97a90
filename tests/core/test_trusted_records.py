"""Records the hot path builds without validation (`types.trusted`) are the records validation would build: same
values, types, dumps and set fields, and no container shared with their source."""

from __future__ import annotations

from rlvr_gym import Message, Task, TaskView
from rlvr_gym.agents.scripted import OracleAgent
from rlvr_gym.rollout import Runner, collect, plan_episodes
from rlvr_gym.types import Episode


def test_episode_records_equal_their_validated_round_trip(echo_env_id):
    episodes = [
        *_collect(echo_env_id, isolation="inline"),
        *_collect("rlvr/MathStarter-v0", isolation=None),
    ]
    for episode in episodes:
        again = Episode.model_validate_json(episode.model_dump_json())
        assert again == episode and again.model_dump_json() == episode.model_dump_json()
        assert type(episode.turns[0].reward) is float and type(episode.turns[0].action) is str


def _collect(env_id: str, isolation: str | None) -> list[Episode]:
    import asyncio

    return asyncio.run(collect(env_id, OracleAgent(), tasks=4, group_size=2, concurrency=2, isolation=isolation))


def test_new_episode_is_the_validated_episode(echo_env_id):
    runner = Runner(echo_env_id, OracleAgent())
    try:
        for spec in plan_episodes(echo_env_id, [0, 3], 2, seed=5):
            built = runner.new_episode(spec)
            expected = Episode(
                episode_id=spec.episode_id,
                env_id=echo_env_id,
                task_id=spec.task_key,
                task_index=spec.task_index,
                seed=spec.seed,
                group_id=spec.group_id,
                sample_index=spec.sample_index,
                agent=runner.agent.name,
            )
            assert built == expected and built.model_dump_json() == expected.model_dump_json()
            assert built.model_fields_set == expected.model_fields_set
            assert built.turns is not runner.new_episode(spec).turns  # fresh containers per episode
    finally:
        runner.close()


def test_task_view_is_the_validated_view_with_its_own_containers():
    for prompt in ("Say 3.", [Message(role="user", content="Say 3.")]):
        task = Task(id="t/train/0", prompt=prompt, ground_truth="3", metadata={"index": 0, "tags": ("a",)})
        view = task.view()
        assert view == TaskView(id=task.id, prompt=task.prompt, metadata=task.metadata)
        assert view.metadata is not task.metadata and view.prompt == task.prompt
        assert "ground_truth" not in view.model_dump()
