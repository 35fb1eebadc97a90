"""Packaging and install scripts: the built wheel carries every subpackage of the root-folder layout under
`rlvr_gym`; scripts/apt_install.sh waits for the package manager's lock instead of failing on it."""

import os
import shutil
import subprocess
import sys
import threading
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
FOLDERS = {
    "envs": "rlvr_gym/envs",
    "agents": "rlvr_gym/agents",
    "algorithms": "rlvr_gym/algorithms",
    "sandboxes": "rlvr_gym/sandboxes",
    "rlvr_gym": "rlvr_gym",
}


def expected_packages() -> set[str]:
    found = set()
    for folder, target in FOLDERS.items():
        for init in (ROOT / folder).rglob("__init__.py"):
            rel = init.parent.relative_to(ROOT / folder)
            found.add(str(Path(target) / rel) if str(rel) != "." else target)
    return found


def test_wheel_contains_every_subpackage(tmp_path):
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            str(ROOT),
            "--no-deps",
            "--no-build-isolation",
            "-q",
            "-w",
            str(tmp_path),
        ],
        check=True,
        cwd=tmp_path,
    )
    wheel = next(tmp_path.glob("rlvr_gym-*.whl"))
    names = zipfile.ZipFile(wheel).namelist()
    packaged = {str(Path(n).parent) for n in names if n.endswith("__init__.py")}
    missing = expected_packages() - packaged
    assert not missing, f"packages missing from the wheel: {sorted(missing)}"
    assert not any(n.startswith(("envs/", "agents/", "algorithms/", "sandboxes/")) for n in names)
    entry_points = next(n for n in names if n.endswith("entry_points.txt"))
    text = zipfile.ZipFile(wheel).read(entry_points).decode()
    assert "[rlvr_gym.envs]" in text and "rlvr-gym = rlvr_gym.cli:main" in text
    metadata = zipfile.ZipFile(wheel).read(next(n for n in names if n.endswith(".dist-info/METADATA"))).decode()
    assert "License-Expression: Apache-2.0" in metadata.splitlines()  # PEP 639 SPDX, not the deprecated table


APT_INSTALL = ROOT / "scripts" / "apt_install.sh"


def run_apt_install(tmp_path: Path, *packages: str, timeout_s: int, lock: Path) -> subprocess.CompletedProcess[str]:
    """scripts/apt_install.sh with a lock file of our own and a recording stand-in for apt-get."""
    stub = tmp_path / "apt-get"  # records its arguments and whether the lock was free when it ran
    probe = f"import fcntl; fcntl.lockf(open({str(lock)!r}, 'a'), fcntl.LOCK_EX | fcntl.LOCK_NB)"
    stub.write_text(
        f'#!/bin/sh\nif {sys.executable} -c "{probe}" 2>/dev/null; then s=free; else s=held; fi\n'
        f'echo "$s $@" >> {tmp_path / "calls"}\n'
    )
    stub.chmod(0o755)
    env = {
        **os.environ,
        "RLVR_APT_LOCKS": str(lock),
        "RLVR_APT_LOCK_TIMEOUT": str(timeout_s),
        "RLVR_APT_SELF_LOCK": str(tmp_path / "self.lock"),
        "RLVR_APT_GET": str(stub),
    }
    return subprocess.run(["bash", str(APT_INSTALL), *packages], env=env, capture_output=True, text=True, timeout=60)


def hold_lock(path: Path) -> subprocess.Popen[bytes]:
    """A separate process holding an fcntl lock on `path`, as apt and dpkg hold theirs."""
    code = f"import fcntl, sys, time; f = open({str(path)!r}, 'w'); fcntl.lockf(f, fcntl.LOCK_EX); print(1, flush=True); time.sleep(60)"
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE)
    assert proc.stdout is not None and proc.stdout.readline().strip() == b"1"
    return proc


needs_root_and_fuser = pytest.mark.skipif(
    os.geteuid() != 0 or shutil.which("fuser") is None or shutil.which("dpkg-query") is None,
    reason="apt_install.sh runs as root on a Debian-like machine with fuser (psmisc)",
)


@needs_root_and_fuser
def test_apt_install_gives_up_on_a_held_lock_with_a_clear_message(tmp_path):
    lock = tmp_path / "lock-frontend"
    holder = hold_lock(lock)
    try:
        result = run_apt_install(tmp_path, "rlvr-gym-no-such-package", timeout_s=2, lock=lock)
    finally:
        holder.kill()
        holder.wait()
    assert result.returncode != 0
    assert "still busy after 2s" in result.stderr and f"{holder.pid}(" in result.stderr
    assert not (tmp_path / "calls").exists()  # apt-get never ran while the lock was held


@needs_root_and_fuser
def test_apt_install_waits_for_the_lock_then_installs(tmp_path):
    lock = tmp_path / "lock-frontend"
    holder = hold_lock(lock)
    threading.Timer(1.5, holder.kill).start()
    result = run_apt_install(tmp_path, "rlvr-gym-no-such-package", "bash", timeout_s=30, lock=lock)
    holder.wait()
    assert result.returncode == 0, result.stderr
    assert "waiting for the package manager" in result.stderr
    calls = (tmp_path / "calls").read_text().splitlines()
    # lists refreshed once (the package has no candidate), then only the missing package installed
    assert [c.split()[0] for c in calls] == ["free", "free"]  # apt-get never ran while the lock was held
    assert [c.split()[3] for c in calls] == ["update", "install"]
    assert calls[1].endswith("install -y -q --no-install-recommends rlvr-gym-no-such-package")


@needs_root_and_fuser
def test_apt_install_skips_installed_packages_without_locking(tmp_path):
    lock = tmp_path / "lock-frontend"
    holder = hold_lock(lock)
    try:
        result = run_apt_install(tmp_path, "bash", "coreutils", timeout_s=1, lock=lock)
    finally:
        holder.kill()
        holder.wait()
    assert result.returncode == 0 and result.stderr == ""
    assert not (tmp_path / "calls").exists()
