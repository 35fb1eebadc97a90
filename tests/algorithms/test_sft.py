"""`rlvr-gym export-sft` / `sft` (ReBel's cold start, docs/alfworld.md) and the reply budget a ReBel config must hold.

Default suite: export on two easy ALFWorld games, loss on reply tokens only, the held-out NLL falls after a few seeded
steps (a tiny random Llama: the mechanism), resume = uninterrupted, and the load-time budget check. Heavy: the
embedded SmolLM2's greedy belief parse rate on held-out games rises above its pre-SFT rate.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

pytest.importorskip("alfworld")

ROOT = Path(__file__).resolve().parents[2]
SFT_CONFIG = ROOT / "configs" / "rebel-alfworld-sft.yaml"
RL_CONFIGS = sorted((ROOT / "configs").glob("rebel-alfworld-easy-*.yaml"))


@pytest.fixture(scope="module")
def data(tmp_path_factory) -> dict:
    """Expert examples of 2 train games and 1 held-out game, exported as the shipped SFT config would."""
    from rlvr_gym.algorithms.sft import export_from_config, load_sft_config

    out = tmp_path_factory.mktemp("sft-data")
    cfg = load_sft_config(
        SFT_CONFIG,
        [
            f"data.path={out / 'train.jsonl'}",
            f"data.eval_path={out / 'eval.jsonl'}",
            "data.num_tasks=2",
            "data.eval_num_tasks=1",
            f"data.env_kwargs.cache_dir={out / 'games'}",
        ],
    )
    counts = export_from_config(cfg)
    return {"cfg": cfg, "counts": counts}


def small_cfg(data: dict, run_dir: Path, **updates):
    """The shipped SFT config, shrunk to a few CPU-seconds a step (tiny model, no LoRA, short rows)."""
    from rlvr_gym.algorithms.sft import load_sft_config

    cfg = data["cfg"].model_dump(mode="json")
    cfg.update(
        run_dir=str(run_dir),
        batch_size=2,
        epochs=1.0,
        max_seq_len=320,
        checkpoint_every=1,
        eval={"every": 100, "num_examples": 0},
        optim={"lr": 3e-3, "grad_clip": 1.0},
    )
    cfg["model"].update(lora=None, threads=1)
    cfg.update(updates)
    return load_sft_config(cfg)


def test_export_writes_well_formed_winning_expert_replies(data):
    from rlvr_gym.algorithms.sft import read_examples
    from rlvr_gym.envs.alfworld.belief import parse_output

    train, held = data["counts"]
    assert train["tasks"] == 2 and train["examples"] >= 8 and train["context"] == "current"
    examples = read_examples(Path(train["path"]))
    for ex in examples:
        parsed = parse_output(ex["reply"])
        assert parsed.format_ok and parsed.belief is not None
        assert [m["role"] for m in ex["messages"]] == ["user"]  # ReBel context: this turn's message only
    assert examples[-1]["task_index"] == 1 and held["examples"] >= 3


def test_loss_mask_covers_the_reply_and_end_of_turn_only(data, tokenizer):
    from rlvr_gym.algorithms.sft import example_row, read_examples

    example = read_examples(data["cfg"].data.path)[0]
    row = example_row(tokenizer, example, max_len=320)
    reply = tokenizer.decode([t for t, m in zip(row.input_ids, row.loss_mask, strict=True) if m])
    assert reply.startswith(example["reply"]) and reply[len(example["reply"]) :].strip() == "<|im_end|>"
    assert len(row.input_ids) <= 320 and not row.loss_mask[0]  # the prompt is cut from the left, never the reply


def test_a_few_steps_lower_the_held_out_nll(data, tokenizer, tiny_model, tmp_path):
    from rlvr_gym.algorithms.sft import SFTTrainer

    trainer = SFTTrainer(small_cfg(data, tmp_path / "run", epochs=3.0), model=tiny_model, tokenizer=tokenizer)
    before = trainer.evaluate()["eval/nll"]
    result = trainer.run(resume=False)
    assert result["step"] == trainer.total_steps >= 6
    assert result["eval/nll"] < before - 0.5


def test_resume_matches_an_uninterrupted_run(data, tokenizer, tmp_path):
    from rlvr_gym.algorithms.sft import SFTTrainer

    def fresh_model():
        from transformers import LlamaConfig, LlamaForCausalLM

        torch.manual_seed(0)
        config = LlamaConfig(
            vocab_size=len(tokenizer),
            hidden_size=32,
            intermediate_size=64,
            num_hidden_layers=1,
            num_attention_heads=2,
            num_key_value_heads=1,
            tie_word_embeddings=True,
        )
        return LlamaForCausalLM(config)

    whole = SFTTrainer(small_cfg(data, tmp_path / "whole"), model=fresh_model(), tokenizer=tokenizer)
    whole.run(resume=False)
    cut = small_cfg(data, tmp_path / "cut")
    SFTTrainer(cut, model=fresh_model(), tokenizer=tokenizer).run(resume=False)
    # drop the last checkpoint: the next run resumes from the one before
    from rlvr_gym.algorithms.checkpoint import latest_checkpoint

    latest = latest_checkpoint(tmp_path / "cut")
    for f in latest.iterdir():
        f.unlink()
    latest.rmdir()
    resumed = SFTTrainer(cut, model=fresh_model(), tokenizer=tokenizer)
    resumed.run(resume=True)
    assert resumed.step == whole.step
    for (name, a), b in zip(whole.model.named_parameters(), resumed.model.parameters(), strict=True):
        assert torch.allclose(a, b, atol=1e-6), name


def test_a_budget_that_cannot_hold_a_belief_reply_is_rejected_at_load():
    from rlvr_gym.algorithms.train_config import load_config

    for path in RL_CONFIGS:  # the shipped ones hold it
        cfg = load_config(path)
        assert cfg.rollout.sampling.max_new_tokens >= 200 and cfg.rollout.context == "current"
    with pytest.raises(ValueError, match=r"rollout.sampling.max_new_tokens = 48 cannot hold one well-formed reply"):
        load_config(RL_CONFIGS[0], ["rollout.sampling.max_new_tokens=48"])
    plain = load_config(RL_CONFIGS[0], ["rollout.sampling.max_new_tokens=48", "rollout.env_kwargs.prompt_style=plain"])
    assert plain.rollout.context == "history"  # the plain format has no minimum: any budget loads


@pytest.mark.heavy
def test_sft_raises_the_embedded_models_held_out_belief_parse_rate(data, tmp_path):
    """The real cold start in small: SmolLM2-135M + LoRA, seeded steps on 2 games' expert turns; greedy replies to
    held-out prompts parse as beliefs more often than before."""
    from rlvr_gym.algorithms.metrics import read_metrics
    from rlvr_gym.algorithms.sft import SFTTrainer

    cfg = small_cfg(
        data,
        tmp_path / "run",
        epochs=8.0,
        batch_size=4,
        max_seq_len=768,
        eval={"every": 100, "num_examples": 2, "max_new_tokens": 224},
        optim={"lr": 3e-3, "grad_clip": 1.0, "warmup_steps": 2},
    )
    cfg.model.lora = type(data["cfg"].model.lora)(r=16, alpha=32)
    after = SFTTrainer(cfg).run(resume=False)["eval/well_formed_rate"]
    before = read_metrics(cfg.run_dir / "metrics.jsonl")[0]["eval/well_formed_rate"]  # step 0: before training
    assert after > before


def test_rl_starts_from_the_sft_weights_and_logs_belief_metrics(data, tokenizer, tiny_model, tmp_path):
    """`model.init_adapter` loads an SFT run's weights; a ReBel step then trains on per-turn rows (current-turn
    context) and logs the belief metrics."""
    import copy

    from rlvr_gym.algorithms.sft import SFTTrainer
    from rlvr_gym.algorithms.train_config import load_config
    from rlvr_gym.algorithms.trainer import Trainer

    base = copy.deepcopy(tiny_model)
    sft = SFTTrainer(small_cfg(data, tmp_path / "sft", epochs=0.5), model=tiny_model, tokenizer=tokenizer)
    sft.run(resume=False)
    overrides = [
        f"run_dir={tmp_path / 'rl'}",
        f"model.init_adapter={tmp_path / 'sft'}",
        "model.lora=null",
        "steps=1",
        "rollout.prompts_per_step=1",
        "rollout.group_size=2",
        "rollout.sampling.max_new_tokens=69",
        f"rollout.env_kwargs.cache_dir={data['cfg'].data.env_kwargs['cache_dir']}",
        "eval.num_tasks=0",
    ]
    cfg = load_config(RL_CONFIGS[-1], overrides)
    assert cfg.estimator == "rebel"
    trainer = Trainer(cfg, model=base, tokenizer=tokenizer)
    for a, b in zip(trainer.model.parameters(), sft.model.parameters(), strict=True):
        assert torch.equal(a, b)
    record = trainer.train_step()
    assert record["belief/steps"] >= 2 and 0.0 <= record["belief/parse_rate"] <= 1.0
    assert record["update/rows"] == record["belief/steps"]  # one row per turn: no replayed history
