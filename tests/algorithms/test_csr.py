"""CSR: calibration reward by hand, and the real math verifier's answers flowing into it."""

from __future__ import annotations

import numpy as np

from rlvr_gym.algorithms.advantages import AdvantageInput
from rlvr_gym.algorithms.advantages.csr import agreement, csr, csr_rewards


def _inp(groups, answers, correct):
    rewards = [[1.0 if c else 0.0 for c in cs] for cs in correct]
    flat = [a for g in answers for a in g]
    return AdvantageInput.from_rewards(rewards, answers=flat, correct=np.array([c for g in correct for c in g]))


def test_consistent_vs_spurious_agreement_hand_values():
    """lam = 0.5, G = 4, gold 12.
    Group A answers [12, 12, 12, 7]: the three correct agree, a = 2/3 -> r = 1 + 0.5*2/3 = 4/3; the lone wrong one
    a = 0 -> r = 0. r = [4/3, 4/3, 4/3, 0], mean 1, unbiased std 2/3 -> A = [0.5, 0.5, 0.5, -1.5].
    Group B answers [7, 7, 12, 9]: the two wrong '7' agree (spurious), a = 1/3 -> r = -1/6; r = [-1/6, -1/6, 1, 0],
    mean 1/6, unbiased std sqrt(34/108) = 0.561084 -> A = [-0.594089, -0.594089, 1.485223, -0.297044]:
    the agreeing wrong answers are pushed down twice as hard as the lone wrong one (plain GRPO: -0.5 for all three)."""
    inp = _inp(
        [[1, 1, 1, 0], [0, 0, 1, 0]],
        [["12", "12", " 12 ", "7"], ["7", "7", "12", "9"]],
        [[True, True, True, False], [False, False, True, False]],
    )
    np.testing.assert_allclose(csr_rewards(inp), [4 / 3, 4 / 3, 4 / 3, 0, -1 / 6, -1 / 6, 1, 0], atol=1e-12)
    out = csr(inp)
    np.testing.assert_allclose(out.episode, [0.5, 0.5, 0.5, -1.5, -0.594089, -0.594089, 1.485223, -0.297044], atol=1e-5)
    assert out.metrics["csr_penalty_wrong"] < 0 < out.metrics["csr_bonus_correct"]


def test_missing_answers_are_singletons_and_lam_zero_is_grpo():
    np.testing.assert_allclose(agreement([None, None, "3"]), [0, 0, 0])
    np.testing.assert_allclose(agreement(["x"]), [0])
    inp = _inp([[1, 0, 0]], [["3", "4", "4"]], [[True, False, False]])
    from rlvr_gym.algorithms.advantages.group import grpo

    np.testing.assert_allclose(csr(inp, lam=0.0).episode, grpo(inp).episode)


def test_real_verifier_answers_drive_the_reward():
    """Replies scored by the MathAddition verifier, answers extracted the way the trainer does (`from_episodes`):
    the two agreeing wrong sums get a lower reward than the lone wrong one, the agreeing right ones a higher one:
    G = 5, each pair a = 1/4, so 1 + 0.5/4 = 1.125 and 0 - 0.5/4 = -0.125; the lone wrong 0 stays 0."""
    import rlvr_gym
    from rlvr_gym.types import Episode, Turn

    env = rlvr_gym.make("rlvr/MathAddition-v0")
    task = env.get_task(3)
    gold = int(task.ground_truth)
    replies = [
        rf"\boxed{{{gold}}}",
        rf"So \boxed{{{gold}}}",
        rf"\boxed{{{gold + 1}}}",
        rf"\boxed{{{gold + 1}}}",
        r"\boxed{0}",
    ]
    eps = [
        Episode(
            episode_id=f"e{k}",
            env_id="rlvr/MathAddition-v0",
            task_id=task.id,
            group_id="g",
            verdict=env.score_answer(task, reply),
            turns=[Turn(index=0, observation=[], action=reply)],
        )
        for k, reply in enumerate(replies)
    ]
    r = csr_rewards(AdvantageInput.from_episodes(eps))
    np.testing.assert_allclose(r, [1.125, 1.125, -0.125, -0.125, 0.0])  # a = 1/4 for each agreeing pair (G = 5)
