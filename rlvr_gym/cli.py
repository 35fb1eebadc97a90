"""The `rlvr-gym` command: evaluate agents on envs with verifiable rewards, train on them, build and serve envs.

`list`, `eval`, `verify` and `play` are built in; every other command is a plug-in found through the entry-point
group `rlvr_gym.commands` (name -> `fn(argv: list[str]) -> int`), so the core imports neither the training stack
nor the servers. `COMMANDS` gives each command its `--help` heading, one-line summary and runnable example.
"""

from __future__ import annotations

import argparse
import ast
import asyncio
import contextlib
import importlib.metadata
import importlib.util
import json
import shlex
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn
from rich.table import Table

from .agent import make_agent
from .config import AgentConfig, EvalConfig, apply_overrides, load_yaml, parse_value
from .episode_log import LogScan, RunLocked
from .manifest import read_manifest
from .registry import env_info, list_envs, load_plugins, make
from .rescore import rescore
from .rollout import collect
from .scale import run_backend
from .summary import summarize, summarize_by
from .types import EnvUnavailable, Episode

COMMAND_GROUP = "rlvr_gym.commands"
console = Console(stderr=True)


# ---- list ------------------------------------------------------------------------------------------------------------
def cmd_list(args: argparse.Namespace) -> int:
    envs = list_envs()
    errors = load_plugins()
    if args.json:
        rows = [
            {"id": e.id, "family": e.family, "description": e.description, "entry_point": e.entry_point} for e in envs
        ]
        print(json.dumps({"envs": rows, "plugin_errors": errors}, indent=2))
        return 0
    table = Table(title="rlvr-gym environments")
    for column in ("id", "family", "description"):
        table.add_column(column)
    for e in envs:
        table.add_row(e.id, e.family, e.description)
    Console().print(table)
    for name, message in errors.items():
        console.print(f"[yellow]plug-in {name} failed to load:[/] {message}")
    return 0


# ---- eval ------------------------------------------------------------------------------------------------------------
def _eval_config(args: argparse.Namespace) -> EvalConfig:
    data: dict[str, Any] = load_yaml(args.config) if args.config else {}
    flags = {
        "env": args.env,
        "num_tasks": args.num_tasks,
        "task_offset": args.task_offset,
        "group_size": args.group_size,
        "concurrency": args.concurrency,
        "seed": args.seed,
        "output": args.output,
        "step_timeout_s": args.step_timeout,
        "episode_timeout_s": args.episode_timeout,
        "reset_timeout_s": args.reset_timeout,
        "isolation": args.isolation,
        "backend": args.backend,
        "ray_address": args.ray_address,
        "max_errors": args.max_errors,
        "min_pass_rate": args.min_pass_rate,
    }
    data.update({k: v for k, v in flags.items() if v is not None})
    for flag in ("resume", "keep_errors", "force"):
        if getattr(args, flag):
            data[flag] = True
    if args.group_by:
        data["group_by"] = args.group_by
    agent = data.setdefault("agent", {})
    if isinstance(agent, str):
        agent = data["agent"] = {"spec": agent}
    agent_flags = {
        "spec": args.agent,
        "temperature": args.temperature,
        "max_new_tokens": args.max_new_tokens,
        "system_prompt": args.system_prompt,
    }
    agent.update({k: v for k, v in agent_flags.items() if v is not None})
    for item in args.env_arg or []:
        key, _, value = item.partition("=")
        data.setdefault("env_kwargs", {})[key] = parse_value(value)
    apply_overrides(data, args.set or [])
    if "env" not in data:
        raise SystemExit("eval: an env id is needed (positional or in the config file)")
    return EvalConfig.model_validate(data)


def _progress() -> Progress:
    return Progress(
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("reward {task.fields[reward]:.3f}  pass {task.fields[passed]:.3f}  err {task.fields[errors]}"),
        TimeElapsedColumn(),
        TimeRemainingColumn(),
        console=console,
        disable=not console.is_terminal and not sys.stderr.isatty(),
    )


class EvalInterrupted(Exception):
    """Ctrl-C during `eval`: carries the summary of what finished (and was written) so far."""

    def __init__(self, summary: dict[str, Any]) -> None:
        super().__init__("interrupted")
        self.summary = summary


def summary_json(summary: dict[str, Any]) -> str:
    """summary.json's text; `eval --json` prints the same (the path of the file itself is not part of it)."""
    return json.dumps({k: v for k, v in summary.items() if k != "summary_path"}, indent=2)


def _write_summary(config: EvalConfig, episodes: list[Episode], output: Path, **extra: Any) -> dict[str, Any]:
    summary = summarize(episodes)
    summary["by"] = summarize_by(episodes, config.group_by or None)
    summary["config"] = json.loads(config.model_dump_json())
    summary["episodes_path"] = str(output)
    summary.update(extra)
    summary_path = output.with_name("summary.json")
    summary_path.write_text(summary_json(summary), encoding="utf-8")
    summary["summary_path"] = str(summary_path)
    return summary


def run_eval(config: EvalConfig, *, show_progress: bool = True) -> tuple[list[Episode], dict[str, Any]]:
    """Run an eval config; raises `EvalInterrupted` (summary so far written) on Ctrl-C."""
    env_info(config.env)
    agent_cfg = config.agent if isinstance(config.agent, AgentConfig) else AgentConfig.model_validate(config.agent)
    agent = make_agent(agent_cfg.spec, **agent_cfg.factory_options(config.seed, config.concurrency))
    output = config.output_path()
    tasks = list(range(config.task_offset, config.task_offset + config.num_tasks))
    total = len(tasks) * config.group_size
    seen: list[Episode] = []
    stats = {"n": 0, "reward": 0.0, "passed": 0, "errors": 0}

    def on_resume(scan: LogScan) -> None:
        for note in scan.notes():
            console.print(f"[yellow]resume:[/] {note}")

    with _progress() as progress:
        bar = progress.add_task(config.env, total=total, reward=0.0, passed=0.0, errors=0, visible=show_progress)

        def on_episode(episode: Episode) -> None:
            seen.append(episode)
            if episode.error is not None:
                stats["errors"] += 1
            else:
                stats["n"] += 1
                stats["reward"] += episode.reward or 0.0
                stats["passed"] += int(episode.passed)
            n = max(1, stats["n"])
            progress.update(
                bar, advance=1, reward=stats["reward"] / n, passed=stats["passed"] / n, errors=stats["errors"]
            )

        async def go(backend_options: dict[str, Any]) -> list[Episode]:
            try:
                return await collect(
                    config.env,
                    agent,
                    tasks=tasks,
                    group_size=config.group_size,
                    concurrency=config.concurrency,
                    seed=config.seed,
                    output=output,
                    resume=config.resume,
                    keep_errors=config.keep_errors,
                    force=config.force,
                    env_kwargs=config.env_kwargs,
                    step_timeout_s=config.step_timeout_s,
                    **backend_options,  # isolation, reset and episode limits; an env factory on Ray
                    agent_identity=agent_cfg.model_dump(mode="json", exclude={"concurrency"}),
                    on_episode=on_episode,
                    on_resume=on_resume,
                )
            finally:
                await agent.aclose()

        try:
            with run_backend(
                config.backend,
                config.env,
                config.env_kwargs,
                address=config.ray_address,
                isolation=config.isolation,
                reset_timeout_s=config.reset_timeout_s,
                episode_timeout_s=config.episode_timeout_s,
            ) as backend_options:
                episodes = asyncio.run(go(backend_options))
        except KeyboardInterrupt:
            raise EvalInterrupted(_write_summary(config, seen, output, interrupted=True)) from None
    return episodes, _write_summary(config, episodes, output)


def _num(value: float) -> str:
    return f"{value:.3f}"


def _ci(interval: Sequence[float] | None) -> str:
    return f"[{interval[0]:.3f}, {interval[1]:.3f}]" if interval else ""


def _overview_rows(summary: dict[str, Any]) -> list[tuple[str, str, str]]:
    """Outcome counts and rates with their intervals; rows that would only restate the obvious are left out."""
    rows = [("episodes", str(summary["episodes"]), "")]
    rows += [(outcome, str(count), "") for outcome, count in summary.get("outcomes", {}).items() if outcome != "error"]
    rows += _error_rows(summary.get("errors") or {})
    rows.append(("mean_reward", _num(summary["mean_reward"]), _ci(summary.get("mean_reward_ci"))))
    rows.append(("pass_rate", _num(summary["pass_rate"]), _ci(summary.get("pass_rate_ci"))))
    if summary["groups"] < summary["rewarded"]:  # group size > 1: pass@G differs from the pass rate
        rows.append((f"pass_at_group ({summary['groups']} groups)", _num(summary["pass_at_group"]), ""))
    if summary.get("mean_turns", 1.0) != 1.0:
        rows.append(("mean_turns", f"{summary['mean_turns']:.2f}", ""))
    if summary.get("invalid_action_rate"):
        rows.append(("invalid_action_rate", _num(summary["invalid_action_rate"]), ""))
    return rows


def _error_rows(errors: dict[str, int]) -> list[tuple[str, str, str]]:
    """The error count, naming its kind when there is one, one row per kind when there are several."""
    total = str(sum(errors.values()))
    if len(errors) == 1:
        return [(f"error ({next(iter(errors))})", total, "")]
    return [("error", total, ""), *((f"  {kind}", str(count), "") for kind, count in errors.items())]


def _overview_table(title: str, summary: dict[str, Any]) -> Table:
    table = Table(title=title)
    for column, justify in (("metric", "left"), ("value", "right"), ("95% CI", "right")):
        table.add_column(column, justify=justify)  # type: ignore[arg-type]
    for row in _overview_rows(summary):
        table.add_row(*row)
    return table


def _notes(summary: dict[str, Any]) -> list[str]:
    """What the tables leave implicit: how the intervals are made and which components were not repeated."""
    notes = ["95% CI: Student t for mean_reward, Wilson score for pass_rate."]
    same = summary.get("components_same_as_reward") or []
    if same:
        notes.append(f"Components equal to the reward on every episode (not repeated): {', '.join(same)}.")
    return notes


def _components_table(summary: dict[str, Any]) -> Table | None:
    """One row per distinct component column (names that always agree share a row); reward copies left out."""
    components = summary.get("components") or {}
    hidden = set(summary.get("components_same_as_reward") or [])
    groups = summary.get("component_groups") or [[name] for name in components]
    rows = [(" = ".join(names), _num(components[names[0]])) for names in groups if not hidden.intersection(names)]
    if not rows:
        return None
    table = Table(title="components (mean)")
    table.add_column("component")
    table.add_column("mean", justify="right")
    for row in rows:
        table.add_row(*row)
    return table


def _breakdown_table(key: str, buckets: dict[str, dict[str, Any]]) -> Table | None:
    """Results per value of a task metadata key; None when there is only one value (it would repeat the total)."""
    if len(buckets) < 2:
        return None
    with_errors = any(s["error_count"] for s in buckets.values())
    table = Table(title=f"by {key}")
    for column in (key, "episodes", "mean_reward [95% CI]", "pass_rate [95% CI]", *(["errors"] if with_errors else [])):
        table.add_column(column)
    for value, s in buckets.items():
        cells = [
            value,
            str(s["episodes"]),
            f"{_num(s['mean_reward'])} {_ci(s.get('mean_reward_ci'))}",
            f"{_num(s['pass_rate'])} {_ci(s.get('pass_rate_ci'))}",
        ]
        table.add_row(*cells, *([str(s["error_count"])] if with_errors else []))
    return table


def print_summary(title: str, summary: dict[str, Any]) -> None:
    """The eval summary for people, on stdout: only what varies (see `rlvr_gym.summary` for the intervals)."""
    tables = [_overview_table(title, summary), _components_table(summary)]
    tables += [_breakdown_table(key, buckets) for key, buckets in (summary.get("by") or {}).items()]
    out = Console()
    for table in tables:
        if table is not None:
            out.print(table)
    for note in _notes(summary):
        out.print(note, style="dim", highlight=False)


def _report_summary(args: argparse.Namespace, title: str, summary: dict[str, Any]) -> None:
    """Tables for people, or with --json exactly summary.json's content and nothing else on stdout."""
    if args.json:
        print(summary_json(summary))
    else:
        print_summary(title, summary)


def resume_command(argv: Sequence[str]) -> str:
    rest = [a for a in argv if a != "--resume"]
    return shlex.join(["rlvr-gym", *rest, "--resume"])


def cmd_eval(args: argparse.Namespace) -> int:
    config = _eval_config(args)
    title = f"{config.env} with {config.agent.spec}"
    # With --json, stdout carries the JSON alone: whatever agents or envs print goes to stderr.
    quiet = contextlib.redirect_stdout(sys.stderr) if args.json else contextlib.nullcontext()
    try:
        with quiet:
            _, summary = run_eval(config, show_progress=not args.no_progress)
    except EvalInterrupted as stop:
        _report_summary(args, f"{title} (interrupted)", stop.summary)
        console.print(
            f"[yellow]interrupted[/]: {stop.summary['episodes']} episode(s) written to "
            f"{stop.summary['episodes_path']}\nresume with: {resume_command(args.argv)}",
            soft_wrap=True,
        )
        return 130
    _report_summary(args, title, summary)
    console.print(f"episodes: {summary['episodes_path']}\nsummary:  {summary['summary_path']}")
    if summary["error_count"] > config.max_errors:
        kinds = ", ".join(f"{k}: {v}" for k, v in summary["errors"].items())
        console.print(
            f"[red]{summary['error_count']} infrastructure error(s) ({kinds}) exceed --max-errors "
            f"{config.max_errors}[/]; retry them with: {resume_command(args.argv)}",
            soft_wrap=True,
        )
        return 1
    if config.min_pass_rate is not None and summary["pass_rate"] < config.min_pass_rate:
        console.print(f"[red]pass rate {summary['pass_rate']:.3f} below {config.min_pass_rate}[/]")
        return 1
    return 0


# ---- verify ----------------------------------------------------------------------------------------------------------
def _env_kwargs(items: list[str] | None) -> dict[str, Any]:
    return {k: parse_value(v) for k, v in (kv.partition("=")[::2] for kv in items or [])}


def _verify_env_kwargs(args: argparse.Namespace) -> dict[str, Any]:
    """--env-arg values; without any, an `eval` output's own env arguments from its run manifest."""
    if args.env_arg:
        return _env_kwargs(args.env_arg)
    manifest = read_manifest(args.outputs)
    identity = (manifest or {}).get("identity") or {}
    if identity.get("env_id") == args.env and identity.get("env_kwargs"):
        console.print(f"verify: env arguments from the run manifest: {identity['env_kwargs']}", highlight=False)
        return dict(identity["env_kwargs"])
    return {}


def cmd_verify(args: argparse.Namespace) -> int:
    env = make(args.env, **_verify_env_kwargs(args))
    scored, summary = rescore(env, args.outputs)
    out_path = Path(args.output) if args.output else Path(args.outputs).with_suffix(".scored.jsonl")
    out_path.parent.mkdir(parents=True, exist_ok=True)
    with out_path.open("w", encoding="utf-8") as f:
        for record in scored:
            f.write(json.dumps(record) + "\n")  # ASCII escapes: any text round-trips
    summary.update({"env": args.env, "input": str(args.outputs), "output": str(out_path)})
    summary_path = out_path.with_name(out_path.name.removesuffix(".jsonl") + ".summary.json")
    summary_path.write_text(json.dumps(summary, indent=2), encoding="utf-8")
    summary["summary_path"] = str(summary_path)
    for p in summary["problems"][:50]:
        console.print(f"[yellow]line {p['line']}[/] {p['kind']}: {p['message']}", markup=True, highlight=False)
    brief = {
        k: summary[k]
        for k in ("rows", "rewarded", "mean_reward", "pass_rate", "outcomes", "error_count", "output", "summary_path")
    }
    print(json.dumps(brief))
    return 0 if summary["error_count"] == 0 else 1


# ---- play ------------------------------------------------------------------------------------------------------------
def _text_of(message: dict[str, Any]) -> str:
    content = message.get("content")
    if isinstance(content, list):
        return "".join(p.get("text") or "[image]" for p in content if isinstance(p, dict))
    return content or ""


def _show(out: Console, observation: list[dict[str, Any]]) -> None:
    for message in observation:
        out.print(f"[cyan]\\[{message['role']}][/]")
        out.print(_text_of(message), markup=False, highlight=False)


def cmd_play(args: argparse.Namespace) -> int:
    if args.task_index is not None and args.task_index < 0:
        console.print(f"[red]error:[/] --task-index must be >= 0, got {args.task_index}")
        return 2
    env = make(args.env, **_env_kwargs(args.env_arg))
    if args.task_index is not None and env.num_tasks is not None and args.task_index >= env.num_tasks:
        console.print(f"[red]error:[/] --task-index {args.task_index} is out of range 0..{env.num_tasks - 1}")
        return 2
    options = {"task_index": args.task_index} if args.task_index is not None else None
    obs, info = env.reset(seed=args.seed, options=options)
    out = Console()
    out.print(
        f"[bold]{args.env}[/] task {info['task_id']} (max {env.max_turns} turns). "
        "Type your action; '\\n' inserts a newline; Ctrl-D or Ctrl-C quits."
    )
    try:
        while True:
            _show(out, obs)
            try:
                action = input("> ").replace("\\n", "\n")
            except EOFError:
                out.print()
                return 0
            obs, reward, terminated, truncated, info = env.step(action)
            if not info.get("valid_action", True):
                out.print("[yellow](invalid action)[/]")
            if terminated or truncated:
                _show(out, obs)
                verdict = info["verdict"]
                out.print(
                    f"[bold]done[/]: reward {verdict.reward:.3f}, passed {verdict.passed}, "
                    f"components {verdict.components}"
                )
                if verdict.feedback:
                    out.print(verdict.feedback, markup=False)
                return 0
    except KeyboardInterrupt:
        out.print("\n[yellow]quit[/]")
        return 130


# ---- the command table -----------------------------------------------------------------------------------------
@dataclass(frozen=True)
class CommandInfo:
    """One `rlvr-gym` subcommand as `--help` presents it: its heading, one line, and a line that runs as written.

    Plug-in commands are listed from here so the top-level help imports none of them (the training stack alone
    takes seconds); `extra` names the pip extra a plug-in needs, for the message when it cannot load.
    """

    group: str
    summary: str
    example: str
    extra: str | None = None


GROUPS = ("evaluate", "train", "envs", "serve", "tools", "plugins")
DEMO_RUN = "rlvr-gym eval rlvr/Math-v0 --agent oracle -n 5 -o runs/demo/episodes.jsonl"
COMMANDS: dict[str, CommandInfo] = {
    "eval": CommandInfo(
        "evaluate",
        "evaluate an agent on an env: episodes JSONL, manifest, summary",
        "rlvr-gym eval rlvr/Math-v0 --agent oracle -n 20",
    ),
    "verify": CommandInfo(
        "evaluate",
        "score a JSONL of external model outputs with the env's verifier",
        f"{DEMO_RUN} && rlvr-gym verify rlvr/Math-v0 runs/demo/episodes.jsonl",
    ),
    "train": CommandInfo(
        "train",
        "RL-train a policy on an env (GRPO + LoRA by default)",
        "rlvr-gym train configs/quickstart-math.yaml",
        "train",
    ),
    "nudge-compare": CommandInfo(
        "train",
        "GRPO, DAPO and NudgeRL at equal token budgets, with a plot",
        "rlvr-gym nudge-compare configs/nudge-vs-grpo.yaml --steps 2",
        "train",
    ),
    "populora": CommandInfo(
        "train",
        "PopuLoRA population self-play of LoRA teachers and students on AZR",
        "rlvr-gym populora configs/populora-tiny.yaml --generations 1",
        "train",
    ),
    "geo-selfplay": CommandInfo(
        "train",
        "GeoX proposer/solver self-play on spatial programs",
        "rlvr-gym geo-selfplay --proposals 2 --samples 2",
        "geo",
    ),
    "export-sft": CommandInfo(
        "train",
        "an env's expert trajectories as SFT examples (prompt, reply)",
        "rlvr-gym export-sft configs/rebel-alfworld-sft.yaml",
        "train",
    ),
    "sft": CommandInfo(
        "train",
        "supervised cold start on expert trajectories (LoRA, resumable)",
        "rlvr-gym sft configs/rebel-alfworld-sft.yaml",
        "train",
    ),
    "report": CommandInfo(
        "train",
        "PNG learning curves of a training run",
        "rlvr-gym train configs/quickstart-math.yaml --steps 1 && rlvr-gym report runs/train/quickstart-math",
        "train",
    ),
    "list": CommandInfo("envs", "list registered envs: ids, families, descriptions", "rlvr-gym list --json"),
    "play": CommandInfo("envs", "play an env yourself at the terminal", "rlvr-gym play rlvr/Sokoban-v0"),
    "check-env": CommandInfo(
        "envs",
        "the hardening harness: oracle, determinism, hacks, fuzz, splits, timing",
        "rlvr-gym check-env rlvr/Math-v0 --tasks 20",
    ),
    "new-env": CommandInfo(
        "envs", "scaffold a new env family that passes check-env", "rlvr-gym new-env word_sum --dir /tmp"
    ),
    "serve": CommandInfo(
        "serve",
        "any env over HTTP/WebSocket (OpenEnv's wire protocol)",
        "rlvr-gym serve rlvr/Math-v0 --port 8000",
        "serve",
    ),
    "mcp": CommandInfo(
        "serve",
        "any env, or the tool family's typed tools, over MCP",
        "rlvr-gym mcp rlvr/Math-v0 --transport http --port 8001",
        "mcp",
    ),
    "serve-webshop": CommandInfo(
        "serve", "the WebShop site for people and browsers", "rlvr-gym serve-webshop --port 3000", "webshop"
    ),
    "view": CommandInfo(
        "tools",
        "a local read-only web page of runs: summaries, episodes, diffs, curves",
        f"{DEMO_RUN} && rlvr-gym view runs/demo",
        "viewer",
    ),
    "trainer-data": CommandInfo(
        "tools",
        "task datasets for verl, NeMo Gym and TRL, without answers",
        "rlvr-gym trainer-data nemo-gym rlvr/Sokoban-v0 -n 10 -o data/sokoban.jsonl",
    ),
}
TOP_EXAMPLE = "rlvr-gym eval rlvr/MathStarter-v0 --agent smollm2 -n 8"


def plugin_commands() -> dict[str, importlib.metadata.EntryPoint]:
    return {ep.name: ep for ep in importlib.metadata.entry_points(group=COMMAND_GROUP)}


def _entry_point_doc(ep: importlib.metadata.EntryPoint) -> str:
    """A plug-in's entry-point docstring (else its module's), read from source so that listing runs no plug-in."""
    try:
        spec = importlib.util.find_spec(ep.module)
        tree = ast.parse(Path(spec.origin).read_text(encoding="utf-8"))  # type: ignore[arg-type, union-attr]
    except (ImportError, AttributeError, OSError, SyntaxError, TypeError, ValueError):
        return ""
    node: ast.AST | None = tree
    for part in (ep.attr or "").split("."):
        node = next((n for n in getattr(node, "body", []) if getattr(n, "name", None) == part), None)
    own = ast.get_docstring(node) if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) else None
    return (own or ast.get_docstring(tree) or "").strip()


def _plugin_info(name: str, ep: importlib.metadata.EntryPoint) -> CommandInfo:
    """A third-party command: its docstring's first line, and its example if a docstring line starts with one."""
    lines = [line.strip().removeprefix("Example:").strip(" `") for line in _entry_point_doc(ep).splitlines()]
    example = next((line for line in lines if line.startswith(f"rlvr-gym {name}")), "")
    return CommandInfo("plugins", (lines[0] if lines else "") or f"from {ep.value}", example)


def command_table(plugins: dict[str, importlib.metadata.EntryPoint]) -> dict[str, CommandInfo]:
    """Every command this install has: the table, plus third-party plug-ins under "plugins"."""
    extra = {name: _plugin_info(name, ep) for name, ep in sorted(plugins.items()) if name not in COMMANDS}
    return {**COMMANDS, **extra}


def command_listing(commands: dict[str, CommandInfo]) -> str:
    """The top-level help's command list, one heading per group."""
    width = max(len(name) for name in commands) + 2
    lines: list[str] = []
    for group in GROUPS:
        names = [name for name, info in commands.items() if info.group == group]
        if names:
            lines += ["", f"{group}:", *(f"  {name:<{width}}{commands[name].summary}" for name in names)]
    return "\n".join(lines)


def example_block(example: str) -> str:
    return f"\nExample:\n  {example}"


def _asks_for_help(argv: Sequence[str]) -> bool:
    options = argv[: argv.index("--")] if "--" in argv else argv
    return "-h" in options or "--help" in options


def _with_example(example: str, run: Callable[[], int]) -> int:
    """Run a help request (argparse prints the help and exits 0), then print a runnable example after it."""
    try:
        code = run()
    except SystemExit as stop:
        if stop.code not in (0, None):
            raise
        code = 0
    if example:
        print(example_block(example))
    return code


def _install_hint(info: CommandInfo) -> str:
    return f"install it with: pip install 'rlvr-gym[{info.extra}]'" if info.extra else "reinstall rlvr-gym"


def _say_missing(message: str) -> None:
    console.print(message, style="red", markup=False, highlight=False)  # no markup: "[serve]" is not a tag


def _load_plugin(name: str, ep: importlib.metadata.EntryPoint, info: CommandInfo) -> Callable[..., Any] | None:
    """The plug-in's function, or None (after saying which extra to install) when its dependencies are missing."""
    try:
        return ep.load()
    except ImportError as exc:
        _say_missing(f"{name}: cannot load ({exc}); {_install_hint(info)}")
        return None


def run_plugin(name: str, ep: importlib.metadata.EntryPoint, argv: list[str]) -> int:
    info = command_table({name: ep})[name]
    fn = _load_plugin(name, ep, info)
    if fn is None:
        return 2
    if _asks_for_help(argv):
        return _with_example(info.example, lambda: int(fn(argv) or 0))
    return int(fn(argv) or 0)


def build_parser(commands: dict[str, CommandInfo] | None = None) -> argparse.ArgumentParser:
    """Built-in commands parse here; every other command gets a stand-in that only says how to install it."""
    commands = COMMANDS if commands is None else commands
    parser = argparse.ArgumentParser(
        prog="rlvr-gym",
        usage="rlvr-gym [-h] <command> [options]",
        description=__doc__.splitlines()[0] + "\n" + command_listing(commands),
        epilog="`rlvr-gym <command> --help` shows a command's options and an example.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    sub = parser.add_subparsers(
        dest="command", required=True, metavar="<command>", help=argparse.SUPPRESS, prog="rlvr-gym"
    )

    p = sub.add_parser("list", help=commands["list"].summary, description=commands["list"].summary)
    p.add_argument("--json", action="store_true")
    p.set_defaults(fn=cmd_list)

    p = sub.add_parser(
        "eval",
        help=commands["eval"].summary,
        description="Run an agent on an env's tasks; episodes stream to JSONL beside a run manifest "
        "and summary.json. Exit 1 when infrastructure errors exceed --max-errors, "
        "130 on Ctrl-C (resume with --resume).",
    )
    p.add_argument("env", nargs="?")
    p.add_argument("--config", help="YAML EvalConfig (flags override it)")
    p.add_argument(
        "--agent",
        help="agent spec: smollm2 (default), oracle, constant:<text>, hf:<path>, "
        "openai:<model>@<base_url>, vllm:<path>, replay:<file>",
    )
    p.add_argument("-n", "--num-tasks", type=int)
    p.add_argument("--task-offset", type=int)
    p.add_argument("-g", "--group-size", type=int)
    p.add_argument("-c", "--concurrency", type=int, help="episodes (and model requests) in flight")
    p.add_argument("--seed", type=int)
    p.add_argument("-o", "--output", help="episodes JSONL (summary.json and the manifest go beside it)")
    p.add_argument(
        "--resume",
        action="store_true",
        help="continue a partial episodes file: re-run missing, corrupted and errored episodes",
    )
    p.add_argument("--keep-errors", action="store_true", help="with --resume: keep errored episodes as they are")
    p.add_argument("--force", action="store_true", help="with --resume: append even if the run manifest differs")
    p.add_argument("--temperature", type=float)
    p.add_argument("--max-new-tokens", type=int)
    p.add_argument("--system-prompt")
    p.add_argument("--step-timeout", type=float, help="seconds per env step (default: the env's own)")
    p.add_argument("--episode-timeout", type=float, help="seconds per episode (default: the env's own)")
    p.add_argument("--reset-timeout", type=float, help="seconds per env reset (default: the env's own)")
    p.add_argument(
        "--isolation",
        choices=["thread", "process", "auto"],
        help="run env calls in threads (fast), child processes (a hung call is killed), or auto "
        "(processes after the first timeout); default: what the env declares, else thread",
    )
    p.add_argument(
        "--backend",
        choices=["local", "ray"],
        help="where envs run: this machine (default) or Ray actors spread over a cluster (pip install rlvr-gym[ray])",
    )
    p.add_argument("--ray-address", help="with --backend ray: the cluster's GCS host:port (default: a private Ray)")
    p.add_argument("--group-by", action="append", help="task metadata key to break results down by")
    p.add_argument("--env-arg", action="append", metavar="KEY=VALUE", help="env constructor argument")
    p.add_argument("--set", action="append", metavar="KEY=VALUE", help="override any config field (dotted)")
    p.add_argument("--max-errors", type=int, help="infrastructure errors tolerated before exit 1 (default 0)")
    p.add_argument("--min-pass-rate", type=float)
    p.add_argument("--no-progress", action="store_true")
    p.add_argument("--json", action="store_true", help="print summary.json's content on stdout instead of tables")
    p.set_defaults(fn=cmd_eval)

    p = sub.add_parser(
        "verify",
        help=commands["verify"].summary,
        description="Score JSONL rows {task|task_index|task_id, output|outputs} or eval episode "
        "records offline. Bad lines are reported with their line numbers and the rest "
        "scored; writes <input>.scored.jsonl and a summary beside it; exit 1 if any "
        "row could not be scored.",
    )
    p.add_argument("env")
    p.add_argument("outputs", help='JSONL rows {"task_id"|"task_index"|"task", "output"|"outputs"}')
    p.add_argument("-o", "--output", help="scored JSONL (default: <outputs>.scored.jsonl)")
    p.add_argument("--env-arg", action="append", metavar="KEY=VALUE")
    p.set_defaults(fn=cmd_verify)

    p = sub.add_parser(
        "play",
        help=commands["play"].summary,
        description="Play one task of an env at the terminal: type actions, see the env's replies "
        "and the verdict. Ctrl-D or Ctrl-C quits.",
    )
    p.add_argument("env", help="env id, e.g. rlvr/Math-v0 (see `rlvr-gym list`)")
    p.add_argument("--task-index", type=int, help="which task (default: drawn from --seed)")
    p.add_argument("--seed", type=int)
    p.add_argument("--env-arg", action="append", metavar="KEY=VALUE", help="env constructor argument")
    p.set_defaults(fn=cmd_play)

    for name in sorted(commands.keys() - sub.choices.keys()):  # plug-ins whose entry point is not installed
        p = sub.add_parser(name, help=commands[name].summary, add_help=False)
        p.set_defaults(fn=None, plugin=name)
    return parser


def _help_example(argv: Sequence[str], commands: dict[str, CommandInfo]) -> str:
    """The example for the command a help request names (the first word), else the top-level one."""
    words = [a for a in argv if not a.startswith("-")]
    return commands[words[0]].example if words and words[0] in commands else TOP_EXAMPLE


def _run_builtin(parser: argparse.ArgumentParser, argv: list[str], commands: dict[str, CommandInfo]) -> int:
    args, unknown = parser.parse_known_args(argv)  # on a help request argparse prints the help and exits 0 here
    if args.fn is None:  # a stand-in takes any arguments, --help included
        _say_missing(f"{args.plugin}: not installed; {_install_hint(commands[args.plugin])}")
        return 2
    if unknown:
        parser.error(f"unrecognized arguments: {' '.join(unknown)}")
    args.argv = argv
    try:
        return int(args.fn(args) or 0)
    except (KeyError, ValueError, IndexError, FileNotFoundError, EnvUnavailable, RunLocked) as exc:
        message = exc.args[0] if isinstance(exc, KeyError) and exc.args else exc
        console.print(f"[red]error:[/] {message}", markup=True, highlight=False)
        return 2
    except KeyboardInterrupt:
        console.print("[yellow]interrupted[/]")
        return 130


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    plugins = plugin_commands()
    if argv and argv[0] in plugins:
        return run_plugin(argv[0], plugins[argv[0]], argv[1:])
    commands = command_table(plugins)
    parser = build_parser(commands)
    if _asks_for_help(argv):
        return _with_example(_help_example(argv, commands), lambda: _run_builtin(parser, argv, commands))
    return _run_builtin(parser, argv, commands)


if __name__ == "__main__":
    raise SystemExit(main())
