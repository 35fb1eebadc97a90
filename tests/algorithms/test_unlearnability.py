"""Unlearnability analysis: the partition of a synthetic pass@1 table by hand, and the gradient probe's cosine on
SmolLM2 + LoRA."""

from __future__ import annotations

import json

import pytest
import torch

from rlvr_gym.algorithms.unlearnability import cosine_matrix, main, partition, prompt_gradient

INITIAL = {"a": 0.5, "b": 0.0, "c": 0.05, "d": 0.1, "e": 0.0, "f": 0.0}
FINAL = [
    {"a": 0.05, "b": 0.0, "c": 0.3, "d": 0.05, "e": 0.4, "f": 0.2},
    {"a": 0.6, "b": 0.1, "c": 0.2, "d": 0.0, "e": 0.05, "f": 0.0},
]
REWARDS = [{"b": [0.0, 0.0], "d": [0.0, 0.1]}, {"b": [0.0, 0.2], "d": [0.1]}]


def test_partition_hand_values():
    """tau 0.1. a: initial 0.5 > tau -> easy (even though run 1 drops it to 0.05). b: logged reward all 0 in run 1
    -> no_reward (not unlearnable). c: 0.05 -> 0.3 and 0.2, both > tau -> learnable. d: initial 0.1 (<= tau), final
    0.05 and 0.0, rewarded in both runs -> unlearnable. e: 0.4 in run 1, 0.05 in run 2 -> mixed. f: 0.2, then 0.0
    -> mixed."""
    got = partition(INITIAL, FINAL, REWARDS)
    assert got == {
        "easy": {"a"},
        "no_reward": {"b"},
        "unlearnable": {"d"},
        "learnable": {"c"},
        "mixed": {"e", "f"},
    }


def test_cli_prints_the_classes(tmp_path, capsys):
    paths = {}
    for name, data in {"p0": INITIAL, "r1": FINAL[0], "r2": FINAL[1], "h1": REWARDS[0], "h2": REWARDS[1]}.items():
        paths[name] = tmp_path / f"{name}.json"
        paths[name].write_text(json.dumps(data))
    argv = ["--initial", str(paths["p0"]), "--final", str(paths["r1"]), str(paths["r2"])]
    assert main([*argv, "--rewards", str(paths["h1"]), str(paths["h2"])]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["unlearnable"] == {"count": 1, "ids": ["d"]}


def test_gradient_cosine_on_smollm2():
    """SmolLM2-135M + LoRA (r 16, alpha 32 as the source, with B noised so the LoRA A weights get a gradient): a
    prompt's gradient has cosine 1 with itself; an arithmetic and a fruit prompt give a cosine below 1 (measured 0.211);
    only non-mlp LoRA weights are probed; g = -r mean_t grad logp_t (exp(lp - sg lp) has lp's gradient)."""
    from rlvr_gym.algorithms.modeling import apply_lora, load_model
    from rlvr_gym.algorithms.unlearnability import probe_params

    model, tok = load_model(None)
    model = apply_lora(model, r=16, alpha=32, dropout=0.0, target_modules=["q_proj", "v_proj", "up_proj"])
    torch.manual_seed(0)
    for name, p in model.named_parameters():
        if "lora_B" in name:
            p.data.normal_(0, 0.01)
    assert probe_params(model) and not any("mlp" in n for n in probe_params(model))

    def rollout(q: str, a: str):
        chat = [{"role": "user", "content": q}]
        prompt = list(tok.apply_chat_template(chat, add_generation_prompt=True, tokenize=True)["input_ids"])
        return prompt, tok(a).input_ids, 1.0

    g1 = prompt_gradient(model, [rollout("What is 7 + 5?", "The answer is 12.")])
    g2 = prompt_gradient(model, [rollout("Name a red fruit.", "An apple is red.")])
    cos = cosine_matrix({"add": g1, "fruit": g2})
    assert cos["add"]["add"] == pytest.approx(1.0, abs=1e-9) and cos["add"]["fruit"] < 0.99
    assert g1.abs().max() <= 1.0 and g1.abs().max() > 0
