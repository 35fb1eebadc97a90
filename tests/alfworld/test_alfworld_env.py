"""ALFWorld on the real engine: generated games, the expert, the env contract, the engine caches."""

from __future__ import annotations

import collections
import json
import random
import statistics
import sys
import time
from pathlib import Path

import pytest

pytest.importorskip("alfworld")

from alfworld_cases import ADVERSARIAL, GAMES_PER_TYPE  # noqa: E402
from gymnasium.utils.env_checker import check_env  # noqa: E402

import rlvr_gym  # noqa: E402
from rlvr_gym.envs.alfworld import engine, verifier  # noqa: E402
from rlvr_gym.envs.alfworld.env import ALFWorldEnv, ALFWorldOfficialEnv  # noqa: E402
from rlvr_gym.envs.alfworld.generator import (  # noqa: E402
    GameGenerator,
    GeneratorConfig,
    goal_fingerprint,
    goal_for,
    goal_order,
    room_key,
)
from rlvr_gym.envs.alfworld.scenes import TASK_TYPES, constants  # noqa: E402
from rlvr_gym.family import parse_task_id  # noqa: E402


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
        assert verdict.passed and verdict.valid and verdict.components["won"] == 1.0
        assert verdict.components["steps"] == len(record.walkthrough) and verdict.components["invalid_actions"] == 0
        assert alfworld_env.verify(task, task.reference_actions) == verdict  # offline replay agrees with the env
        won += 1
    assert won == len(generated_records) == 6 * GAMES_PER_TYPE


def test_task_ids_difficulty_and_what_agents_see(alfworld_env, generated_records):
    for record in generated_records[:6]:
        task = alfworld_env.get_task(record.index)
        assert parse_task_id(task.id) == ("alfworld", "train", record.index)
        assert task.metadata["difficulty"] in range(1, 6)
        assert task.prompt == record.opening.strip() and record.task_desc in task.prompt
        public = json.dumps(task.view().model_dump())
        assert record.path not in public and "walkthrough" not in public
        assert record.walkthrough[-1] not in public  # the finishing command is not given away


def test_wrong_answers_never_win(alfworld_env, generated_records):
    kinds = collections.Counter()
    for record in generated_records:
        task = alfworld_env.get_task(record.index)
        wrongs = alfworld_env.wrong_answers(task, random.Random(record.index))
        assert len(wrongs) >= 3, record.task_type
        for wrong in wrongs:
            verdict = alfworld_env.verify(task, wrong)
            assert not verdict.passed and verdict.reward == 0.0, (record.index, wrong)
            kinds[len(wrong) == len(record.walkthrough)] += 1
    assert kinds[True] and kinds[False]  # same-length mutants and truncations both occur


def test_no_proper_prefix_of_a_walkthrough_wins(alfworld_env, generated_records):
    for record in generated_records[:12]:
        task = alfworld_env.get_task(record.index)
        for cut in range(len(record.walkthrough)):
            assert not alfworld_env.verify(task, record.walkthrough[:cut]).passed


def test_verify_replays_live_episodes_exactly(alfworld_env, generated_records):
    """Random and noisy trajectories: the env's own verdict and the offline replay are the same object value."""
    rng = random.Random(7)
    for record in generated_records[:6]:
        alfworld_env.reset(options={"task_index": record.index})
        actions, verdict = [], None
        noisy = [*record.walkthrough[:-1], "<action>look</action><action>inventory</action>", "go to the moon"]
        for _ in range(12):
            action = rng.choice([*alfworld_env.game.admissible(), *noisy])
            actions.append(action)
            result = alfworld_env.step_result(action)
            if result.terminated or result.truncated:
                verdict = result.verdict
                break
        verdict = verdict or alfworld_env.truncation_verdict()
        assert alfworld_env.verify(alfworld_env.task, actions) == verdict


def test_verdict_validity_and_the_turn_limit(alfworld_env, generated_records):
    task = alfworld_env.get_task(0)
    junk = alfworld_env.verify(task, ["", "<action></action>", "\ud800\x00"])
    assert not junk.valid and junk.reward == 0.0 and junk.error
    assert not alfworld_env.verify(task, []).valid
    assert alfworld_env.verify(task, ["look", "go to the moon"]).valid  # one playable step makes it scorable
    padded = ["look"] * alfworld_env.max_turns + task.reference_actions  # wins only after the turn limit
    assert not alfworld_env.verify(task, padded).passed


def test_verify_rebuilds_a_missing_game_file(alfworld_cache, generated_records, monkeypatch):
    env = ALFWorldEnv(cache_dir=alfworld_cache, size=6)
    task = env.get_task(2)
    moved = task.model_copy(update={"ground_truth": {**task.ground_truth, "gamefile": "/nonexistent/game.tw-pddl"}})
    monkeypatch.setenv("RLVR_GYM_CACHE", str(Path(alfworld_cache).parent / "rebuilt"))
    rebuilt = verifier.game_file(moved)
    assert rebuilt != task.ground_truth["gamefile"]
    assert json.loads(Path(rebuilt).read_text()) == json.loads(Path(task.ground_truth["gamefile"]).read_text())
    assert verifier.verify(moved, task.reference_actions).passed
    env.close()


def test_adversarial_1mb_steps_are_fast_and_never_raise(alfworld_env, generated_records):
    """A 1 MB hostile reply is one invalid step that takes < 100 ms on the live env (issue #14 item 2)."""
    for name, text in ADVERSARIAL.items():
        best = float("inf")
        for _ in range(3):
            alfworld_env.reset(options={"task_index": 0})
            t0 = time.perf_counter()
            result = alfworld_env.step_result(text)
            best = min(best, time.perf_counter() - t0)
        assert best < 0.1, (name, best)
        assert len(result.observation[0].content) < 20_000  # the reply is never echoed back
        assert not result.valid_action, name


def test_games_are_deterministic_per_index(tmp_path, generated_records):
    fresh = GameGenerator(GeneratorConfig(), tmp_path)
    for i in (0, 1):
        a, b = fresh.game(i), generated_records[i]
        assert Path(a.path).parent != Path(b.path).parent
        assert json.loads(Path(a.path).read_text()) == json.loads(Path(b.path).read_text())
        assert (a.walkthrough, a.scene, a.task_desc) == (b.walkthrough, b.scene, b.task_desc)
    other_seed = GameGenerator(GeneratorConfig(seed=1), tmp_path).game(0)
    assert other_seed.path != fresh.game(0).path


def test_unseen_scenes(alfworld_cache, generated_records):
    c = constants()
    assert all(r.scene in c.TRAIN_SCENE_NUMBERS for r in generated_records)
    unseen = ALFWorldEnv(
        scenes="unseen", split="eval", task_types=["pick_and_place", "pick_heat_then_place"], cache_dir=alfworld_cache
    )
    records = [unseen.source.record(i) for i in range(2)]
    assert [r.task_type for r in records] == ["pick_and_place_simple", "pick_heat_then_place_in_recep"]
    assert all(r.scene in c.TEST_SCENE_NUMBERS for r in records)
    unseen.close()


@pytest.mark.parametrize("max_receptacles", [None, 4])
def test_splits_are_disjoint_and_openings_unique_by_construction(max_receptacles):
    """Over every goal each split can index: no fingerprint in both splits, none twice in one (issue #14 item 8)."""
    prints = {}
    for split in ("train", "eval"):
        config = GeneratorConfig(split=split, max_receptacles=max_receptacles)
        goals = [g for t in config.task_types for g in goal_order(config, t)]
        fingerprints = [g.fingerprint for g in goals]
        assert len(set(fingerprints)) == len(fingerprints) > 100
        prints[split] = set(fingerprints)
    assert not prints["train"] & prints["eval"]


def test_fingerprint_is_a_function_of_the_opening(alfworld_env, generated_records):
    """The split key is computed before the engine runs; it must be determined by what the agent is shown."""
    import re

    for record in generated_records:
        listing = record.opening.split("you see", 1)[1].split("\n", 1)[0]
        names = re.findall(r"\ban? ([a-z]+) \d+", listing)
        assert goal_fingerprint(record.task_desc, room_key(names)) == record.fingerprint
        assert goal_for(alfworld_env.source.config, record.index).fingerprint == record.fingerprint


def test_eval_split_plays(alfworld_cache):
    env = ALFWorldEnv(split="eval", cache_dir=alfworld_cache, task_types=["pick_and_place"])
    task = env.get_task(0)
    assert task.id == "alfworld/eval/0" and env.num_tasks > 100
    assert env.verify(task, task.reference_actions).passed
    env.close()


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
    ambiguous = f"<action>{head[0]}</action><action>look</action>"  # two committed commands: not played
    obs, reward, terminated, truncated, info = alfworld_env.step(ambiguous)
    assert not info["valid_action"] and "ambiguous" in obs[0]["content"] and info["invalid_actions"] == 2
    for i, action in enumerate(head):  # plain text, <action> tags, "Action:" lines all work
        wrapped = [action, f"<think>ok</think><action>{action}</action>", f"Thinking.\nAction: {action}"][i % 3]
        *_, info = alfworld_env.step(wrapped)
        assert info["valid_action"], (wrapped, info["observation_text"])
    obj, rec = last[len("move ") :].split(" to ")
    *_, reward, terminated, _, info = alfworld_env.step(f"put {obj} in {rec}")
    assert terminated and reward == 1.0
    assert info["verdict"].components["invalid_actions"] == 2.0
    assert info["verdict"].components["steps"] == len(record.walkthrough) + 2


def test_step_limit_truncates_with_verdict(alfworld_cache, generated_records):
    env = ALFWorldEnv(cache_dir=alfworld_cache, max_turns=3)
    env.reset(options={"task_index": 1})
    for _ in range(3):
        _, reward, terminated, truncated, info = env.step("look")
    assert truncated and not terminated and reward == 0.0
    assert not info["verdict"].passed and info["verdict"].valid
    assert info["verdict"].components == {"won": 0.0, "steps": 3.0, "invalid_actions": 0.0}
    env.close()


def test_step_infos_feed_the_estimators(alfworld_env, generated_records):
    record = generated_records[2]
    alfworld_env.reset(options={"task_index": 2})
    _, _, _, _, info = alfworld_env.step(record.walkthrough[0])
    assert info["anchor_obs"].startswith("-= Welcome to TextWorld")
    assert info["observation_text"].startswith("You arrive at")
    assert info["belief_initial"]["receptacles"] and info["admissible_commands"]
    assert info["belief_gt"]["visited"] == [record.walkthrough[0][len("go to ") :]]
    json.dumps(info)  # episode files are JSON


def test_rebel_prompt_style_injects_cumulative_belief(alfworld_cache, generated_records):
    from rlvr_gym.envs.alfworld.belief import Belief, format_output

    env = ALFWorldEnv(cache_dir=alfworld_cache, prompt_style="rebel")
    obs, _ = env.reset(options={"task_index": 0})
    assert "<belief>" in obs[0]["content"] and "<belief_prev>" in obs[0]["content"]
    action = generated_records[0].walkthrough[0]
    belief = Belief(objects={"apple 1": "fridge 1"}, phase="find", target="apple 1")
    obs, _, _, _, info = env.step(format_output(belief, "start", action))
    assert info["valid_action"]
    prev = obs[0]["content"].split("<belief_prev>{", 1)[1].split("</belief_prev>")[0]  # not the instructions' "..."
    prev = "{" + prev
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
    env = ALFWorldOfficialEnv(split="seen")  # the older split name: eval on valid_seen
    assert env.num_tasks == 3 and ALFWorldOfficialEnv(split="eval").num_tasks == 3
    for i in range(3):
        task = env.get_task(i)
        assert task.id == f"alfworld-official/eval/{i}"
        reward, terminated, _ = play(env, i, task.reference_actions)
        assert terminated and reward == 1.0
        assert env.verify(task, task.reference_actions).passed
    env.close()
    with pytest.raises(rlvr_gym.EnvUnavailable):
        ALFWorldOfficialEnv(split="train")  # no train folder here


def test_alfworld_own_loader_accepts_generated_games(alfworld_cache, generated_records):
    """alfworld's AlfredTWEnv finds our games (traj_data.json + solvable game.tw-pddl) by task type."""
    from alfworld.agents.environment.alfred_tw_env import AlfredTWEnv

    data_path = str(Path(generated_records[0].path).parent.parent)
    config = {
        "env": {"goal_desc_human_anns_prob": 0, "task_types": [1, 3]},
        "dataset": {"data_path": data_path, "num_train_games": -1},
    }
    tw_env = AlfredTWEnv(config, train_eval="train")
    types = {json.loads((Path(p).parent / "traj_data.json").read_text())["task_type"] for p in tw_env.game_files}
    assert types == {"pick_and_place_simple", "pick_clean_then_place_in_recep"}
    assert len(tw_env.game_files) >= 2 * GAMES_PER_TYPE


async def test_oracle_agent_through_the_runner(alfworld_cache, generated_records):
    from rlvr_gym.algorithms.advantages import AdvantageInput, compute_advantages
    from rlvr_gym.rollout import collect

    episodes = await collect(
        "rlvr/ALFWorld-v0",
        rlvr_gym.make_agent("oracle"),
        tasks=list(range(6)),
        group_size=1,
        concurrency=2,
        env_kwargs={"cache_dir": alfworld_cache},
    )
    assert [ep.passed for ep in episodes] == [True] * 6
    for name in ("rebel", "gigpo"):
        out = compute_advantages(name, AdvantageInput.from_episodes(episodes))
        assert len(out.turn) == 6


def test_easy_games_trim_receptacles(alfworld_cache):
    env = ALFWorldEnv(
        cache_dir=alfworld_cache,
        task_types=["pick_and_place", "pick_heat_then_place"],
        max_receptacles=4,
        max_distractor_types=1,
        max_instances=1,
    )
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
    out = list(pool.map(run, range(4)))
assert all(out), out
assert sys.argv == ["rlvr-gym", "train", "cfg.yaml", "--fresh"], sys.argv
"""
    subprocess.run([sys.executable, "-c", code], check=True, timeout=600)
