"""Deterministic mode: a fixed PYTHONHASHSEED is honoured on the warm (inline) path as well as by exec'd python3."""

from __future__ import annotations

from rlvr_gym.sandboxes import ExecRequest, Status

CODE = "print(hash('rlvr-gym'), hash(b'sandbox'), list({'a', 'b', 'c', 'd', 'e'}))"


def test_hash_seed_is_the_same_on_every_path(sandbox):
    inline = [sandbox.run(ExecRequest(code=CODE, hash_seed=0)) for _ in range(2)]
    execd = sandbox.run(ExecRequest(argv=["python3", "-c", CODE], hash_seed=0))
    via_env = sandbox.run(ExecRequest(code=CODE, env={"PYTHONHASHSEED": "0"}))
    assert all(r.status is Status.OK for r in [*inline, execd, via_env])
    assert inline[0].stdout == inline[1].stdout == execd.stdout == via_env.stdout
    other_seed = sandbox.run(ExecRequest(code=CODE, hash_seed=1))
    assert other_seed.stdout != inline[0].stdout
