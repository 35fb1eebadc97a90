"""GRID: the rule reward by hand on a small CTI article, and one trainer update on the tiny Llama that follows it."""

from __future__ import annotations

import numpy as np
import pytest

from rlvr_gym.algorithms.advantages import AdvantageInput, compute_advantages
from rlvr_gym.algorithms.advantages.grid import grid, grid_reward, payload
from rlvr_gym.types import Verdict

ARTICLE_GOLD = {
    "kind": "triples",
    "tagged": True,
    "triples": [
        {"sub": r"apt\s*29", "rel": r"uses", "obj": r"wellmess"},
        {"sub": r"wellmess", "rel": r"targets", "obj": r"vaccine research"},
        {"sub": r"apt\s*29", "rel": r"exploits", "obj": r"CVE-2019-19781"},
    ],
}
FULL = (
    "<mythink>three relations</mythink><myresult>(APT29, uses, WellMess); (WellMess, targets, vaccine research); "
    "(APT29, exploits, CVE-2019-19781)</myresult>"
)
TWO = "<myresult>(APT 29, uses, WellMess) (WellMess, targets, vaccine research)</myresult>"
NONE = "<myresult>(Lazarus, uses, Mimikatz)</myresult>"


def test_triples_hand_values():
    """3 gold triples (subject/relation/object regexes). FULL matches all 3 -> 3/3 = 1, +0.1 tag bonus (prompt asks
    for <mythink>/<myresult>, both present) -> clipped to 1.0. TWO matches 2 ("APT 29" hits `apt\\s*29`, case
    ignored) -> 2/3 = 0.667, no <mythink> so no bonus. NONE matches 0 -> 0."""
    assert grid_reward(FULL, ARTICLE_GOLD) == 1.0
    assert grid_reward(TWO, ARTICLE_GOLD) == pytest.approx(2 / 3)
    assert grid_reward(NONE, ARTICLE_GOLD) == 0.0
    # the bonus shows below the clip: 2 of 3 matched plus both tags -> 0.667 + 0.1
    tagged_two = "<mythink>x</mythink>" + TWO
    assert grid_reward(tagged_two, ARTICLE_GOLD) == pytest.approx(2 / 3 + 0.1)


def test_options_entities_and_payload_hand_values():
    """Multi-select gold {A, C}: exact {A, C} -> 1, overlap {A, B} -> 0.5, disjoint {B, D} -> 0, read from the
    *last* "#### [..]" list; single choice B: <mychoice>b</mychoice> -> 1, C -> 0; entities: 1 of 2 regexes -> 0.5.
    Payload: NFKC (full-width "Ａ" -> "A") and collapsed whitespace, last <myresult> block."""
    ms = {"kind": "multi_select", "answer": ["A", "C"]}
    assert grid_reward('#### ["B"] then <myresult>#### ["A", "C"]</myresult>', ms) == 1.0
    assert grid_reward('<myresult>#### ["A","B"]</myresult>', ms) == 0.5
    assert grid_reward('<myresult>#### ["B","D"]</myresult>', ms) == 0.0
    assert grid_reward("<myresult>no list</myresult>", ms) == 0.0
    sc = {"kind": "single_choice", "answer": "B"}
    assert grid_reward("<myresult><mychoice> b </mychoice></myresult>", sc) == 1.0
    assert grid_reward("<myresult><mychoice>C</mychoice></myresult>", sc) == 0.0
    ent = {"kind": "entities", "entities": [r"cobalt\s*strike", r"emotet"]}
    assert grid_reward("<myresult>Cobalt  Strike beacon</myresult>", ent) == 0.5
    assert payload("<myresult>old</myresult> <myresult>Ａ\n\n b</myresult>") == "A b"


def _episodes(build, replies, gold, tok=None, prompt=None):
    """Replies the env scored 0, each with the article's gold spec in its metadata."""
    verdicts = [Verdict(reward=0.0, passed=False)] * len(replies)
    return build(replies, tokenizer=tok, prompt=prompt, eos=True, verdicts=verdicts, metadata={"grid": gold})


def test_estimator_is_grpo_on_the_rule_reward_and_needs_gold(one_turn_episodes):
    """Rewards [1, 2/3, 0]: mean 5/9, unbiased std 0.5092; A = (r - mean)/(std + 1e-6) = [0.8729, 0.2182, -1.0911]."""
    out = compute_advantages(
        "grid", AdvantageInput.from_episodes(_episodes(one_turn_episodes, [FULL, TWO, NONE], ARTICLE_GOLD))
    )
    np.testing.assert_allclose(out.episode, [0.872872, 0.218218, -1.091089], atol=1e-5)
    assert out.metrics["grid_reward"] == pytest.approx(5 / 9)
    bare = _episodes(one_turn_episodes, [FULL], ARTICLE_GOLD)
    bare[0].task_metadata = {}
    with pytest.raises(ValueError, match="no `grid` gold"):
        grid(AdvantageInput.from_episodes(bare))


def test_update_follows_the_rule_reward(length_env_id, tiny_model, tokenizer, tmp_path, reply_logp, one_turn_episodes):
    """Mechanism: the env's verdict scores all three replies 0 (GRPO: no update); with `estimator: grid` one
    optimizer step on the tiny Llama + LoRA (lr 1e-2) raises the mean token log-prob of the 3/3 reply and lowers the
    0/3 one. Measured (seed 0): +0.069 (3/3), +0.037 (2/3), -0.044 (0/3) per token."""
    from rlvr_gym.algorithms.train_config import load_config
    from rlvr_gym.algorithms.trainer import Trainer

    cfg = load_config(
        {
            "run_dir": str(tmp_path),
            "tensorboard": False,
            "progress": False,
            "model": {"lora": {"r": 4, "alpha": 8}, "threads": 1, "bf16_autocast": False},
            "rollout": {"env": length_env_id, "prompts_per_step": 1, "group_size": 3},
            "estimator": "grid",
            "optim": {"lr": 1e-2},
            "loss": {"log_kl": False},
        }
    )
    trainer = Trainer(cfg, model=tiny_model, tokenizer=tokenizer)
    prompt = tokenizer("Extract the security graph of the article.").input_ids
    eps = _episodes(one_turn_episodes, [FULL, TWO, NONE], ARTICLE_GOLD, tokenizer, prompt)
    assert not compute_advantages("grpo", AdvantageInput.from_episodes(eps)).episode.any()
    before = reply_logp(trainer.model, eps)
    trainer.update(eps, trainer.advantages(eps))
    shift = reply_logp(trainer.model, eps) - before
    assert shift[0] > 0 > shift[2]
