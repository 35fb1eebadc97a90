"""SRaR: step-level advantages by hand from fixed judge JSON, the step-span parser, and a judged trainer step on the
tiny Llama whose update pushes a pitfall step down inside a correct answer."""

from __future__ import annotations

import copy
import json

import numpy as np
import pytest
import torch

from rlvr_gym.algorithms.advantages import AdvantageInput
from rlvr_gym.algorithms.srar import (
    format_ok,
    parse_judge_reply,
    parse_rubric,
    srar_advantages,
    step_deltas,
    step_spans,
    token_steps,
)
from rlvr_gym.types import Episode, Message, Turn, Verdict

RUBRIC = """Rubric for 2x = 4
<SUGGEST> names the unknown
<SUGGEST> checks the result
<PITFALL> divides by zero
<BONUS> states the domain
<ANSWER> x = 2"""
# judge replies per rollout (items 1-based: S1, S2, P1, B1, A1)
JUDGED = [
    [
        {"item": 1, "satisfied": True, "step": 1},
        {"item": 2, "satisfied": True, "step": 2},
        {"item": 4, "satisfied": True, "step": 0},
        {"item": 5, "satisfied": True, "step": 2},
    ],
    [{"item": 1, "satisfied": True, "step": 1}, {"item": 3, "satisfied": True, "step": 2}],
    [{"item": 3, "satisfied": True, "step": 1}, {"item": 2, "satisfied": True, "step": -1}],
]


def test_deltas_and_token_advantages_hand_values():
    """Rubric: 2 SUGGEST (0.8/2 = 0.4 each), 1 PITFALL (-1.0), 1 BONUS (+1.0), 1 ANSWER (ignored).
    d: rollout 1 {1: 0.4, 2: 0.4, 0: 1.0} (ANSWER in step 2 ignored); rollout 2 {1: 0.4, 2: -1.0};
    rollout 3 {1: -1.0} (S2 satisfied at step -1 = nowhere: no entry).
    r_base = 0.9 acc + 0.1 format = [1.0, 1.0, 0.1] (3rd wrong): mean 0.7, unbiased std sqrt(0.27) = 0.519615,
    base z = [0.57735, 0.57735, -1.15470].
    z_0: one entry -> 0. z_1 over [0.4, 0.4, -1.0]: mean -0.066667, std 0.808290 -> [0.57735, 0.57735, -1.15470].
    z_2 over rollouts 1, 2 only [0.4, -1.0]: mean -0.3, std 0.989949 -> [0.707107, -0.707107].
    Tokens (steps -1, 1, 2): rollout 1 [0.57735, 1.15470, 1.28446]; rollout 2 [0.57735, 1.15470, -0.12976]
    (the pitfall step of a correct answer goes negative); rollout 3 [-1.15470, -2.30940, -1.15470] (its step 2 has
    no entry)."""
    items = parse_rubric(RUBRIC)
    assert [it.kind for it in items] == ["SUGGEST", "SUGGEST", "PITFALL", "BONUS", "ANSWER"]
    deltas = [step_deltas(items, parse_judge_reply("verdict: " + json.dumps(j), len(items))) for j in JUDGED]
    assert deltas == [{1: 0.4, 2: 0.4, 0: 1.0}, {1: 0.4, 2: -1.0}, {1: -1.0}]
    inp = AdvantageInput.from_rewards([[1.0, 1.0, 0.1]])
    steps = [np.array([-1, 1, 2])] * 3
    base, tokens = srar_advantages(inp, deltas, steps)
    np.testing.assert_allclose(base, [0.57735, 0.57735, -1.15470], atol=1e-5)
    np.testing.assert_allclose(tokens[0], [0.57735, 1.15470, 1.28446], atol=1e-5)
    np.testing.assert_allclose(tokens[1], [0.57735, 1.15470, -0.12976], atol=1e-5)
    np.testing.assert_allclose(tokens[2], [-1.15470, -2.30940, -1.15470], atol=1e-5)


def test_rar_baseline_and_degenerate_steps():
    """RaR: GRPO on r_base + sum d = [1 + 1.8, 1 - 0.6, 0.1 - 1.0] = [2.8, 0.4, -0.9]: mean 0.766667, unbiased std
    1.877054 -> [1.083257, -0.195341, -0.887916] on every token. Equal d_k (no spread) gives z_k = 0."""
    inp = AdvantageInput.from_rewards([[1.0, 1.0, 0.1]])
    deltas = [{1: 0.4, 2: 0.4, 0: 1.0}, {1: 0.4, 2: -1.0}, {1: -1.0}]
    base, tokens = srar_advantages(inp, deltas, [np.array([1, 2])] * 3, mode="rar")
    np.testing.assert_allclose(base, [1.083257, -0.195341, -0.887916], atol=1e-5)
    assert all(np.all(t == b) for t, b in zip(tokens, base, strict=True))
    _, flat = srar_advantages(AdvantageInput.from_rewards([[1.0, 0.0]]), [{1: 0.4}, {1: 0.4}], [np.array([1])] * 2)
    np.testing.assert_allclose([flat[0][0], flat[1][0]], [0.707106, -0.707106], atol=1e-5)


def test_step_span_parser_and_token_mapping():
    """Headers at characters 6 and 25 of a 46-character text: spans (1, 6, 25), (2, 25, 46). Tokens of lengths
    [6, 10, 9, 21] start at 0, 6, 16, 25: steps [-1, 1, 1, 2]. A missing item / bad JSON reads as unsatisfied."""
    text = "Well.\n### Step 1: x = 2.\n### Step 2: \\boxed{2}"
    assert step_spans(text) == [(1, 6, 25), (2, 25, 46)]
    assert list(token_steps([6, 10, 9, 21], step_spans(text))) == [-1, 1, 1, 2]
    assert format_ok(text) and not format_ok("Step 1: \\boxed{2}") and not format_ok("### Step 1: 2")
    assert parse_judge_reply("no json", 2) == [{"satisfied": False, "step": -1}] * 2


class FixedJudge:
    """Answers with JUDGED[k] for the rollout whose text holds marker k ("(r0)", "(r1)", "(r2)")."""

    def __init__(self, **sampling: object) -> None:
        pass

    def __call__(self, prompt: str) -> str:
        k = next(k for k in range(3) if f"(r{k})" in prompt.split("Solution:", 1)[1].split("Rubric:", 1)[0])
        return json.dumps(JUDGED[k])


REPLIES = [
    "(r0)\n### Step 1: Let x be the unknown.\n### Step 2: Check 2*2 = 4, so \\boxed{2}",
    "(r1)\n### Step 1: Let x be the unknown.\n### Step 2: Divide 4 by 0 and fix it: \\boxed{2}",
    "(r2)\n### Step 1: Divide by zero first.\n### Step 2: So \\boxed{7}",
]


def _episodes(tok):
    prompt = tok("Solve 2x = 4.").input_ids
    return [
        Episode(
            episode_id=f"e{i}",
            env_id="x",
            task_id="t",
            group_id="g",
            turns=[
                Turn(
                    index=0,
                    observation=[Message(role="user", content="Solve 2x = 4.")],
                    action=r,
                    prompt_token_ids=prompt,
                    token_ids=tok(r).input_ids,
                )
            ],
            verdict=Verdict(reward=float(i < 2), passed=i < 2),
            task_metadata={"rubric": RUBRIC},
        )
        for i, r in enumerate(REPLIES)
    ]


def _config(env_id, tmp_path, **over):
    from rlvr_gym.algorithms.train_config import load_config

    return load_config(
        {
            "run_dir": str(tmp_path),
            "tensorboard": False,
            "progress": False,
            "model": {"lora": {"r": 4, "alpha": 8}, "threads": 1, "bf16_autocast": False},
            "rollout": {"env": env_id, "prompts_per_step": 1, "group_size": 3},
            "algorithm": {"name": "srar", "judge": "py:tests.algorithms.test_srar:FixedJudge"},
            "optim": {"lr": 1e-2},
            "loss": {"log_kl": False},
            **over,
        }
    )


def test_config_loads_and_refuses_an_estimator_it_would_ignore(length_env_id, tmp_path):
    assert _config(length_env_id, tmp_path).algorithm.name == "srar"
    with pytest.raises(ValueError, match="computes its own advantages"):
        _config(length_env_id, tmp_path, estimator="rloo")
    with pytest.raises(ValueError, match="judge"):
        _config(length_env_id, tmp_path, algorithm={"name": "srar"})


def test_trainer_step_pushes_the_pitfall_step_down(length_env_id, tiny_model, tokenizer, tmp_path):
    """Mechanism: `SrarTrainer` judges the three replies (FixedJudge = JUDGED), maps steps onto SmolLM2 tokens and
    gives rollout 2 (correct) a positive step 1 and a negative step 2 (its pitfall), as in the hand test. One
    optimizer step on the tiny Llama + LoRA (lr 1e-2) then moves that reply's step-1 tokens up relative to its
    step-2 tokens, more than the same step with GRPO on r_base (every token of that reply at +0.577) does from the
    same weights. Measured (seed 0): SRaR step 1 +0.081, step 2 +0.019 (gap 0.063); GRPO: +0.069, +0.052 (gap 0.017)."""
    from rlvr_gym.algorithms.advantages.base import AdvantageOutput
    from rlvr_gym.algorithms.batch import build_rows, collate
    from rlvr_gym.algorithms.modeling import token_logprobs
    from rlvr_gym.algorithms.srar import SrarTrainer

    twin = copy.deepcopy(tiny_model)
    trainer = SrarTrainer(_config(length_env_id, tmp_path), model=tiny_model, tokenizer=tokenizer)
    eps = _episodes(tokenizer)
    adv = trainer.advantages(eps)
    steps = trainer.turn_steps(eps[1].turns[0].token_ids)
    tok1 = adv.token[1][0]
    np.testing.assert_allclose(tok1[steps == 1], 1.15470, atol=1e-4)
    np.testing.assert_allclose(tok1[steps == 2], -0.12976, atol=1e-4)
    np.testing.assert_allclose(tok1[steps == -1], 0.57735, atol=1e-4)
    rows = build_rows(eps[1:2], AdvantageOutput(episode=np.ones(1)), skip_zero_advantage=False)

    def step_logp(model) -> np.ndarray:
        with torch.no_grad():
            batch = collate(rows)
            lp = token_logprobs(model, batch, autocast=False)[0][0][batch.mask[0] > 0].numpy()
            return np.array([lp[steps == 1].mean(), lp[steps == 2].mean()])

    def gap(t, a) -> float:
        before = step_logp(t.model)
        t.update(eps, a)
        shift = step_logp(t.model) - before
        return float(shift[0] - shift[1])

    srar_gap = gap(trainer, adv)
    grpo = SrarTrainer(_config(length_env_id, tmp_path / "grpo"), model=twin, tokenizer=tokenizer)
    grpo_gap = gap(grpo, AdvantageOutput(episode=adv.episode))
    assert srar_gap > grpo_gap


def test_train_step_runs_without_a_rubric(length_env_id, tiny_model, tokenizer, tmp_path):
    """A whole `train_step` through `SrarTrainer` (LengthEnv tasks carry no rubric: no judge call, d = {} and the
    advantages are GRPO on r_base); the step's record carries SRaR's metrics."""
    cfg = _config(
        length_env_id,
        tmp_path,
        rollout={"env": length_env_id, "prompts_per_step": 1, "group_size": 2, "max_new_tokens": 4},
        eval={"num_tasks": 1, "every": 100, "max_new_tokens": 2},
    )
    from rlvr_gym.algorithms.srar import SrarTrainer

    record = SrarTrainer(cfg, model=tiny_model, tokenizer=tokenizer).train_step()
    assert record["adv/srar_steps_judged"] == 0.0 and "acr" in record


def test_agent_spec_judge(length_env_id, tiny_model, tokenizer, tmp_path):
    """The judge named by agent spec (`constant:<JSON>`: one fixed reply) goes through the chat agent path:
    rollout 2's reply (S1 at step 1, P1 at step 2) gives d = {1: 0.4, 2: -1.0}."""
    from rlvr_gym.algorithms.srar import SrarTrainer

    spec = "constant:" + json.dumps(JUDGED[1])
    cfg = _config(length_env_id, tmp_path, algorithm={"name": "srar", "judge": spec})
    trainer = SrarTrainer(cfg, model=tiny_model, tokenizer=tokenizer)
    assert trainer.judge_episode(_episodes(tokenizer)[0]) == {1: 0.4, 2: -1.0}
