"""ALFWorld on the real engine: generated games, the expert, the env contract, the engine caches."""

from __future__ import annotations

import collections
import json
import statistics
import sys
from pathlib import Path

import pytest

pytest.importorskip("alfworld")

from gymnasium.utils.env_checker import check_env  # noqa: E402

from rlvr_gym.envs.alfworld import engine  # noqa: E402
from rlvr_gym.envs.alfworld.env import ALFWorldEnv, ALFWorldOfficialEnv  # noqa: E402
from rlvr_gym.envs.alfworld.generator import GameGenerator, GeneratorConfig  # noqa: E402
from rlvr_gym.envs.alfworld.scenes import TASK_TYPES, constants  # noqa: E402

GAMES_PER_TYPE = 10


def play(env: ALFWorldEnv, index: int, actions: list[str]):
    env.reset(options={"task_index": index})
    for action in actions:
        obs, reward, terminated, truncated, info = env.step(action)
        if terminated or truncated:
            return reward, terminated, info
    return 0.0, False, info


def test_expert_wins_every_generated_game(alfworld_env, generated_records):
    per_type = collections.Counter(r.task_type for r in generated_records)
    assert per_type == {t: GAMES_PER_TYPE for t in TASK_TYPES}
    won = 0
    for record in generated_records:
        task = alfworld_env.get_task(record.index)
        assert task.reference_actions == record.walkthrough and len(task.reference_actions) >= 2
        reward, terminated, info = play(alfworld_env, record.index, task.reference_actions)
        assert terminated and reward == 1.0, (record.index, record.task_type, info.get("observation_text"))
        verdict = info["verdict"]
        assert verdict.passed and verdict.components["won"] == 1.0
        assert verdict.components["steps"] == len(record.walkthrough) and verdict.components["invalid_actions"] == 0
        won += 1
    assert won == len(generated_records) >= 60


def test_games_are_deterministic_per_index(tmp_path, generated_records):
    fresh = GameGenerator(GeneratorConfig(), tmp_path)
    for i in (0, 1):
        a, b = fresh.game(i), generated_records[i]
        assert Path(a.path).parent != Path(b.path).parent
        assert json.loads(Path(a.path).read_text()) == json.loads(Path(b.path).read_text())
        assert (a.walkthrough, a.scene, a.task_desc) == (b.walkthrough, b.scene, b.task_desc)
    other_seed = GameGenerator(GeneratorConfig(seed=1), tmp_path).game(0)
    assert other_seed.path != fresh.game(0).path


def test_splits_use_disjoint_scenes(alfworld_cache, generated_records):
    c = constants()
    assert all(r.scene in c.TRAIN_SCENE_NUMBERS for r in generated_records)
    unseen = ALFWorldEnv(split="unseen", task_types=["pick_and_place", "pick_heat_then_place"], cache_dir=alfworld_cache)
    records = [unseen.record(i) for i in range(2)]
    assert [r.task_type for r in records] == ["pick_and_place_simple", "pick_heat_then_place_in_recep"]
    assert all(r.scene in c.TEST_SCENE_NUMBERS for r in records)
    unseen.close()


def test_check_env(alfworld_env):
    check_env(alfworld_env, skip_render_check=True)


def test_invalid_actions_aliases_and_formats(alfworld_env, generated_records):
    record = generated_records[0]  # pick_and_place: the walkthrough ends with "move X to Y"
    *head, last = record.walkthrough
    assert last.startswith("move ")
    obs, info = alfworld_env.reset(options={"task_index": 0})
    assert "Admissible actions:" in obs[0]["content"] and record.task_desc in obs[0]["content"]
    obs, reward, terminated, truncated, info = alfworld_env.step("go to the moon")
    assert not info["valid_action"] and not terminated and reward == 0.0
    assert "Nothing happens" in obs[0]["content"] and info["invalid_actions"] == 1
    for i, action in enumerate(head):  # plain text, <action> tags, "Action:" lines all work
        wrapped = [action, f"<think>ok</think><action>{action}</action>", f"Thinking.\nAction: {action}"][i % 3]
        *_, info = alfworld_env.step(wrapped)
        assert info["valid_action"], (wrapped, info["observation_text"])
    obj, rec = last[len("move "):].split(" to ")
    *_, reward, terminated, _, info = alfworld_env.step(f"put {obj} in {rec}")
    assert terminated and reward == 1.0
    assert info["verdict"].components["invalid_actions"] == 1.0
    assert info["verdict"].components["steps"] == len(record.walkthrough) + 1


def test_step_limit_truncates_with_verdict(alfworld_cache, generated_records):
    env = ALFWorldEnv(cache_dir=alfworld_cache, max_turns=3)
    env.reset(options={"task_index": 1})
    for _ in range(3):
        _, reward, terminated, truncated, info = env.step("look")
    assert truncated and not terminated and reward == 0.0
    assert not info["verdict"].passed and info["verdict"].components == {"won": 0.0, "steps": 3.0,
                                                                        "invalid_actions": 0.0}
    env.close()


def test_step_infos_feed_the_estimators(alfworld_env, generated_records):
    record = generated_records[2]
    alfworld_env.reset(options={"task_index": 2})
    _, _, _, _, info = alfworld_env.step(record.walkthrough[0])
    assert info["anchor_obs"].startswith("-= Welcome to TextWorld")
    assert info["observation_text"].startswith("You arrive at")
    assert info["belief_initial"]["receptacles"] and info["admissible_commands"]
    assert info["belief_gt"]["visited"] == [record.walkthrough[0][len("go to "):]]
    json.dumps(info)  # episode files are JSON


def test_rebel_prompt_style_injects_cumulative_belief(alfworld_cache, generated_records):
    from rlvr_gym.algorithms.rebel.belief import Belief, format_output

    env = ALFWorldEnv(cache_dir=alfworld_cache, prompt_style="rebel")
    obs, _ = env.reset(options={"task_index": 0})
    assert "<belief>" in obs[0]["content"] and "<belief_prev>" in obs[0]["content"]
    action = generated_records[0].walkthrough[0]
    belief = Belief(objects={"apple 1": "fridge 1"}, phase="find", target="apple 1")
    obs, _, _, _, info = env.step(format_output(belief, "start", action))
    assert info["valid_action"]
    prev = obs[0]["content"].split("<belief_prev>")[1].split("</belief_prev>")[0]
    assert json.loads(prev)["state"]["objects"] == {"apple 1": "fridge 1"}
    assert f"Recent actions: {action}" in obs[0]["content"]
    env.close()


def test_cached_engine_gives_identical_trajectories(generated_records):
    """Uncached, memo-only and memo + shallow-context engines produce the same trajectory, hash for hash."""
    step_plain, step_cached = [], []
    for record in generated_records[2:5]:  # clean, heat, cool
        actions = ["look", "inventory", *record.walkthrough, "look"]
        env = engine.start_game(record.path)
        with engine.caching(False):
            plain, _, times_plain = engine.timed_trajectory(env, actions)
        with engine.caching(True, shallow_context=False):
            memo = [engine.timed_trajectory(env, actions)[0] for _ in range(2)]
        first, _, _ = engine.timed_trajectory(env, actions)
        again, _, times_cached = engine.timed_trajectory(env, actions)
        env.close()
        assert [plain] * 4 == [*memo, first, again], record.index
        step_plain += times_plain
        step_cached += times_cached
    assert statistics.median(step_cached) < statistics.median(step_plain)


def test_sys_argv_is_protected(generated_records):
    argv = sys.argv
    before = list(argv)
    env = engine.start_game(generated_records[3].path)
    with engine.caching(False):
        env.reset()
    env.reset()
    env.close()
    assert sys.argv is argv and sys.argv == before


def test_official_loader_reads_alfworld_layout(tmp_path, monkeypatch, generated_records):
    """A directory in the official json_2.1.1 layout (built from our verified games) loads and plays."""
    for record in generated_records[:3]:
        folder = tmp_path / "json_2.1.1" / "valid_seen" / f"{record.task_type}-x-{record.index}" / "trial_T0"
        folder.mkdir(parents=True)
        src = Path(record.path).parent
        for name in ("game.tw-pddl", "traj_data.json"):
            (folder / name).write_text((src / name).read_text())
    monkeypatch.setenv("ALFWORLD_DATA", str(tmp_path))
    monkeypatch.setenv("RLVR_GYM_CACHE", str(tmp_path / "cache"))
    env = ALFWorldOfficialEnv(split="seen")
    assert env.num_tasks == 3
    for i in range(3):
        task = env.get_task(i)
        reward, terminated, _ = play(env, i, task.reference_actions)
        assert terminated and reward == 1.0
    env.close()


def test_alfworld_own_loader_accepts_generated_games(alfworld_cache, generated_records):
    """alfworld's AlfredTWEnv finds our games (traj_data.json + solvable game.tw-pddl) by task type."""
    from alfworld.agents.environment.alfred_tw_env import AlfredTWEnv

    data_path = str(Path(generated_records[0].path).parent.parent)
    config = {"env": {"goal_desc_human_anns_prob": 0, "task_types": [1, 3]},
              "dataset": {"data_path": data_path, "num_train_games": -1}}
    tw_env = AlfredTWEnv(config, train_eval="train")
    types = {json.loads((Path(p).parent / "traj_data.json").read_text())["task_type"] for p in tw_env.game_files}
    assert types == {"pick_and_place_simple", "pick_clean_then_place_in_recep"}
    assert len(tw_env.game_files) >= 2 * GAMES_PER_TYPE


async def test_oracle_agent_through_the_runner(alfworld_cache, generated_records):
    import rlvr_gym
    from rlvr_gym.algorithms.advantages import AdvantageInput, compute_advantages
    from rlvr_gym.rollout import collect

    episodes = await collect("rlvr/ALFWorld-v0", rlvr_gym.make_agent("oracle"), tasks=list(range(6)),
                             group_size=1, concurrency=2, env_kwargs={"cache_dir": alfworld_cache})
    assert [ep.passed for ep in episodes] == [True] * 6
    for name in ("rebel", "gigpo"):
        out = compute_advantages(name, AdvantageInput.from_episodes(episodes))
        assert len(out.turn) == 6


def test_easy_games_trim_receptacles(alfworld_cache):
    env = ALFWorldEnv(cache_dir=alfworld_cache, task_types=["pick_and_place", "pick_heat_then_place"],
                      max_receptacles=4, max_distractor_types=1, max_instances=1)
    for i in range(2):
        obs, _ = env.reset(options={"task_index": i})
        assert obs[0]["content"].count("go to ") <= 4
        reward, terminated, _ = play(env, i, env.get_task(i).reference_actions)
        assert terminated and reward == 1.0
    env.close()


def test_threaded_envs_survive_foreign_argv(alfworld_cache, generated_records):
    """Envs stepped on worker threads (as the runner does), uncached, under a CLI argv that Fast Downward's parser
    would reject: neither the argv (`--fresh`) nor textworld's shared TatSu parsers may break an episode."""
    import subprocess

    code = f"""
import sys, concurrent.futures
sys.argv = ["rlvr-gym", "train", "cfg.yaml", "--fresh"]
from rlvr_gym.envs.alfworld import engine
from rlvr_gym.envs.alfworld.env import ALFWorldEnv
def run(index):
    env = ALFWorldEnv(cache_dir={alfworld_cache!r})
    with engine.caching(False):
        env.reset(options={{"task_index": index}})
        for action in env.task.reference_actions:
            *_, terminated, _, _ = env.step(action)
    return terminated
with concurrent.futures.ThreadPoolExecutor(4) as pool:
    out = list(pool.map(run, range(8)))
assert all(out), out
assert sys.argv == ["rlvr-gym", "train", "cfg.yaml", "--fresh"], sys.argv
"""
    subprocess.run([sys.executable, "-c", code], check=True, timeout=600)
