"""Run configs as pydantic models, loadable from YAML and overridable from the command line."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field


class AgentConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    spec: str = "smollm2"
    temperature: float = 0.7
    top_p: float = 1.0
    max_new_tokens: int = 256
    system_prompt: str | None = None
    concurrency: int | None = None
    options: dict[str, Any] = Field(default_factory=dict)

    def factory_options(self, seed: int, run_concurrency: int | None = None) -> dict[str, Any]:
        """Agent factory options; HTTP/batched backends get the run's concurrency unless the agent sets its own,
        so `-c N` means N requests in flight."""
        opts: dict[str, Any] = {
            "temperature": self.temperature,
            "top_p": self.top_p,
            "max_new_tokens": self.max_new_tokens,
            "seed": seed,
        }
        if self.system_prompt is not None:
            opts["system_prompt"] = self.system_prompt
        concurrency = self.concurrency if self.concurrency is not None else run_concurrency
        if concurrency is not None:
            opts["concurrency"] = concurrency
        return {**opts, **self.options}


class EvalConfig(BaseModel):
    """Everything `rlvr-gym eval` needs; YAML files in configs/ hold these fields."""

    model_config = ConfigDict(extra="forbid")

    env: str
    env_kwargs: dict[str, Any] = Field(default_factory=dict)
    agent: AgentConfig = Field(default_factory=AgentConfig)
    num_tasks: int = 20
    task_offset: int = 0
    group_size: int = 1
    concurrency: int = 8
    seed: int = 0
    output: Path | None = None
    resume: bool = False
    keep_errors: bool = Field(False, description="on resume, keep errored episodes instead of retrying them")
    force: bool = Field(False, description="on resume, append even if the run manifest differs")
    step_timeout_s: float | None = Field(None, description="override the env's own step_timeout_s")
    episode_timeout_s: float | None = Field(None, description="override the env's own episode_timeout_s")
    reset_timeout_s: float | None = Field(None, description="override the env's own reset_timeout_s")
    isolation: Literal["thread", "process", "auto"] | None = Field(
        None,
        description="where env calls run: threads (fast), child processes (killable), or auto; default: "
        "what the env declares, else thread",
    )
    backend: Literal["local", "ray"] = Field("local", description="where envs run: this machine or Ray actors")
    ray_address: str | None = Field(
        None, description="with backend ray: the cluster's GCS host:port (default: a private one-node Ray on loopback)"
    )
    group_by: list[str] = Field(default_factory=list)
    max_errors: int = Field(0, ge=0, description="exit non-zero when more infrastructure errors than this remain")
    min_pass_rate: float | None = None

    def output_path(self) -> Path:
        if self.output is not None:
            return Path(self.output)
        slug = re.sub(r"[^A-Za-z0-9_.-]+", "_", f"{self.env}__{self.agent.spec}").strip("_")
        return Path("runs") / "eval" / slug / "episodes.jsonl"


def load_yaml(path: str | Path) -> dict[str, Any]:
    data = yaml.safe_load(Path(path).read_text(encoding="utf-8")) or {}
    if not isinstance(data, dict):
        raise ValueError(f"{path}: a config file must hold a mapping")
    return data


def parse_value(text: str) -> Any:
    """CLI override values are YAML scalars: `3`, `0.5`, `true`, `[1, 2]`, or plain strings."""
    return yaml.safe_load(text) if text != "" else ""


def apply_overrides(data: dict[str, Any], overrides: list[str]) -> dict[str, Any]:
    """Apply `dotted.key=value` overrides to a nested config dict."""
    for item in overrides:
        key, sep, value = item.partition("=")
        if not sep:
            raise ValueError(f"override {item!r} must look like key=value")
        node = data
        parts = key.split(".")
        for part in parts[:-1]:
            node = node.setdefault(part, {})
        node[parts[-1]] = parse_value(value)
    return data
