"""Local-backend specifics: worker lifecycle, the kill(-1) guard, primitives, the shared instance."""

from __future__ import annotations

import os
import threading

import pytest

from rlvr_gym.sandboxes import ExecRequest, SandboxUnavailable, Status, get_sandbox
from rlvr_gym.sandboxes.in_sandbox import job_lifecycle


@pytest.fixture
def private_box():
    from rlvr_gym.sandboxes.local import LocalSandbox

    try:
        box = LocalSandbox(workers=1, max_jobs=3)
    except SandboxUnavailable as exc:
        pytest.skip(str(exc))
    yield box
    box.close()


def _worker(box):
    return next(w for w in box._all.values() if w is not None)


def test_dead_worker_is_replaced(private_box):
    assert private_box.run(ExecRequest(code="print(1)")).stdout == "1\n"
    first = _worker(private_box)
    first.proc.kill()
    first.proc.wait()
    r = private_box.run(ExecRequest(code="print(2)"))
    assert r.status is Status.OK and r.stdout == "2\n"
    assert _worker(private_box) is not first


def test_worker_recycled_after_max_jobs(private_box):
    private_box.run(ExecRequest(code="pass"))
    first = _worker(private_box)
    for _ in range(3):
        assert private_box.run(ExecRequest(code="pass")).status is Status.OK
    assert _worker(private_box) is not first
    assert first.proc.poll() is not None  # stopped, not leaked


def test_closed_sandbox_reports_error(private_box):
    private_box.close()
    r = private_box.run(ExecRequest(code="pass"))
    assert r.status is Status.SANDBOX_ERROR and "closed" in r.error


def test_job_refuses_to_run_in_host_namespace():
    """run_job wipes /tmp and kills by uid: it must refuse outside a sandbox pid namespace."""
    host = os.stat("/proc/self/ns/pid").st_ino
    with pytest.raises(RuntimeError, match="outside a sandbox"):
        job_lifecycle.Context(uid_base=1_234_567, host_pidns=host)
    with pytest.raises(RuntimeError, match="outside a sandbox"):
        job_lifecycle.Context(uid_base=1_234_567, host_pidns=None)
    with pytest.raises(ValueError):
        job_lifecycle.Context(uid_base=0, host_pidns=host + 1)


def test_missing_bubblewrap_is_explained(monkeypatch):
    from rlvr_gym.sandboxes import local

    monkeypatch.setattr(local.shutil, "which", lambda name: None)
    with pytest.raises(SandboxUnavailable, match="bubblewrap"):
        local.check_primitives()


def test_shared_instance_across_threads():
    try:
        boxes = []
        threads = [threading.Thread(target=lambda: boxes.append(get_sandbox("local"))) for _ in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    except SandboxUnavailable as exc:
        pytest.skip(str(exc))
    assert len({id(b) for b in boxes}) == 1
    assert get_sandbox("local") is boxes[0]
    assert boxes[0].run(ExecRequest(code="print('shared')")).stdout == "shared\n"


def test_frame_roundtrip():
    obj = {"a": b"\x00\xff", "b": [1, "x", {"c": b""}], "d": None}
    data = job_lifecycle.encode(obj)
    assert job_lifecycle.decode(data[4:]) == obj


def test_backend_names(monkeypatch):
    from rlvr_gym.sandboxes import backend_name, create_sandbox

    monkeypatch.delenv("RLVR_SANDBOX", raising=False)
    assert backend_name() == "local" and backend_name("podman") == "docker" and backend_name("container") == "docker"
    monkeypatch.setenv("RLVR_SANDBOX", "container")
    assert backend_name() == "docker"
    with pytest.raises(ValueError):
        create_sandbox("nope")


def test_exec_python_mode_has_a_fresh_address_space():
    from rlvr_gym.sandboxes.local import LocalSandbox

    try:
        box = LocalSandbox(workers=1, inline_python=False)
    except SandboxUnavailable as exc:
        pytest.skip(str(exc))
    with box:
        # an exec'd interpreter has not imported the worker's modules
        r = box.run(ExecRequest(code="import sys; print('job_lifecycle' in sys.modules, sys.argv)"))
        assert r.status is Status.OK and r.stdout == "False ['main.py']\n"
        r = box.run(ExecRequest(code="raise SystemExit(4)"))
        assert (r.status, r.exit_code) == (Status.ERROR, 4)
