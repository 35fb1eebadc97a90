import math

import pytest
from pydantic import ValidationError

from rlvr_gym import Criterion, Episode, EpisodeError, ErrorKind, Message, Rubric, Task, ToolCall, Turn, Verdict


def test_episode_json_round_trip():
    episode = Episode(
        episode_id="e", env_id="rlvr/X-v0", task_id="t", group_id="g", seed=3,
        turns=[Turn(index=0, observation=[Message(role="user", content="hi")], action="a", token_ids=[1, 2],
                    logprobs=[-0.1, -0.2], reward=1.0)],
        verdict=Verdict(reward=1.0, passed=True, components={"correct": 1.0}),
        error=EpisodeError(kind=ErrorKind.STEP_TIMEOUT, message="slow"),
    )
    again = Episode.model_validate_json(episode.model_dump_json())
    assert again == episode
    assert again.error.kind is ErrorKind.STEP_TIMEOUT
    assert again.reward is None and not again.passed  # an errored episode has no reward and never passes
    assert again.outcome.value == "error"


def test_message_forms():
    m = Message(role="assistant", content=None, tool_calls=[ToolCall(id="1", name="f", arguments='{"x": 1}')])
    assert Message.model_validate(m.as_dict()) == m
    assert Message(role="user", content=[{"type": "text", "text": "a"}, {"type": "image_url",
                                          "image_url": {"url": "data:,"}}]).text() == "a"
    with pytest.raises(ValidationError):
        Message(role="robot", content="x")


def test_verdict_rejects_nan():
    with pytest.raises(ValidationError):
        Verdict(reward=math.nan, passed=False)


def test_task_prompt_messages():
    assert Task(id="a", prompt="q").prompt_messages() == [Message(role="user", content="q")]


def test_rubric_weights_metrics_and_pass():
    rubric = Rubric([Criterion("format", lambda text: float(bool(text)), 0.0),
                     Criterion("correct", lambda text: float(text == "4"), 1.0)], pass_on="correct")
    good, bad = rubric.score(text="4"), rubric.score(text="5")
    assert (good.reward, good.passed, good.components) == (1.0, True, {"format": 1.0, "correct": 1.0})
    assert (bad.reward, bad.passed, bad.components["format"]) == (0.0, False, 1.0)
    heavier = rubric.with_weights({"format": 0.5})
    assert heavier.score(text="5").reward == 0.5
    with pytest.raises(ValueError):
        rubric.with_weights({"nope": 1.0})
    with pytest.raises(ValueError):
        Rubric([Criterion("a", lambda: 1.0), Criterion("a", lambda: 1.0)])
