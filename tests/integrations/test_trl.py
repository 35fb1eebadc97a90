"""TRL adapter: the generated environment classes as TRL inspects them (one per tool set where tasks offer different
tools), its own parser driving our tools, the rollout's final reply judged by the env as its prompt asks, reward
functions on our verifiers, and one real GRPOTrainer step on CPU with the embedded SmolLM2."""

from __future__ import annotations

import inspect
import os

import pytest

import rlvr_gym
from rlvr_gym import EnvUnavailable
from rlvr_gym.integrations.episode import ToolArgumentError

trl = pytest.importorskip("trl")
pytest.importorskip("datasets")
from transformers.utils import get_json_schema  # noqa: E402

from rlvr_gym.integrations.trl import (  # noqa: E402
    RlvrTrlEnv,
    environment_factory,
    make_dataset,
    make_reward_func,
    reward_from_env,
    tool_calling_tokenizer,
)

TYPE_NAMES = {str: "string", int: "integer", float: "number", bool: "boolean", list: "array", dict: "object"}


def trl_tools(instance: object) -> dict:
    """The tool methods exactly as GRPOTrainer collects them (grpo_trainer.py: getmembers on the class)."""
    return {
        name: getattr(instance, name)
        for name, _ in inspect.getmembers(type(instance), inspect.isfunction)
        if name not in ("reset", "get_reward") and not name.startswith("_")
    }


@pytest.mark.parametrize("env_id", [info.id for info in rlvr_gym.list_envs()])
def test_every_tool_schema_as_trl_derives_it(env_id):
    try:
        cls = environment_factory(env_id)
    except EnvUnavailable as exc:
        pytest.skip(str(exc))
    instance = cls()
    tools = trl_tools(instance)
    assert sorted(tools) == sorted(t.name for t in cls.action_tools) and tools
    for spec in cls.action_tools:
        schema = get_json_schema(tools[spec.name])["function"]  # raises on a missing hint or Args entry
        assert schema["name"] == spec.name and schema["description"] == spec.description
        props = schema["parameters"]["properties"]
        assert list(props) == [p.name for p in spec.params]
        for p in spec.params:
            assert TYPE_NAMES[p.type] in str(props[p.name]["type"]) and props[p.name]["description"] == p.description
        assert schema["parameters"].get("required", []) == [p.name for p in spec.params if p.required]


def test_reset_and_reward_follow_trl_contract():
    cls = environment_factory("rlvr/MathArithmetic-v0")
    assert inspect.signature(cls).parameters == {}  # TRL calls the factory with no argument
    assert sorted(trl_tools(cls())) == ["answer"]  # no other public function: TRL would offer it as a tool
    env = cls()
    row = make_dataset("rlvr/MathArithmetic-v0", 2, seed=3)[1]
    assert set(row) == {"prompt", "env_id", "seed", "task_index", "task_id", "environment"}
    assert row["environment"] == cls.__name__
    assert env.reset(**row) is None  # the prompt already holds the task
    first = env.reset(env_id="rlvr/MathArithmetic-v0", task_index=row["task_index"])  # no prompt: observation
    assert first == row["prompt"][-1]["content"]
    answer = rlvr_gym.make("rlvr/MathArithmetic-v0").get_task(row["task_index"]).reference_actions[0]
    assert env.reward == 0.0
    env.answer(text=answer)
    assert env.reward == 1.0 and env.verdict.passed and reward_from_env([env, object()]) == [1.0, None]
    with pytest.raises(AttributeError):
        env.reward = 5.0  # read-only: the verdict is the env's
    with pytest.raises(ValueError, match="this environment runs"):
        env.reset(env_id="rlvr/Math-v0", task_index=0)
    seeded = [cls().reset() for _ in range(2)]  # no row: the class's own seed sequence, distinct tasks
    assert seeded[0] != seeded[1]


def test_the_final_reply_is_judged_as_the_env_prompt_asks():
    """TRL ends a rollout on a reply without a tool call: that reply is the env's action (`Answer: <value>`)."""
    env_id = "rlvr/ToolDepth12-v0"
    data = make_dataset(env_id, 4)
    factory = environment_factory(env_id, data)
    row = data[0]  # depth 1: get_airport_code(city="Buenos Aires") -> EZE
    truth = rlvr_gym.make(env_id).get_task(row["task_index"]).ground_truth
    (step,) = truth["chain"]

    def rollout(final: dict) -> float:
        env = factory[row["environment"]]()
        env.reset(**row)
        trl_tools(env)[step["name"]](**step["arguments"])
        call = {"role": "assistant", "content": "", "tool_calls": [{"type": "function", "function": {}}]}
        completion = [call, {"role": "tool", "content": "..."}, final]
        return reward_from_env([env], completions=[completion])[0]

    assert rollout({"role": "assistant", "content": f"Answer: {truth['answer']}"}) == 1.0
    assert rollout({"role": "assistant", "content": "Answer: LHR"}) < 0.2  # wrong: what the verifier says
    assert rollout({**call_only(), "content": f"Answer: {truth['answer']}"}) < 1.0  # cut off in a tool call: not sent


def call_only() -> dict:
    return {"role": "assistant", "tool_calls": [{"type": "function", "function": {"name": "x", "arguments": {}}}]}


def test_each_task_offers_only_its_tools():
    data = make_dataset("rlvr/ToolDepth-v0", 8)
    factory = environment_factory("rlvr/ToolDepth-v0", data)
    assert set(factory) == set(data["environment"]) and len(factory) > 1
    all_tools = set(trl_tools(environment_factory("rlvr/ToolDepth-v0")()))
    for row in data:
        offered = set(trl_tools(factory[row["environment"]]()))
        assert offered == set(row["tools"]) and "answer" in offered and len(offered) < len(all_tools) / 2
        task = rlvr_gym.make("rlvr/ToolDepth-v0").get_task(row["task_index"])
        assert offered - {"answer"} == set(task.metadata["tool_names"])


def test_trl_parser_drives_our_tools():
    """Model text -> TRL's response parser -> the tool dict TRL builds -> our env; oracle gets 1, junk 0."""
    from trl.chat_template_utils import add_response_schema

    from rlvr_gym.agents.models import smollm2_path

    tokenizer = add_response_schema(tool_calling_tokenizer(str(smollm2_path())))
    cls = environment_factory("rlvr/Sokoban-v0")
    env = cls()
    env.reset(task_index=0)
    moves = rlvr_gym.make("rlvr/Sokoban-v0").get_task(0).reference_actions[0]
    text = f'<tool_call>\n{{"name": "play", "arguments": {{"moves": "{moves}"}}}}\n</tool_call><|im_end|>'
    message = tokenizer.parse_response(text, prefix="")  # transformers 5: the generation prompt's tail
    call = message["tool_calls"][0]["function"]
    reply = trl_tools(env)[call["name"]](**call["arguments"])
    assert "episode is over" in reply and env.reward == 1.0
    env.reset(task_index=0)
    with pytest.raises(ToolArgumentError, match="unknown argument"):  # TRL catches it and shows the model the text
        trl_tools(env)["play"](moves="U", reward=1.0)
    assert env.reward == 0.0


def test_reward_func_scores_with_the_env_verifier():
    reward = make_reward_func("rlvr/Math-v0")
    task = rlvr_gym.make("rlvr/Math-v0").get_task(2)
    completions = [
        [{"role": "assistant", "content": task.reference_actions[0]}],
        [{"role": "assistant", "content": "\\boxed{1}"}],
        "x",
    ]
    logged = {}
    out = reward(
        prompts=[None] * 3,
        completions=completions,
        task_index=[2, 2, 2],
        task_id=[task.id] * 3,
        env_id=["rlvr/Math-v0", "rlvr/Math-v0", "rlvr/Other-v0"],
        ground_truth=["1"] * 3,
        log_metric=logged.__setitem__,
    )
    assert out == [1.0, 0.0, None]  # a `ground_truth` column changes nothing
    assert logged == {"MathV0Env_verdict/passed": 0.5}


def test_tokenizer_gets_a_tool_calling_template():
    from trl.chat_template_utils import supports_tool_calling

    from rlvr_gym.agents.models import smollm2_path

    assert supports_tool_calling(tool_calling_tokenizer(str(smollm2_path())))


def test_one_grpo_step_on_cpu(tmp_path):
    """One real GRPOTrainer step: generation, our env factory (tools, final replies judged) and both reward paths."""
    os.environ.setdefault("TRL_EXPERIMENTAL_SILENCE", "1")
    import torch
    from trl import GRPOConfig, GRPOTrainer

    from rlvr_gym.agents.models import smollm2_path

    path = str(smollm2_path())
    env_id = "rlvr/MathArithmetic-v0"
    args = GRPOConfig(
        output_dir=str(tmp_path),
        max_steps=1,
        per_device_train_batch_size=2,
        num_generations=2,
        max_completion_length=8,
        bf16=False,
        use_cpu=True,
        report_to=[],
        logging_steps=1,
        save_strategy="no",
        max_tool_calling_iterations=1,
        seed=0,
    )
    trainer = GRPOTrainer(
        model=path,
        processing_class=tool_calling_tokenizer(path),
        args=args,
        reward_funcs=[make_reward_func(env_id), reward_from_env],
        train_dataset=make_dataset(env_id, 2),
        environment_factory=environment_factory(env_id),
    )
    before = {n: p.detach().clone() for n, p in trainer.model.named_parameters()}
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # two OpenMP threads spin-wait on a shared 2-core machine (agents/hf.py): 7x slower
    try:
        trainer.train()
    finally:
        torch.set_num_threads(threads)
    assert trainer.state.global_step == 1
    assert trainer.reward_func_names == ["MathArithmeticV0Env_verdict", "reward_from_env"]
    log = trainer.state.log_history[0]
    assert "rewards/MathArithmeticV0Env_verdict/mean" in log and "rewards/reward_from_env/mean" in log
    assert all(isinstance(e, RlvrTrlEnv) and e.verdict is not None for e in trainer.environments)
    changed = any(not (p.detach() == before[n]).all() for n, p in trainer.model.named_parameters())
    assert changed or log.get("loss", 0.0) == 0.0  # equal rewards in a group give zero advantage, no update
