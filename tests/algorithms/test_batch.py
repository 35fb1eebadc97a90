"""Episode -> token rows: multi-turn merging, env-token masks, advantage broadcast, collation shifts; DAPO's dynamic
sampling of mixed-reward groups."""

from __future__ import annotations

import math

import numpy as np

from rlvr_gym.algorithms.advantages.base import AdvantageOutput
from rlvr_gym.algorithms.batch import build_rows, collate, fill_mixed_groups, micro_batches
from rlvr_gym.types import Episode, Turn


def episode(turns, reward=1.0):
    return Episode(
        episode_id="e",
        env_id="x",
        task_id="t",
        group_id="g",
        total_reward=reward,
        turns=[
            Turn(index=i, observation=[], action="", prompt_token_ids=p, token_ids=g, logprobs=lp)
            for i, (p, g, lp) in enumerate(turns)
        ],
    )


def test_multi_turn_episode_is_one_row_with_env_tokens_masked():
    # turn 2's prompt = turn 1's prompt + generation + env reply [7, 8]
    ep = episode([([1, 2], [3, 4], [-0.1, -0.2]), ([1, 2, 3, 4, 7, 8], [5], [-0.3])])
    adv = AdvantageOutput(episode=np.array([0.5]), turn=[np.array([1.0, -2.0])])
    rows = build_rows([ep], adv)
    assert len(rows) == 1
    row = rows[0]
    assert row.input_ids == [1, 2, 3, 4, 7, 8, 5]
    assert row.loss_mask == [0, 0, 1, 1, 0, 0, 1]
    assert row.advantages == [0, 0, 1.0, 1.0, 0, 0, -2.0]
    assert row.old_logprobs[2:4] == [-0.1, -0.2] and row.old_logprobs[6] == -0.3
    b = collate(rows + [rows[0]], pad_id=0)
    assert b.targets[0].tolist() == [2, 3, 4, 7, 8, 5]  # shifted: position t predicts token t+1
    assert b.mask[0].tolist() == [0, 1, 1, 0, 0, 1]


def test_rewritten_history_starts_a_new_row_and_missing_logprobs_are_nan():
    ep = episode([([1, 2], [3], None), ([9, 9], [4], [-1.0])])
    rows = build_rows([ep], AdvantageOutput(episode=np.array([1.0])))
    assert [r.input_ids for r in rows] == [[1, 2, 3], [9, 9, 4]]
    assert math.isnan(rows[0].old_logprobs[2])


def test_dropped_zero_advantage_and_truncation():
    eps = [episode([([1], [2, 3], [0.0, 0.0])]), episode([([1], [2], [0.0])]), episode([([1], [2], [0.0])])]
    adv = AdvantageOutput(episode=np.array([1.0, 0.0, 1.0]), keep=np.array([True, True, False]))
    rows = build_rows(eps, adv, max_len=2)
    assert len(rows) == 1 and rows[0].input_ids == [1, 2] and rows[0].n_generated == 1


def test_micro_batches_respect_token_budget():
    eps = [episode([([1] * n, [2], [0.0])]) for n in (3, 9, 4, 8)]
    rows = build_rows(eps, AdvantageOutput(episode=np.ones(4)))
    batches = micro_batches(rows, token_budget=20)
    assert sorted(len(r.input_ids) for b in batches for r in b) == [4, 5, 9, 10]
    assert all(len(b) * max(len(r.input_ids) for r in b) <= 20 for b in batches)


def test_length_buckets_pad_to_a_multiple():
    rows = build_rows([episode([([1] * 5, [2], [0.0])])], AdvantageOutput(episode=np.ones(1)))
    b = collate(rows, pad_id=0, pad_multiple=8)
    assert b.input_ids.shape == (1, 8) and b.mask.sum().item() == 1
    assert micro_batches(rows * 3, token_budget=16, pad_multiple=8) == [rows * 2, rows]


def group(gid: str, rewards: list[float]) -> list[Episode]:
    return [
        Episode(episode_id=f"{gid}{i}", env_id="x", task_id=gid, group_id=gid, total_reward=r, turns=[])
        for i, r in enumerate(rewards)
    ]


def fake_collect(rewards_of_task: dict[int, list[float]]):
    calls: list[list[int]] = []

    def collect(tasks: list[int], attempt: int) -> list[Episode]:
        calls.append(tasks)
        return [ep for t in tasks for ep in group(f"t{t}", rewards_of_task[t])]

    return collect, calls


def draw_in_order(pool: list[int]):
    def draw(attempt: int, n: int, drawn: set[int]) -> list[int]:
        return [t for t in pool if t not in drawn][:n]

    return draw


def test_dynamic_sampling_refills_until_the_batch_holds_enough_mixed_groups():
    # tasks 0, 1, 3 are all-equal; 2, 4, 5, 6 are mixed
    rewards = {0: [1, 1], 1: [0, 0], 2: [1, 0], 3: [0, 0], 4: [0, 1], 5: [1, 0], 6: [0, 1]}
    collect, calls = fake_collect(rewards)
    episodes, m = fill_mixed_groups(draw_in_order(list(rewards)), collect, want=3, max_tries=4)
    assert {ep.group_id for ep in episodes} == {"t2", "t4", "t5"}
    # try 1 draws 3 (1 mixed: rate 1/3); try 2 draws ceil(2 / (1/3)) = 6 capped at 3 -> tasks 3, 4, 5
    assert calls == [[0, 1, 2], [3, 4, 5]]
    assert (m["sampling/drawn"], m["sampling/kept"], m["sampling/tries"]) == (6, 3, 2)


def test_dynamic_sampling_is_bounded_and_never_returns_an_empty_batch():
    collect, calls = fake_collect({t: [1.0, 1.0] for t in range(20)})  # nothing to learn anywhere
    episodes, m = fill_mixed_groups(draw_in_order(list(range(20))), collect, want=2, max_tries=3)
    assert len(calls) == 3 and m["sampling/kept"] == 0 and m["sampling/drawn"] == 6
    assert {ep.group_id for ep in episodes} == {"t0", "t1"}  # the first draw stands; no advantage, no update
