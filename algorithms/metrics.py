"""Per-step metrics to JSONL (the source of truth for `report`) and TensorBoard."""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any


class MetricsWriter:
    """Appends one JSON object per record; on resume, records after the resumed step are cut (they are redone)."""

    def __init__(self, run_dir: Path, *, tensorboard: bool = True, resume_step: int | None = None) -> None:
        self.path = run_dir / "metrics.jsonl"
        run_dir.mkdir(parents=True, exist_ok=True)
        if resume_step is None:
            self.path.write_text("")
        else:
            kept = [r for r in read_metrics(self.path) if r.get("step", 0) <= resume_step]
            self.path.write_text("".join(json.dumps(r) + "\n" for r in kept))
        self._tb: Any = None
        if tensorboard:
            try:
                from torch.utils.tensorboard import SummaryWriter

                self._tb = SummaryWriter(str(run_dir / "tb"), purge_step=(resume_step + 1) if resume_step else None)
            except ImportError:
                self._tb = None

    def write(self, record: dict[str, Any]) -> None:
        clean = {k: _jsonable(v) for k, v in record.items()}
        with self.path.open("a", encoding="utf-8") as f:
            f.write(json.dumps(clean) + "\n")
        if self._tb is not None:
            step = int(clean.get("step", 0))
            for key, value in clean.items():
                if key != "step" and isinstance(value, (int, float)) and math.isfinite(value):
                    self._tb.add_scalar(key, value, step)
            self._tb.flush()

    def close(self) -> None:
        if self._tb is not None:
            self._tb.close()


def read_metrics(path: Path) -> list[dict[str, Any]]:
    if not path.is_file():
        return []
    out = []
    for line in path.read_text(encoding="utf-8").splitlines():
        try:
            out.append(json.loads(line))
        except ValueError:
            continue  # a torn last line from a killed run
    return out


def _jsonable(value: Any) -> Any:
    if hasattr(value, "item"):
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def hack_signature(records: Sequence[dict[str, Any]], window: int = 3, margin: float = 0.01) -> str | None:
    """The signature of a policy farming partial credit instead of solving: training reward rises while the pass
    rate is 0 at every training step and every eval (a format bonus paid for `\\boxed{N}` did exactly this). None
    when the run shows no such thing; a message saying what was seen otherwise."""
    rewards = [float(r["reward_mean"]) for r in records if isinstance(r.get("reward_mean"), (int, float))]
    passes = [
        float(r[k]) for r in records for k in ("pass_rate", "eval/pass_rate") if isinstance(r.get(k), (int, float))
    ]
    if len(rewards) < 2 or any(p > 0 for p in passes):
        return None
    k = max(1, min(window, len(rewards) // 2))
    first, last = sum(rewards[:k]) / k, sum(rewards[-k:]) / k
    if last <= first + margin:
        return None
    return (
        f"reward rose from {first:.3f} to {last:.3f} while nothing was ever solved (pass rate 0 at every step and "
        "eval): the policy is earning partial credit, not solving; check the env's reward components"
    )
