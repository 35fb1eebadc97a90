"""Resume never mixes runs, never runs two writers, re-runs corrupted and errored episodes (issue #14 items 3-4)."""

import json

import pytest

from rlvr_gym import ErrorKind
from rlvr_gym.agents.scripted import ConstantAgent, OracleAgent
from rlvr_gym.cli import main
from rlvr_gym.episode_log import RunLock, RunLocked
from rlvr_gym.manifest import ManifestMismatch, manifest_path
from rlvr_gym.rollout import collect_sync


class CountingOracle(OracleAgent):
    def __init__(self):
        self.calls = 0

    async def act(self, ctx, observation):
        self.calls += 1
        return await super().act(ctx, observation)


def lines(path):
    return path.read_bytes().splitlines()


def test_manifest_is_written_and_a_different_run_is_refused(trap_env_ids, tmp_path):
    env_id, out = trap_env_ids["trap"], tmp_path / "episodes.jsonl"
    collect_sync(env_id, OracleAgent(), tasks=3, output=out, seed=1)
    manifest = json.loads(manifest_path(out).read_text())
    assert manifest["identity"]["env_id"] == env_id and manifest["identity"]["seed"] == 1
    assert manifest["identity"]["agent"] == {"spec": OracleAgent().name}
    assert manifest["identity"]["episode_schema_version"] == 2 and manifest["identity"]["package_version"]
    for change, named in [
        ({"seed": 2}, "seed: 1 -> 2"),
        ({"env_kwargs": {"size": 9}}, "env_kwargs.size"),
        ({"agent_identity": {"spec": "constant:1"}}, "agent.spec"),
    ]:
        kwargs = {"tasks": 3, "output": out, "seed": 1, "resume": True, **change}
        with pytest.raises(ManifestMismatch, match=named.replace(".", r"\.")):
            collect_sync(env_id, OracleAgent(), **kwargs)
    assert len(lines(out)) == 3  # nothing appended by the refused runs
    # --force appends and records what it overrode
    collect_sync(env_id, OracleAgent(), tasks=4, output=out, seed=2, resume=True, force=True)
    assert len(lines(out)) == 4
    assert any("seed" in d for d in json.loads(manifest_path(out).read_text())["forced_over"])


def test_resume_may_extend_a_run(trap_env_ids, tmp_path):
    out = tmp_path / "e.jsonl"
    collect_sync(trap_env_ids["trap"], OracleAgent(), tasks=3, output=out)
    agent = CountingOracle()
    collect_sync(trap_env_ids["trap"], agent, tasks=5, group_size=2, output=out, resume=True)
    assert agent.calls == 7 and len(lines(out)) == 10


def test_cli_resume_names_the_difference(trap_env_ids, tmp_path, capsys):
    out = tmp_path / "e.jsonl"
    base = ["eval", trap_env_ids["trap"], "-n", "2", "-o", str(out), "--no-progress"]
    assert main([*base, "--agent", "oracle"]) == 0
    assert main([*base, "--agent", "oracle", "--temperature", "0.2", "--resume"]) == 2
    assert "agent.temperature: 0.7 -> 0.2" in " ".join(capsys.readouterr().err.split())
    assert main([*base, "--agent", "oracle", "--temperature", "0.2", "--resume", "--force"]) == 0


def test_second_writer_is_stopped_by_the_lock(trap_env_ids, tmp_path, capsys):
    out = tmp_path / "e.jsonl"
    with RunLock(out):
        with pytest.raises(RunLocked, match="another run"):
            collect_sync(trap_env_ids["trap"], OracleAgent(), tasks=2, output=out)
        assert (
            main(
                [
                    "eval",
                    trap_env_ids["trap"],
                    "--agent",
                    "oracle",
                    "-n",
                    "2",
                    "-o",
                    str(out),
                    "--no-progress",
                    "--resume",
                ]
            )
            == 2
        )
        assert "being written by another run" in " ".join(capsys.readouterr().err.split())  # rich wraps long paths
    collect_sync(trap_env_ids["trap"], OracleAgent(), tasks=2, output=out)  # free again once released
    assert len(lines(out)) == 2


def test_corrupted_lines_are_reported_and_rerun(trap_env_ids, tmp_path):
    out = tmp_path / "e.jsonl"
    collect_sync(trap_env_ids["trap"], OracleAgent(), tasks=6, output=out)
    rows = lines(out)
    rows[1] = rows[1][:-7]  # cut inside the record: not JSON any more
    rows[3] = b"\x00\x00\x00"
    out.write_bytes(b"\n".join(rows) + b"\n" + rows[5][:30])
    scans, agent = [], CountingOracle()
    episodes = collect_sync(trap_env_ids["trap"], agent, tasks=6, output=out, resume=True, on_resume=scans.append)
    assert scans[0].corrupt_lines == [2, 4] and scans[0].torn_tail
    assert any("line 2, 4" in note for note in scans[0].notes())
    assert agent.calls == 2 and all(e.passed for e in episodes)
    ids = [json.loads(line)["episode_id"] for line in lines(out)]
    assert len(ids) == 6 == len(set(ids))


def test_errored_episodes_are_retried_on_resume_unless_kept(trap_env_ids, tmp_path):
    out = tmp_path / "e.jsonl"
    env_id = trap_env_ids["trap"]
    first = collect_sync(env_id, OracleAgent(), tasks=4, output=out, env_kwargs={"crash_on": (1, 2)})
    assert sum(e.error is not None for e in first) == 2
    agent = CountingOracle()
    kept = collect_sync(
        env_id, agent, tasks=4, output=out, resume=True, keep_errors=True, env_kwargs={"crash_on": (1, 2)}
    )
    assert agent.calls == 0 and sum(e.error is not None for e in kept) == 2
    # the env got fixed (a forced resume, since its arguments changed): errored episodes run again
    agent = CountingOracle()
    again = collect_sync(env_id, agent, tasks=4, output=out, resume=True, force=True)
    assert agent.calls == 2 and all(e.passed for e in again)
    ids = [json.loads(line)["episode_id"] for line in lines(out)]
    assert len(ids) == 4 == len(set(ids))


def test_summary_keeps_errors_apart_and_eval_exits_nonzero(trap_env_ids, tmp_path):
    out = tmp_path / "e.jsonl"
    args = [
        "eval",
        trap_env_ids["trap"],
        "--agent",
        "oracle",
        "-n",
        "4",
        "-o",
        str(out),
        "--no-progress",
        "--env-arg",
        "infra_on=[1]",
    ]
    assert main(args) == 1  # one infrastructure error, default --max-errors 0
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert summary["mean_reward"] == 1.0 and summary["pass_rate"] == 1.0  # not dragged down by a fake 0
    assert summary["error_count"] == 1 and summary["errors"] == {ErrorKind.VERIFIER_ERROR.value: 1}
    assert summary["outcomes"] == {"scored": 3, "invalid": 0, "error": 1} and summary["rewarded"] == 3
    assert main([*args, "--resume", "--max-errors", "1"]) == 0  # retried (and failed again), but tolerated


def test_invalid_outcome_is_scored_not_an_error(trap_env_ids, tmp_path):
    episodes = collect_sync(trap_env_ids["trap"], ConstantAgent("no idea"), tasks=2)
    assert [e.outcome.value for e in episodes] == ["invalid", "invalid"]
    assert [e.reward for e in episodes] == [0.0, 0.0]
