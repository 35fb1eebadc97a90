"""The verl adapter against the real verl package (run in .venv-verl by tests/integrations/test_isolated_trainers.py).

verl's own worker code path builds the loop: the agent-loop YAML we write is loaded with OmegaConf and the class is
instantiated with `hydra.utils.instantiate`, exactly as `AgentLoopWorker` does. Generation is a stub server
manager returning verl's `TokenOutput` for scripted texts (a real verl run needs a vLLM/SGLang server on a GPU);
tokenization is the real SmolLM2 tokenizer through verl's Continuous Token builder. Rows come from our parquet
through verl's `RLHFDataset`; `compute_score` is loaded by verl's own loader and run by its `naive` reward manager.
"""

from __future__ import annotations

import asyncio
import re
from pathlib import Path

import hydra
import numpy as np
import pandas as pd
import pytest
import torch
import verl
from omegaconf import OmegaConf
from transformers import AutoTokenizer
from verl import DataProto
from verl.experimental.agent_loop.agent_loop import DictConfigWrap, ToolListWrap, _agent_loop_registry
from verl.experimental.reward_loop.reward_manager.naive import NaiveRewardManager
from verl.trainer.ppo.reward import get_custom_reward_fn
from verl.utils.dataset.rl_dataset import RLHFDataset
from verl.workers.rollout.replica import TokenOutput

import rlvr_gym
import rlvr_gym.integrations.verl as verl_shim
from rlvr_gym.agents.models import smollm2_path
from rlvr_gym.integrations.episode import CompletionScorer, EnvSession
from rlvr_gym.integrations.verl import agent_loop_yaml, compute_score, dataset_rows, make_parquet

MATH = "rlvr/MathStarter-v0"
SOKOBAN = "rlvr/Sokoban-v0"
TOOLS = "rlvr/ToolDepth-v0"
pytestmark = pytest.mark.timeout(120)


@pytest.fixture(scope="module")
def tokenizer():
    return AutoTokenizer.from_pretrained(str(smollm2_path()))


def oracle(env_id: str, index: int) -> str:
    """The task's reference answer (the env's own oracle path, as the env tests read it)."""
    return rlvr_gym.make(env_id).get_task(index).reference_actions[0]


def replay(env_id: str, index: int, texts: list[str]) -> float:
    """The env's own verdict reward for these model texts, stepped directly (no verl, no tokenizer)."""
    session = EnvSession(env_id)
    session.reset(task_index=index)
    for text in texts:
        if not session.done:
            session.act(text)
    return session.reward


def verl_config(response_length: int = 256, max_turns: int | None = None, max_user_turns: int | None = None):
    config = OmegaConf.load(Path(verl.__file__).parent / "trainer" / "config" / "_generated_ppo_trainer.yaml")
    rollout = config.actor_rollout_ref.rollout
    rollout.prompt_length, rollout.response_length = 1024, response_length
    rollout.multi_turn.max_assistant_turns = max_turns
    rollout.multi_turn.max_user_turns = max_user_turns
    return config


class ScriptedServer:
    """verl's server-manager interface: scripted replies (text, or a function of the decoded prompt) with made-up
    log-probs; records each prompt and sampling params. `obey_max_tokens=False` plays a server that ignores it."""

    def __init__(self, tokenizer, replies, obey_max_tokens: bool = True):
        self.tokenizer, self.replies, self.obey = tokenizer, list(replies), obey_max_tokens
        self.prompts: list[list[int]] = []
        self.params: list[dict] = []

    async def generate(self, request_id, *, prompt_ids, sampling_params, **_):
        self.prompts.append(list(prompt_ids))
        self.params.append(dict(sampling_params))
        reply = self.replies[min(len(self.prompts) - 1, len(self.replies) - 1)]
        text = reply(self.tokenizer.decode(prompt_ids)) if callable(reply) else reply
        ids = self.tokenizer.encode(text, add_special_tokens=False) + [
            self.tokenizer.convert_tokens_to_ids("<|im_end|>")
        ]
        if self.obey and "max_tokens" in sampling_params:
            ids = ids[: sampling_params["max_tokens"]]
        return TokenOutput(
            token_ids=ids, log_probs=[-0.5] * len(ids), stop_reason="completed", extra_fields={"min_global_steps": 3}
        )


def make_loop(tokenizer, tmp_path, server, name: str = "rlvr_gym", **config_args):
    """Instantiate an agent loop the way verl's AgentLoopWorker does (ours from our YAML, verl's from its registry)."""
    if name == "rlvr_gym":
        (entry,) = OmegaConf.load(agent_loop_yaml(tmp_path / "agent_loop.yaml"))
        assert entry.name == "rlvr_gym"
    else:
        entry = _agent_loop_registry[name]
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


def run(tokenizer, tmp_path, server, row, name: str = "rlvr_gym", **config_args):
    """Build the loop inside the running event loop (verl's base class binds to it) and run one row."""

    async def main():
        return await make_loop(tokenizer, tmp_path, server, name, **config_args).run({"temperature": 1.0}, **row)

    return asyncio.run(main())


def check_shapes(out):
    assert len(out.response_ids) == len(out.response_mask) == len(out.response_logprobs)
    assert set(out.response_mask) <= {0, 1} and out.response_mask[0] == 1
    # log-probs are kept for model tokens (the stub's -0.5) and zero for env tokens
    assert all((lp == -0.5) == (m == 1) for lp, m in zip(out.response_logprobs, out.response_mask, strict=True))


def mask_runs(mask):
    return [mask[0]] + [b for a, b in zip(mask, mask[1:], strict=False) if a != b]


def test_single_turn_reward_is_the_env_verdict(tokenizer, tmp_path):
    row = dataset_rows(MATH, 3)[2]
    answer = oracle(MATH, 2)
    scorer = CompletionScorer(MATH)
    for text, expected in [(answer, 1.0), ("I think the answer is \\boxed{-12345}", 0.0)]:
        server = ScriptedServer(tokenizer, [text])
        out = run(tokenizer, tmp_path, server, row)
        check_shapes(out)
        assert out.reward_score == expected == scorer.verdict(2, text).reward
        assert out.extra_fields["rlvr_passed"] == (expected == 1.0) and not out.extra_fields["rlvr_truncated"]
        assert out.extra_fields["rlvr_components"] == dict(scorer.verdict(2, text).components)
        assert out.response_mask == [1] * len(out.response_ids)  # one model turn, no env tokens
        assert tokenizer.decode(out.response_ids, skip_special_tokens=True) == text
        assert out.prompt_ids == server.prompts[0]  # the prompt verl trains on is the one generation saw
        assert answer not in tokenizer.decode(out.prompt_ids)  # the prompt carries no answer
        assert out.num_turns == 2  # prompt + one assistant turn, as verl's own loops count
        assert server.params[0] == {"temperature": 1.0, "max_tokens": 256}  # generation capped at the budget
        assert out.extra_fields["min_global_steps"] == 3  # the server's fields are kept (fully async reads them)


def test_multi_turn_env_tokens_are_masked(tokenizer, tmp_path):
    row = dataset_rows(SOKOBAN, 1)[0]
    server = ScriptedServer(tokenizer, ["U", "L", "D"])
    out = run(tokenizer, tmp_path, server, row, max_turns=3)
    check_shapes(out)
    assert len(server.prompts) == 3 and out.extra_fields["rlvr_truncated"]
    assert out.num_turns == 6  # prompt + 3 model turns + 2 env replies
    assert mask_runs(out.response_mask) == [1, 0, 1, 0, 1]
    env_text = tokenizer.decode([t for t, m in zip(out.response_ids, out.response_mask, strict=True) if m == 0])
    assert "#" in env_text  # the env's board came back as context tokens
    # each later prompt is the earlier one plus exactly the response tokens so far (token-faithful)
    full = out.prompt_ids + out.response_ids
    assert all(full[: len(p)] == p for p in server.prompts)
    # each turn may only fill the budget left
    assert [p["max_tokens"] for p in server.params] == [256 - (len(p) - len(out.prompt_ids)) for p in server.prompts]
    assert out.reward_score == replay(SOKOBAN, 0, ["U", "L", "D"]) < 1.0  # the env's verdict for the same moves


def test_max_user_turns_limits_env_replies(tokenizer, tmp_path):
    row = dataset_rows(SOKOBAN, 1)[0]
    server = ScriptedServer(tokenizer, ["U", "L", "D", "R"])
    out = run(tokenizer, tmp_path, server, row, max_user_turns=1)
    assert len(server.prompts) == 2 and mask_runs(out.response_mask) == [1, 0, 1] and out.num_turns == 4


def test_tools_env_over_two_turns(tokenizer, tmp_path):
    """The tools family: a tool call, the tool's result as mask-0 context, then the answer read from that result."""
    row = dataset_rows(TOOLS, 1)[0]
    call = '<tool_call>\n{"name": "get_airport_code", "arguments": {"city": "Buenos Aires"}}\n</tool_call>'
    assert "Buenos Aires" in row["prompt"][-1]["content"]

    def answer(prompt: str) -> str:
        return "Answer: " + re.findall(r'"result": "([^"]+)"', prompt)[-1]

    for replies, expected in [([call, answer], 1.0), ([call, "Answer: JFK"], replay(TOOLS, 0, [call, "Answer: JFK"]))]:
        server = ScriptedServer(tokenizer, replies)
        out = run(tokenizer, tmp_path, server, row)
        check_shapes(out)
        assert len(server.prompts) == 2 and mask_runs(out.response_mask) == [1, 0, 1]
        env_text = tokenizer.decode([t for t, m in zip(out.response_ids, out.response_mask, strict=True) if m == 0])
        assert '"result": "EZE"' in env_text
        assert out.reward_score == expected and not out.extra_fields["rlvr_truncated"]
        assert out.extra_fields["rlvr_passed"] == (expected == 1.0) and out.num_turns == 4
    assert expected < 1.0  # the wrong answer is not passed (the env may give partial credit for the right call)


def test_oracle_solves_the_multi_turn_env(tokenizer, tmp_path):
    row = dataset_rows(SOKOBAN, 1)[0]
    out = run(tokenizer, tmp_path, ScriptedServer(tokenizer, [oracle(SOKOBAN, 0)]), row)
    assert out.reward_score == 1.0 and not out.extra_fields["rlvr_truncated"] and out.extra_fields["rlvr_passed"]


def test_response_budget_truncates_and_the_env_judges_only_kept_tokens(tokenizer, tmp_path):
    row = dataset_rows(MATH, 1)[0]
    long_right = "Let me think step by step. " * 8 + oracle(MATH, 0)
    assert CompletionScorer(MATH).verdict(0, long_right).reward == 1.0  # right, if the env saw all of it
    server = ScriptedServer(tokenizer, [long_right], obey_max_tokens=False)  # a server that overshoots
    out = run(tokenizer, tmp_path, server, row, response_length=16)
    assert len(out.response_ids) == 16 == server.params[0]["max_tokens"] and out.response_mask == [1] * 16
    assert out.reward_score == 0.0  # the answer lay past the budget: verl never trains on it, so it earns nothing

    sokoban = dataset_rows(SOKOBAN, 1)[0]
    server = ScriptedServer(tokenizer, ["U", "L"])
    out = run(tokenizer, tmp_path, server, sokoban, response_length=24)  # the board reply cannot fit
    assert len(server.prompts) == 1 and out.response_mask == [1] * len(out.response_ids) and len(out.response_ids) < 24
    assert out.extra_fields["rlvr_truncated"] and out.num_turns == 2


def test_forged_row_fields_do_not_change_the_reward(tokenizer, tmp_path):
    row = dataset_rows(MATH, 1)[0]
    answer = oracle(MATH, 0)
    forged = {**row, "reward_model": {"ground_truth": "\\boxed{7}"}, "reward_score": 1.0}
    forged["extra_info"] = {**row["extra_info"], "reward": 1.0, "ground_truth": "\\boxed{7}", "answer": "7"}
    out = run(tokenizer, tmp_path, ScriptedServer(tokenizer, ["\\boxed{7}"]), forged)
    expected = CompletionScorer(MATH).verdict(0, "\\boxed{7}").reward
    assert answer != "\\boxed{7}" and out.reward_score == expected == 0.0
    assert compute_score(MATH, "\\boxed{7}", "\\boxed{7}", forged["extra_info"]) == expected
    assert compute_score(MATH, answer, "\\boxed{7}", row["extra_info"]) == 1.0
    wrong_task = {**row["extra_info"], "task_id": "math/train/999999"}
    with pytest.raises(ValueError, match="row names task"):
        run(tokenizer, tmp_path, ScriptedServer(tokenizer, [answer]), {**row, "extra_info": wrong_task})


def test_parquet_through_verls_dataset_into_the_loop(tokenizer, tmp_path):
    path = make_parquet(MATH, 5, tmp_path / "train.parquet", seed=3)
    frame = pd.read_parquet(path)
    assert list(frame["agent_name"]) == ["rlvr_gym"] * 5
    assert set(frame.columns) == {"data_source", "agent_name", "prompt", "raw_prompt", "reward_model", "extra_info"}
    env = rlvr_gym.make(MATH)
    for _, row in frame.iterrows():
        info = row["extra_info"]
        task = env.get_task(int(info["task_index"]))
        assert info["task_id"] == task.id and info["env_id"] == MATH and row["reward_model"]["ground_truth"] == ""
        assert not {"ground_truth", "answer", "reward"} & set(info)
        assert task.reference_actions[0] not in str(row.to_dict())
    data_config = verl_config().data
    data_config.cache_dir = str(tmp_path / "cache")
    dataset = RLHFDataset([str(path)], tokenizer, data_config)
    assert len(dataset) == 5
    item = dataset[1]
    assert item["agent_name"] == "rlvr_gym" and item["index"] == 1 and item["raw_prompt"] == list(frame["prompt"][1])
    kwargs = {k: v for k, v in item.items() if k != "dummy_tensor"}  # what AgentLoopWorker passes to run()
    index = int(item["extra_info"]["task_index"])
    out = run(tokenizer, tmp_path, ScriptedServer(tokenizer, [oracle(MATH, index)]), kwargs)
    assert out.reward_score == 1.0


def test_compute_score_loaded_and_run_by_verl(tokenizer, tmp_path):
    """verl's custom-reward loader (package and file path forms) and its `naive` reward manager on a row that
    verl's own single_turn_agent generated."""
    answer = oracle(MATH, 0)
    info = dataset_rows(MATH, 1)[0]["extra_info"]
    scorer = CompletionScorer(MATH)
    for form in ["pkg://rlvr_gym.integrations.verl", verl_shim.__file__]:
        config = OmegaConf.create({"reward": {"custom_reward_function": {"path": form, "name": "compute_score"}}})
        fn = get_custom_reward_fn(config)
        for text in [answer, "\\boxed{-12345}", "no answer"]:
            for truth in ["", answer, text]:  # a ground truth, even the completion itself, changes nothing
                got = fn(data_source=MATH, solution_str=text, ground_truth=truth, extra_info=dict(info))
                assert got == scorer.verdict(0, text).reward

    (row,) = dataset_rows(MATH, 1, agent_name="single_turn_agent")
    assert row["agent_name"] == "single_turn_agent"
    config = verl_config()
    config.reward.custom_reward_function.path = "pkg://rlvr_gym.integrations.verl"
    config.reward.custom_reward_function.name = "compute_score"
    for text, expected in [(answer, 1.0), ("\\boxed{-12345}", 0.0)]:
        out = run(tokenizer, tmp_path, ScriptedServer(tokenizer, [text]), row, name="single_turn_agent")
        assert out.reward_score is None  # verl's loop leaves scoring to the reward manager
        responses = torch.tensor([out.response_ids])
        data = DataProto.from_dict(
            tensors={
                "prompts": torch.tensor([out.prompt_ids]),
                "responses": responses,
                "attention_mask": torch.ones(1, len(out.prompt_ids) + len(out.response_ids), dtype=torch.long),
            },
            non_tensors={k: np.array([row[k]], dtype=object) for k in ["data_source", "reward_model", "extra_info"]},
        )

        async def score(data=data):
            manager = NaiveRewardManager(config, tokenizer, get_custom_reward_fn(config))
            return await manager.run_single(data)

        result = asyncio.run(score())
        assert result["reward_score"] == expected == scorer.verdict(0, text).reward


def test_sessions_are_reused_reset_and_dropped_on_failure(tokenizer, tmp_path):
    from rlvr_gym.integrations import verl_loop

    row = dataset_rows(SOKOBAN, 1)[0]
    verl_loop._close_idle()
    assert run(tokenizer, tmp_path, ScriptedServer(tokenizer, [oracle(SOKOBAN, 0)]), row).reward_score == 1.0
    ((key, pool),) = verl_loop._idle.items()
    (first,) = pool
    assert first.done  # the finished episode's session waits for the next rollout
    out = run(tokenizer, tmp_path, ScriptedServer(tokenizer, ["U"]), row, max_turns=1)
    assert verl_loop._idle[key] == [first] and out.reward_score == replay(SOKOBAN, 0, ["U"]) < 1.0  # reset, reused
    forged = {**row, "extra_info": {**row["extra_info"], "task_id": "sokoban/nope"}}
    with pytest.raises(ValueError, match="row names task"):
        run(tokenizer, tmp_path, ScriptedServer(tokenizer, ["U"]), forged)
    assert verl_loop._idle[key] == []  # a session that failed is closed, not pooled
