import sys
import textwrap

import gymnasium
import pytest

import rlvr_gym
from rlvr_gym import registry


def test_make_and_list(echo_env_id):
    env = rlvr_gym.make(echo_env_id, max_attempts=2)
    assert env.max_turns == 2
    ids = [info.id for info in rlvr_gym.list_envs()]
    assert echo_env_id in ids
    assert gymnasium.spec(echo_env_id).namespace == "rlvr"


def test_ids_must_use_namespace():
    with pytest.raises(ValueError):
        rlvr_gym.register("Echo-v0", "x:y")


def test_unknown_id_is_a_clear_error():
    with pytest.raises(KeyError, match="unknown env id"):
        rlvr_gym.make("rlvr/NoSuchEnv-v0")


def test_third_party_entry_point_discovery(tmp_path, monkeypatch):
    """A real installed distribution (dist-info on sys.path) registers its env through the entry-point group."""
    pkg = tmp_path / "rlvr_thirdparty_demo"
    pkg.mkdir()
    (pkg / "__init__.py").write_text(textwrap.dedent('''
        import rlvr_gym
        from rlvr_gym import AnswerEnv, Task, Verdict

        class ShoutEnv(AnswerEnv):
            def get_task(self, index):
                return Task(id=f"shout-{index}", prompt="say HI", ground_truth="HI", reference_actions=["HI"])
            def score_answer(self, task, text):
                ok = float(text == task.ground_truth)
                return Verdict(reward=ok, passed=bool(ok), components={"correct": ok})

        def register_envs():
            rlvr_gym.register("rlvr/Shout-v0", "rlvr_thirdparty_demo:ShoutEnv", family="demo")
    '''))
    dist = tmp_path / "rlvr_thirdparty_demo-0.1.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: rlvr-thirdparty-demo\nVersion: 0.1\n")
    (dist / "entry_points.txt").write_text("[rlvr_gym.envs]\ndemo = rlvr_thirdparty_demo:register_envs\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    registry.load_plugins(force=True)
    try:
        env = rlvr_gym.make("rlvr/Shout-v0")
        env.reset(seed=0)
        _, reward, terminated, _, info = env.step("HI")
        assert terminated and reward == 1.0 and info["verdict"].passed
    finally:
        sys.modules.pop("rlvr_thirdparty_demo", None)
