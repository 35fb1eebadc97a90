"""The built wheel must carry every subpackage of the root-folder layout under `rlvr_gym`."""

import subprocess
import sys
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
FOLDERS = {"envs": "rlvr_gym/envs", "agents": "rlvr_gym/agents", "algorithms": "rlvr_gym/algorithms",
           "sandboxes": "rlvr_gym/sandboxes", "rlvr_gym": "rlvr_gym"}


def expected_packages() -> set[str]:
    found = set()
    for folder, target in FOLDERS.items():
        for init in (ROOT / folder).rglob("__init__.py"):
            rel = init.parent.relative_to(ROOT / folder)
            found.add(str(Path(target) / rel) if str(rel) != "." else target)
    return found


def test_wheel_contains_every_subpackage(tmp_path):
    subprocess.run([sys.executable, "-m", "pip", "wheel", str(ROOT), "--no-deps", "--no-build-isolation", "-q",
                    "-w", str(tmp_path)], check=True, cwd=tmp_path)
    wheel = next(tmp_path.glob("rlvr_gym-*.whl"))
    names = zipfile.ZipFile(wheel).namelist()
    packaged = {str(Path(n).parent) for n in names if n.endswith("__init__.py")}
    missing = expected_packages() - packaged
    assert not missing, f"packages missing from the wheel: {sorted(missing)}"
    assert not any(n.startswith(("envs/", "agents/", "algorithms/", "sandboxes/")) for n in names)
    entry_points = next(n for n in names if n.endswith("entry_points.txt"))
    text = zipfile.ZipFile(wheel).read(entry_points).decode()
    assert "[rlvr_gym.envs]" in text and "rlvr-gym = rlvr_gym.cli:main" in text
