"""Self-play loop with a scripted test double: validity gating and learnability arithmetic."""

from __future__ import annotations

import asyncio

import pytest

from rlvr_gym.agent import Agent, AgentStep
from rlvr_gym.envs.geo.selfplay import proposer_reward, run_selfplay
from rlvr_gym.envs.geo.sources import SOURCES


class Scripted(Agent):
    """Proposes `proposal`; as solver answers with the count of trees it reads off the text on even samples."""

    def __init__(self, proposal: str) -> None:
        self.proposal = proposal

    async def act(self, ctx, observation):
        text = observation[-1].text()
        if ctx.task.id.startswith("geo/selfplay/propose"):
            return AgentStep(self.proposal)
        trees = text.count(" tree disc ")
        return AgentStep(f"ANSWER: {trees if ctx.sample_index == 0 else trees + 50}")


def test_learnability_zero_at_extremes():
    assert proposer_reward(True, 0.0) == (0.5, 0.0)
    assert proposer_reward(True, 1.0) == (0.5, 0.0)
    assert proposer_reward(True, 0.5) == (0.75, 0.5)
    assert proposer_reward(False, 0.5)[0] == 0.0


def test_valid_proposal_is_solved_half_the_time():
    log = asyncio.run(run_selfplay(Scripted('ANSWER: ["count", ["objects", "tree"]]'), proposals=2, samples=2))
    assert all(row["valid"] for row in log.rows)
    assert all(row["solve_rate"] == 0.5 and row["learnability"] == 0.5 for row in log.rows)


def test_invalid_proposal_gets_nothing():
    log = asyncio.run(run_selfplay(Scripted('ANSWER: ["count", ["objects", "dragon"]]'), proposals=2, samples=2))
    assert log.summary()["validity_rate"] == 0.0 and log.summary()["mean_proposer_reward"] == 0.0


@pytest.mark.skipif(SOURCES["osm"].available() is not None, reason="run scripts/setup_geo.sh first")
def test_selfplay_on_osm_scenes():
    log = asyncio.run(
        run_selfplay(Scripted('ANSWER: ["count", ["objects", "tree"]]'), proposals=1, samples=2, source="osm")
    )
    assert log.summary()["proposals"] == 1 and log.rows[0]["proposer_reward"] in (0.0, 0.5, 0.75)


def _tiny_selfplay(**overrides):
    """GeoX self-play on a tiny random Llama with the embedded tokenizer (real peft, real update)."""
    pytest.importorskip("peft")
    import torch
    from peft import LoraConfig, get_peft_model
    from transformers import AutoTokenizer, LlamaConfig, LlamaForCausalLM

    from rlvr_gym.agents.models import smollm2_path
    from rlvr_gym.envs.geo.selfplay import GeoSelfPlay, GeoSelfPlayConfig

    tokenizer = AutoTokenizer.from_pretrained(str(smollm2_path()))
    torch.manual_seed(0)
    base = LlamaForCausalLM(
        LlamaConfig(
            vocab_size=len(tokenizer),
            hidden_size=32,
            intermediate_size=64,
            num_hidden_layers=2,
            num_attention_heads=2,
            num_key_value_heads=2,
        )
    )
    lora = LoraConfig(r=4, lora_alpha=8, target_modules=["q_proj", "v_proj"], init_lora_weights="gaussian")
    model = get_peft_model(base, lora, adapter_name="agent")
    settings = dict(proposals=4, samples=2, solves=2, max_new_tokens=4, lr=1e-2)
    return GeoSelfPlay(model, tokenizer, GeoSelfPlayConfig(**{**settings, **overrides}))


def test_selfplay_training_updates_the_adapter_from_proposer_rewards(monkeypatch):
    """A proposer that is valid on every other scene gets contrast (0.5 vs 0) and the adapter moves; the solver's
    samples are the real model's, judged by execution."""
    import torch

    from rlvr_gym.algorithms.populora.adapters import read_factors

    play = _tiny_selfplay()
    real = play._generate
    candidates = [
        '["count", ["objects", "tree"]]',
        '["count", ["objects", "building"]]',
        '["count", ["objects", "road"]]',
    ]
    new = next(c for c in candidates if c not in play.buffer)  # a program the buffer does not hold yet
    proposals = iter([f"ANSWER: {new}", "I propose a nice program."] * 10)

    def scripted(prompts):
        if "Propose one NEW program" not in prompts[0]:
            return real(prompts)
        out = real(prompts)  # real prompt ids; the completion is replaced by the scripted text
        texts = [next(proposals) for _ in prompts]
        return [
            (ids, play.tokenizer(t, return_tensors="pt").input_ids[0], t)
            for (ids, _, _), t in zip(out, texts, strict=True)
        ]

    monkeypatch.setattr(play, "_generate", scripted)
    before = read_factors(play.model, "agent")
    assert all(not torch.any(b) for _, b in before.values())  # fresh adapter: delta W = 0
    samples, row = play.step(0)
    keys = [x.key for x in samples]
    assert keys.count("propose:geo") == 4 and keys.count("solve:geo") >= 2 * 2
    assert sorted({x.reward for x in samples if x.key == "propose:geo"})[0] == 0.0 and row["valid_rate"] > 0
    assert row["rejects"].get("no answer line") == 2
    [log] = play.train(1)
    assert log["updated"] and log["delta_w"] > 0
    after = read_factors(play.model, "agent")
    assert any(not torch.equal(before[n][1], after[n][1]) for n in after)
    assert new in play.buffer and len(play.buffer) == len(set(play.buffer))  # joined once (deduplicated)


def test_selfplay_without_contrast_leaves_the_adapter_alone():
    """A random network proposes nothing valid and solves nothing: every key ties, so no step is taken."""
    play = _tiny_selfplay(proposals=2, solves=1)
    [log] = play.train(1)
    assert log["valid_rate"] == 0.0 and not log["updated"] and log["delta_w"] == 0.0
    assert sum(log["rejects"].values()) == 2  # every invalid proposal is counted under why it failed


def test_held_tasks_are_fixed_eval_split_and_scored_by_the_verifier(monkeypatch):
    """Held tasks come from the generator's eval split, in the training solve format; `held_accuracy` counts what
    the verifier passes (the reference answer passes every task, prose none)."""
    from rlvr_gym.envs.geo.selfplay import held_tasks

    play = _tiny_selfplay(held=4)
    assert len(play.held) >= 3 and all("Program:" in t.prompt for t in play.held)
    assert [t.prompt for t in play.held] == [t.prompt for t in held_tasks(0, "procedural", 4)]  # seeded
    assert len({t.ground_truth["scene_seed"] for t in play.held}) == len(play.held)
    assert len(play.held_accuracy()) == len(play.held)
    for answers, expected in ((lambda t: t.reference_actions[0], True), (lambda t: "No idea.", False)):
        by_prompt = {t.prompt: answers(t) for t in play.held}
        monkeypatch.setattr(
            play, "_generate", lambda ps, greedy=False, known=by_prompt: [(None, None, known[p]) for p in ps]
        )
        assert play.held_accuracy() == [expected] * len(play.held)
