"""Container-backend specifics: the podman service helper and container settings."""

from __future__ import annotations

import pytest

from rlvr_gym.sandboxes import SandboxUnavailable

pytestmark = [pytest.mark.container, pytest.mark.integration]


def test_service_helper_returns_a_live_endpoint():
    docker = pytest.importorskip("docker")
    from rlvr_gym.sandboxes.podman import ensure_service

    try:
        url = ensure_service()
    except SandboxUnavailable as exc:
        pytest.skip(str(exc))
    client = docker.DockerClient(base_url=url)
    try:
        assert client.ping()
    finally:
        client.close()


@pytest.mark.parametrize("sandbox", ["docker"], indirect=True)
def test_container_settings(sandbox):
    from rlvr_gym.sandboxes import ExecRequest

    sandbox.run(ExecRequest(code="pass"))
    box = next(iter(sandbox._live.values()))
    box.container.reload()
    host = box.container.attrs["HostConfig"]
    assert host["NetworkMode"] == "none"
    assert host["ReadonlyRootfs"] is True
    assert host["Memory"] > 0 and host["PidsLimit"] > 0
    assert "no-new-privileges" in " ".join(host.get("SecurityOpt") or [])


@pytest.fixture(scope="module")
def exec_per_job_box():
    from rlvr_gym.sandboxes.container import DockerSandbox

    try:
        box = DockerSandbox(containers=1, persistent=False)
    except SandboxUnavailable as exc:
        pytest.skip(str(exc))
    yield box
    box.close()


def test_exec_per_job_mode(exec_per_job_box):
    """The fallback mode (one engine exec per job) classifies like the warm-worker mode."""
    from rlvr_gym.sandboxes import EVIDENCE_CLIENT, ExecRequest, Limits, Status

    box = exec_per_job_box
    r = box.run(ExecRequest(code="import os, json; print(json.dumps(sorted(os.environ)))", stdin="x"))
    assert r.status is Status.OK
    assert r.stdout.strip() == '["HOME", "LANG", "PATH", "PYTHONDONTWRITEBYTECODE", "TMPDIR"]'
    assert box.run(ExecRequest(code="while True: pass", limits=Limits(wall_s=1))).status is Status.TIMEOUT
    assert box.run(ExecRequest(code="x = bytearray(10**10)")).status is Status.MEMORY
    big = "x = 1\n" + "# padding\n" * 20000  # over the environment-variable size: goes by put_archive
    assert box.run(ExecRequest(code=big + "print('big')")).stdout == "big\n"
    r = box.run(ExecRequest(code=EVIDENCE_CLIENT + "_rlvr_report({'done': True})", evidence=True))
    assert r.evidence == [{"done": True}]
    r = box.run(
        ExecRequest(
            code="import os; print(sorted(p for p in os.listdir('/proc') if p.isdigit()) == "
            "[str(os.getpid())], os.getuid())"
        )
    )
    first_uid = r.stdout.split()[1]
    assert r.stdout.split()[0] == "True"  # hidepid in this mode too
    r = box.run(ExecRequest(code="import os; print(os.getuid())"))
    assert r.stdout.strip() != first_uid  # a new uid per job here as well
