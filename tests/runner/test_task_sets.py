"""Task sets (issue #14 item 8): no repeated question within a split unless the source declares it, and the train
and eval splits share none. Runs for every registered env with a `TaskSource`; envs not migrated yet are skipped."""

import json
import time

import pytest

import rlvr_gym
from rlvr_gym import EnvUnavailable

FIRST_N = 200
BUDGET_S = 10.0  # per split: slow generators (game worlds) are checked on the tasks made within it
ENV_IDS = [info.id for info in rlvr_gym.list_envs()]
# Known defects owned by the family's author, reported to the lead; remove the entry once fixed.
KNOWN = {
    "rlvr/WebShop-v0": "eval tasks 82 and 109 repeat one instruction (nail polish); WebShopTasks does not dedupe",
}


def prompt_text(task) -> str:
    if isinstance(task.prompt, str):
        return task.prompt
    return json.dumps([m.model_dump(mode="json") for m in task.prompt], sort_keys=True)


def split_env(env_id: str, split: str):
    try:
        return rlvr_gym.make(env_id, split=split)
    except EnvUnavailable as exc:
        pytest.skip(f"{env_id}: {exc}")
    except TypeError as exc:
        pytest.skip(f"{env_id}: not migrated to the family template yet (no split= argument: {exc})")


def first_prompts(env) -> list[str]:
    n = FIRST_N if env.num_tasks is None else min(FIRST_N, env.num_tasks)
    deadline = time.perf_counter() + BUDGET_S
    prompts = []
    for i in range(n):
        prompts.append(prompt_text(env.get_task(i)))
        if time.perf_counter() > deadline:
            break
    return prompts


@pytest.mark.timeout(600)
@pytest.mark.parametrize("env_id", ENV_IDS)
def test_no_duplicates_within_a_split_and_splits_disjoint(env_id, request):
    if env_id in KNOWN:
        request.applymarker(pytest.mark.xfail(reason=KNOWN[env_id], strict=False))
    train = split_env(env_id, "train")
    source = getattr(train, "source", None)
    if source is None or not hasattr(source, "split"):
        pytest.skip(f"{env_id}: no TaskSource (env.source) yet")
    evaluation = split_env(env_id, "eval")
    assert train.source.split == "train" and evaluation.source.split == "eval"
    prompts = {"train": first_prompts(train), "eval": first_prompts(evaluation)}
    if not getattr(source, "allows_duplicates", False):
        for split, items in prompts.items():
            repeated = len(items) - len(set(items))
            assert repeated == 0, f"{env_id}: {repeated} repeated prompts in the first {len(items)} {split} tasks"
    shared = set(prompts["train"]) & set(prompts["eval"])
    assert not shared, f"{env_id}: {len(shared)} prompts in both train and eval, e.g. {sorted(shared)[0][:200]!r}"
