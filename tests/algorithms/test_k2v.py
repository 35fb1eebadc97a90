"""K2V: the reward by hand on scored strings with a stub judge, an agent judge, and one update on the tiny Llama."""

from __future__ import annotations

import numpy as np
import pytest

from rlvr_gym.algorithms.advantages import AdvantageInput, compute_advantages
from rlvr_gym.algorithms.advantages.k2v import format_score, k2v_reward
from rlvr_gym.algorithms.judge import resolve_judge, says_yes
from rlvr_gym.types import Message, Verdict

CHECKLIST = ["The reasoning mentions paddies", "The reasoning mentions climate"]
GOOD = "<think>Rice grows in flooded paddies of a warm climate.</think><answer>rice</answer>"
THIN = "<think>Rice grows in paddies.</think><answer>rice</answer>"
WRONG = "<think>Wheat grows in a cool climate and paddies.</think><answer>wheat</answer>"


class StubJudge:
    """Says yes when the criterion's last word appears in the reasoning; counts its calls."""

    def __init__(self, **sampling: object) -> None:  # a `py:` judge class gets the method's sampling settings
        self.calls = 0

    def __call__(self, prompt: str) -> str:
        self.calls += 1
        reasoning = prompt.split("Reasoning:\n", 1)[1].split("\n\nCriterion:", 1)[0]
        word = prompt.rsplit("Criterion: ", 1)[1].split("\n", 1)[0].split()[-1]
        return "Yes." if word in reasoning else "no"


def test_format_hand_values():
    """Clean shape: 0.25 + 4 x 0.125 = 0.75; 10 characters after </answer>: 0.75 - 0.010 = 0.74; a second <answer>
    after the matched shape: that tag is not unique (3 x 0.125) and 8 trailing chars: 0.25 + 0.375 - 0.008 =
    0.617; no <think> first: the shape fails, 0."""
    assert format_score("<think>a</think>\n<answer>x</answer>") == pytest.approx(0.75)
    assert format_score("<think>a</think><answer>x</answer>0123456789") == pytest.approx(0.74)
    assert format_score("<think>a</think><answer>x</answer><answer>") == pytest.approx(0.617)
    assert format_score("<answer>x</answer><think>a</think>") == 0.0
    assert format_score("rice") == 0.0


def test_reward_hand_values_checklist_gated_by_correctness():
    """Answer "rice", checklist (paddies, climate). GOOD: exact 6 + 2/2 items + format 0.75 = 7.75. THIN: exact 6 +
    1/2 + 0.75 = 7.25. WRONG: 0 + (gated: judge never asked, though its reasoning names both) + 0.75 = 0.75.
    Exact answer in a malformed reply ("<answer>rice</answer>", no <think>): 6 + 0 + 0 = 6."""
    judge = StubJudge()
    assert k2v_reward(GOOD, "rice", CHECKLIST, "q", judge)["reward"] == pytest.approx(7.75)
    assert k2v_reward(THIN, "rice", CHECKLIST, "q", judge)["reward"] == pytest.approx(7.25)
    assert judge.calls == 4
    wrong = k2v_reward(WRONG, "rice", CHECKLIST, "q", judge)
    assert wrong["reward"] == pytest.approx(0.75) and wrong["checklist"] == 0.0 and judge.calls == 4
    assert k2v_reward("<answer>rice</answer>", "rice", CHECKLIST, "q", judge)["reward"] == 6.0


def test_agent_judge_and_yes_reading(one_turn_episodes):
    """A config names the judge by agent spec: `constant:Yes, it does.` answers every item yes."""
    assert resolve_judge("constant:Yes, it does.")("anything") == "Yes, it does."
    assert says_yes("YES") and says_yes("yes, mostly") and not says_yes("no") and not says_yes("")
    eps = _episodes(one_turn_episodes, [GOOD, THIN])
    out = compute_advantages("k2v", AdvantageInput.from_episodes(eps), judge="constant:yes")
    assert out.metrics["k2v_checklist"] == 1.0 and not out.episode.any()  # both get 6 + 1 + 0.75


def _episodes(build, replies, tok=None, prompt=None):
    """Correct answers (env reward 1) to the fill-the-blank question, with K2V's gold in their metadata."""
    question = Message(role="user", content="Which crop fills the blank: { } grows in paddies?")
    return build(
        replies, tokenizer=tok, prompt=prompt, observation=(question,), eos=True,
        verdicts=[Verdict(reward=1.0, passed=True)] * len(replies),
        metadata={"k2v": {"answer": "rice", "checklist": CHECKLIST}},
    )  # fmt: skip


def test_update_prefers_the_better_reasoned_correct_answer(
    length_env_id, tiny_model, tokenizer, tmp_path, reply_logp, one_turn_episodes
):
    """Mechanism: two correct answers (env reward 1 each: GRPO gives no update); K2V's checklist gives 7.75 vs 7.25,
    A = +-0.7071, and one optimizer step on the tiny Llama + LoRA (lr 1e-2) raises the mean token log-prob of the
    reasoning that meets both criteria relative to the one that meets one. Measured (seed 0): GOOD +0.046,
    THIN -0.005 per token."""
    from rlvr_gym.algorithms.train_config import load_config
    from rlvr_gym.algorithms.trainer import Trainer

    cfg = load_config(
        {
            "run_dir": str(tmp_path),
            "tensorboard": False,
            "progress": False,
            "model": {"lora": {"r": 4, "alpha": 8}, "threads": 1, "bf16_autocast": False},
            "rollout": {"env": length_env_id, "prompts_per_step": 1, "group_size": 2},
            "estimator": "k2v",
            "estimator_params": {"judge": "py:tests.algorithms.test_k2v:StubJudge"},
            "optim": {"lr": 1e-2},
            "loss": {"log_kl": False},
        }
    )
    trainer = Trainer(cfg, model=tiny_model, tokenizer=tokenizer)
    eps = _episodes(one_turn_episodes, [GOOD, THIN], tokenizer, tokenizer("Fill the blank.").input_ids)
    assert not compute_advantages("grpo", AdvantageInput.from_episodes(eps)).episode.any()
    adv = trainer.advantages(eps)
    np.testing.assert_allclose(adv.episode, [0.707106, -0.707106], atol=1e-5)
    before = reply_logp(trainer.model, eps)
    trainer.update(eps, adv)
    shift = reply_logp(trainer.model, eps) - before
    assert shift[0] > shift[1] and shift[0] > 0
