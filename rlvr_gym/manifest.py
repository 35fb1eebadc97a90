"""The run manifest: what made the episodes in an output file, so a resume never mixes two different runs.

Episode ids name only the task and the sample (`env|index=3|s1`); the manifest (`<episodes stem>.manifest.json`
beside the episodes file) holds everything else that decides an episode: env id and arguments, agent spec and
sampling, the run seed, package and schema versions, and hashes of data files named in the env arguments. Resume
compares the `identity` part and refuses any difference (naming it) unless forced. Task count, group size,
timeouts and concurrency are not identity: a resume may extend a run or change its limits.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import json
import time
from pathlib import Path
from typing import Any

from .types import EPISODE_SCHEMA_VERSION

MANIFEST_VERSION = 1
_HASH_LIMIT = 2 << 30  # data files larger than this are identified by size and mtime, not content


class ManifestMismatch(ValueError):
    """`--resume` found episodes made by a different run configuration."""


def manifest_path(output: str | Path) -> Path:
    output = Path(output)
    return output.with_name(f"{output.stem}.manifest.json")


def package_version() -> str:
    try:
        return importlib.metadata.version("rlvr-gym")
    except importlib.metadata.PackageNotFoundError:
        return "unknown"


def file_fingerprint(path: Path) -> str:
    stat = path.stat()
    if stat.st_size > _HASH_LIMIT:
        return f"size={stat.st_size},mtime={int(stat.st_mtime)}"
    digest = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return "sha256:" + digest.hexdigest()


def data_fingerprints(values: dict[str, Any]) -> dict[str, str]:
    """Content hashes of existing files named by string arguments (dataset paths, model folders' configs)."""
    out: dict[str, str] = {}
    for key, value in sorted(values.items()):
        if not isinstance(value, str) or not value or len(value) > 4096:
            continue
        try:
            path = Path(value)
            if path.is_file():
                out[key] = file_fingerprint(path)
            elif path.is_dir() and (path / "config.json").is_file():
                out[key] = file_fingerprint(path / "config.json")
        except (OSError, ValueError):
            continue
    return out


def build_manifest(
    *,
    env_id: str,
    env_kwargs: dict[str, Any],
    agent: dict[str, Any],
    seed: int,
    run: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """`identity` decides whether a resume may append; `run` records the rest for people reading the folder."""
    data = data_fingerprints(env_kwargs)
    data.update({f"agent.{k}": v for k, v in data_fingerprints(agent.get("options") or {}).items()})
    identity = {
        "env_id": env_id,
        "env_kwargs": env_kwargs,
        "agent": agent,
        "seed": seed,
        "package_version": package_version(),
        "episode_schema_version": EPISODE_SCHEMA_VERSION,
        "data": data,
    }
    return {
        "manifest_version": MANIFEST_VERSION,
        "identity": json.loads(json.dumps(identity, default=str, sort_keys=True)),
        "run": json.loads(json.dumps(run or {}, default=str)),
        "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    }


def differences(old: Any, new: Any, prefix: str = "") -> list[str]:
    """Dotted paths where two identities differ, with both values (`agent.temperature: 0.7 -> 1.0`)."""
    if isinstance(old, dict) and isinstance(new, dict):
        out = []
        for key in sorted(set(old) | set(new), key=str):
            path = f"{prefix}.{key}" if prefix else str(key)
            if key not in old:
                out.append(f"{path}: (absent) -> {new[key]!r}")
            elif key not in new:
                out.append(f"{path}: {old[key]!r} -> (absent)")
            else:
                out.extend(differences(old[key], new[key], path))
        return out
    return [] if old == new else [f"{prefix or 'value'}: {old!r} -> {new!r}"]


def read_manifest(output: str | Path) -> dict[str, Any] | None:
    path = manifest_path(output)
    if not path.exists():
        return None
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except ValueError as exc:
        raise ManifestMismatch(f"{path} is not valid JSON ({exc}); use --force to resume anyway") from exc
    return data if isinstance(data, dict) else None


def check_resume(output: str | Path, manifest: dict[str, Any], *, force: bool = False) -> list[str]:
    """Raise `ManifestMismatch` naming each difference (unless `force`); returns the differences."""
    old = read_manifest(output)
    episodes_exist = Path(output).exists() and Path(output).stat().st_size > 0
    if old is None:
        if episodes_exist and not force:
            raise ManifestMismatch(
                f"{output} has episodes but no manifest ({manifest_path(output).name}), so it cannot be checked "
                "that they come from this configuration; use --force to resume anyway"
            )
        return []
    diffs = differences(old.get("identity"), manifest["identity"])
    if diffs and not force:
        listed = "\n  ".join(diffs)
        raise ManifestMismatch(
            f"--resume refused: {output} was made by a different run configuration:\n  {listed}\n"
            "use another output, or --force to append anyway"
        )
    return diffs


def write_manifest(output: str | Path, manifest: dict[str, Any], *, forced_over: list[str] | None = None) -> Path:
    path = manifest_path(output)
    path.parent.mkdir(parents=True, exist_ok=True)
    if forced_over:
        manifest = {**manifest, "forced_over": forced_over}
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(manifest, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    tmp.replace(path)
    return path
