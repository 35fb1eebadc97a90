"""episodes -> DPO pairs in TRL's formats."""

from __future__ import annotations

from rlvr_gym.algorithms.preference import episodes_to_dpo, load_episodes, write_jsonl
from rlvr_gym.types import Episode, EpisodeError, ErrorKind, Message, Turn, Verdict


def ep(gid, i, reward, actions, error=False):
    turns = [
        Turn(index=k, observation=[Message(role="user", content="Q?" if k == 0 else "Try again.")], action=a)
        for k, a in enumerate(actions)
    ]
    return Episode(
        episode_id=f"{gid}|{i}",
        env_id="e",
        task_id=gid,
        group_id=gid,
        sample_index=i,
        turns=turns,
        verdict=Verdict(reward=reward, passed=reward > 0.5),
        error=EpisodeError(kind=ErrorKind.ENV_ERROR, message="x") if error else None,
    )


def test_best_worst_conversational_multi_turn(tmp_path):
    eps = [
        ep("g1", 0, 0.0, ["a"]),
        ep("g1", 1, 1.0, ["b", "c"]),
        ep("g1", 2, 0.5, ["d"]),
        ep("g2", 0, 1.0, ["x"]),
        ep("g2", 1, 1.0, ["y"]),  # no reward gap -> no pair
        ep("g3", 0, 1.0, ["p"]),
        ep("g3", 1, 0.0, ["q"], error=True),
    ]  # failed episode ignored
    rows = episodes_to_dpo(eps, system_prompt="S")
    assert len(rows) == 1
    row = rows[0]
    assert row["prompt"] == [{"role": "system", "content": "S"}, {"role": "user", "content": "Q?"}]
    assert row["chosen"] == [
        {"role": "assistant", "content": "b"},
        {"role": "user", "content": "Try again."},
        {"role": "assistant", "content": "c"},
    ]
    assert row["rejected"] == [{"role": "assistant", "content": "a"}]
    assert (row["score_chosen"], row["score_rejected"]) == (1.0, 0.0)
    first = episodes_to_dpo(eps, multi_turn="first_turn")[0]
    assert first["chosen"] == [{"role": "assistant", "content": "b"}]
    path = tmp_path / "eps.jsonl"
    path.write_text("".join(e.model_dump_json() + "\n" for e in eps) + '{"torn')
    assert len(load_episodes(path)) == len(eps)
    assert episodes_to_dpo(path, system_prompt="S") == rows


def test_all_pairs_margin_and_standard_format(tmp_path):
    eps = [ep("g", 0, 0.0, ["a"]), ep("g", 1, 1.0, ["b"]), ep("g", 2, 0.5, ["c"])]
    rows = episodes_to_dpo(eps, strategy="all", format="standard", with_metadata=False)
    assert [(r["chosen"], r["rejected"]) for r in rows] == [("b", "c"), ("b", "a"), ("c", "a")]
    assert rows[0] == {"prompt": "Q?", "chosen": "b", "rejected": "c"}
    assert len(episodes_to_dpo(eps, strategy="all", min_margin=0.5)) == 1
    assert write_jsonl(rows, tmp_path / "dpo.jsonl") == 3
