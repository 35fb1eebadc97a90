"""The verl adapter against the real verl package (run in .venv-verl by tests/integrations/test_verl_isolated.py).

verl's own worker code path builds the loop: the agent-loop YAML we write is loaded with OmegaConf and the class is
instantiated with `hydra.utils.instantiate`, exactly as `AgentLoopWorker` does. Generation is a stub server
manager returning verl's `TokenOutput` for scripted texts (a real verl run needs a vLLM/SGLang server on a GPU);
tokenization is the real SmolLM2 tokenizer through verl's Continuous Token builder.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import hydra
import pandas as pd
import pytest
import verl
from omegaconf import OmegaConf
from transformers import AutoTokenizer
from verl.experimental.agent_loop.agent_loop import DictConfigWrap, ToolListWrap
from verl.workers.rollout.replica import TokenOutput

import rlvr_gym
from rlvr_gym.agents.models import smollm2_path
from rlvr_gym.integrations.episode import CompletionScorer
from rlvr_gym.integrations.verl import agent_loop_yaml, compute_score, dataset_rows, make_parquet

MATH = "rlvr/MathStarter-v0"
SOKOBAN = "rlvr/Sokoban-v0"


@pytest.fixture(scope="module")
def tokenizer():
    return AutoTokenizer.from_pretrained(str(smollm2_path()))


def verl_config(response_length: int = 256, max_turns: int | None = None):
    config = OmegaConf.load(Path(verl.__file__).parent / "trainer" / "config" / "_generated_ppo_trainer.yaml")
    rollout = config.actor_rollout_ref.rollout
    rollout.prompt_length, rollout.response_length = 1024, response_length
    rollout.multi_turn.max_assistant_turns = max_turns
    return config


class ScriptedServer:
    """verl's server-manager interface; replies with scripted texts and made-up log-probs, recording prompts."""

    def __init__(self, tokenizer, replies):
        self.tokenizer, self.replies, self.prompts = tokenizer, list(replies), []

    async def generate(self, request_id, *, prompt_ids, sampling_params, **_):
        self.prompts.append(list(prompt_ids))
        text = self.replies[min(len(self.prompts) - 1, len(self.replies) - 1)]
        ids = self.tokenizer.encode(text, add_special_tokens=False) + [self.tokenizer.convert_tokens_to_ids("<|im_end|>")]
        return TokenOutput(token_ids=ids, log_probs=[-0.5] * len(ids), stop_reason="completed")


def make_loop(tokenizer, tmp_path, server, **config_args):
    """Load our agent-loop YAML and instantiate it the way verl's AgentLoopWorker does."""
    (entry,) = OmegaConf.load(agent_loop_yaml(tmp_path / "agent_loop.yaml"))
    assert entry.name == "rlvr_gym"
    config = verl_config(**config_args)
    return hydra.utils.instantiate(
        config=entry,
        trainer_config=DictConfigWrap(config=config),
        server_manager=server,
        tokenizer=tokenizer,
        processor=None,
        hf_model_type="llama",
        dataset_cls=None,
        data_config=DictConfigWrap(config.data),
        tools=ToolListWrap([]),
    )


def run(tokenizer, tmp_path, server, row, **config_args):
    """Build the loop inside the running event loop (verl's base class binds to it) and run one row."""

    async def main():
        return await make_loop(tokenizer, tmp_path, server, **config_args).run({}, **row)

    return asyncio.run(main())


def check_shapes(out):
    assert len(out.response_ids) == len(out.response_mask) == len(out.response_logprobs)
    assert set(out.response_mask) <= {0, 1} and out.response_mask[0] == 1


def test_single_turn_reward_is_the_env_verdict(tokenizer, tmp_path):
    row = dataset_rows(MATH, 3)[2]
    oracle = rlvr_gym.make(MATH).get_task(2).reference_actions[0]
    scorer = CompletionScorer(MATH)
    for text, expected in [(oracle, 1.0), ("I think the answer is \\boxed{-12345}", 0.0)]:
        server = ScriptedServer(tokenizer, [text])
        out = run(tokenizer, tmp_path, server, row)
        check_shapes(out)
        assert out.reward_score == expected == scorer.verdict(2, text).reward
        assert out.response_mask == [1] * len(out.response_ids)  # one model turn, no env tokens
        assert tokenizer.decode(out.response_ids, skip_special_tokens=True) == text
        assert out.prompt_ids == server.prompts[0]  # the prompt verl trains on is the one generation saw
        assert oracle not in tokenizer.decode(out.prompt_ids)  # the prompt carries no answer


def test_multi_turn_env_tokens_are_masked(tokenizer, tmp_path):
    row = dataset_rows(SOKOBAN, 1)[0]
    server = ScriptedServer(tokenizer, ["U", "L", "D"])
    out = run(tokenizer, tmp_path, server, row, max_turns=3)
    check_shapes(out)
    assert len(server.prompts) == 3 and out.extra_fields["rlvr_truncated"]
    # model segments (1) and env segments (0) alternate: 1..1 0..0 1..1 0..0 1..1
    mask = out.response_mask
    runs = [mask[0]] + [b for a, b in zip(mask, mask[1:], strict=False) if a != b]
    assert runs == [1, 0, 1, 0, 1]
    env_text = tokenizer.decode([t for t, m in zip(out.response_ids, mask, strict=True) if m == 0])
    assert "#" in env_text  # the env's board came back as context tokens
    # each later prompt is the earlier one plus exactly the response tokens so far (token-faithful)
    full = out.prompt_ids + out.response_ids
    assert all(full[: len(p)] == p for p in server.prompts)
    assert out.reward_score is not None and out.reward_score < 1.0


def test_oracle_solves_the_multi_turn_env(tokenizer, tmp_path):
    row = dataset_rows(SOKOBAN, 1)[0]
    moves = rlvr_gym.make(SOKOBAN).get_task(0).reference_actions[0]
    out = run(tokenizer, tmp_path, ScriptedServer(tokenizer, [moves]), row)
    assert out.reward_score == 1.0 and not out.extra_fields["rlvr_truncated"] and out.extra_fields["rlvr_passed"]


def test_response_budget_truncates(tokenizer, tmp_path):
    row = dataset_rows(SOKOBAN, 1)[0]
    server = ScriptedServer(tokenizer, ["U U U U U U U U U U U U U U U U U U U U U U U U"])
    out = run(tokenizer, tmp_path, server, row, response_length=16)
    assert len(out.response_ids) <= 16 and len(server.prompts) == 1
    assert out.extra_fields["rlvr_truncated"] or out.reward_score is not None


def test_forged_row_fields_do_not_change_the_reward(tokenizer, tmp_path):
    row = dataset_rows(MATH, 1)[0]
    oracle = rlvr_gym.make(MATH).get_task(0).reference_actions[0]
    forged = {**row, "reward_model": {"ground_truth": "\\boxed{7}"}, "reward_score": 1.0}
    forged["extra_info"] = {**row["extra_info"], "reward": 1.0, "ground_truth": "\\boxed{7}", "answer": "7"}
    out = run(tokenizer, tmp_path, ScriptedServer(tokenizer, ["\\boxed{7}"]), forged)
    expected = CompletionScorer(MATH).verdict(0, "\\boxed{7}").reward
    assert out.reward_score == expected
    assert compute_score(MATH, "\\boxed{7}", "\\boxed{7}", forged["extra_info"]) == expected
    assert compute_score(MATH, oracle, "\\boxed{7}", row["extra_info"]) == 1.0
    wrong_task = {**row["extra_info"], "task_id": "math/train/999999"}
    with pytest.raises(ValueError, match="row names task"):
        run(tokenizer, tmp_path, ScriptedServer(tokenizer, [oracle]), {**row, "extra_info": wrong_task})


def test_parquet_rows_have_no_answers(tmp_path):
    path = make_parquet(MATH, 5, tmp_path / "train.parquet", seed=3)
    frame = pd.read_parquet(path)
    assert list(frame["agent_name"]) == ["rlvr_gym"] * 5
    assert set(frame.columns) == {"data_source", "agent_name", "prompt", "raw_prompt", "extra_info"}
    env = rlvr_gym.make(MATH)
    for _, row in frame.iterrows():
        info = row["extra_info"]
        task = env.get_task(int(info["task_index"]))
        assert info["task_id"] == task.id and info["env_id"] == MATH
        assert not {"ground_truth", "answer", "reward"} & set(info)
        assert task.reference_actions[0] not in str(row["prompt"])
