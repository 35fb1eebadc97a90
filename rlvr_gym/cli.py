"""The `rlvr-gym` command: list envs, evaluate agents, verify external outputs, play, train, report.

`train` and `report` live with the algorithms; they are found through the entry-point group `rlvr_gym.commands`
(name -> `fn(argv: list[str]) -> int`) so the core does not import the training stack.
"""

from __future__ import annotations

import argparse
import asyncio
import importlib.metadata
import json
import shlex
import sys
from collections.abc import Sequence
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


def _write_summary(config: EvalConfig, episodes: list[Episode], output: Path, **extra: Any) -> dict[str, Any]:
    summary = summarize(episodes)
    summary["by"] = summarize_by(episodes, config.group_by or None)
    summary["config"] = json.loads(config.model_dump_json())
    summary["episodes_path"] = str(output)
    summary.update(extra)
    summary_path = output.with_name("summary.json")
    summary_path.write_text(json.dumps(summary, indent=2), encoding="utf-8")
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


def print_summary(title: str, summary: dict[str, Any]) -> None:
    table = Table(title=title)
    table.add_column("metric")
    table.add_column("value", justify="right")
    for key in (
        "episodes",
        "rewarded",
        "groups",
        "mean_reward",
        "std_reward",
        "pass_rate",
        "pass_at_group",
        "mean_turns",
        "invalid_action_rate",
        "invalid_rate",
        "error_count",
    ):
        if key in summary:
            value = summary[key]
            table.add_row(key, f"{value:.4f}" if isinstance(value, float) else str(value))
    for name, value in summary.get("components", {}).items():
        table.add_row(f"component:{name}", f"{value:.4f}")
    for kind, count in summary.get("errors", {}).items():
        table.add_row(f"error:{kind}", str(count))
    out = Console()
    out.print(table)
    for key, buckets in (summary.get("by") or {}).items():
        by_table = Table(title=f"by {key}")
        for column in (key, "episodes", "mean_reward", "pass_rate", "errors"):
            by_table.add_column(column)
        for value, s in buckets.items():
            by_table.add_row(
                value, str(s["episodes"]), f"{s['mean_reward']:.4f}", f"{s['pass_rate']:.4f}", str(s["error_count"])
            )
        out.print(by_table)


def resume_command(argv: Sequence[str]) -> str:
    rest = [a for a in argv if a != "--resume"]
    return shlex.join(["rlvr-gym", *rest, "--resume"])


def cmd_eval(args: argparse.Namespace) -> int:
    config = _eval_config(args)
    try:
        _, summary = run_eval(config, show_progress=not args.no_progress)
    except EvalInterrupted as stop:
        print_summary(f"{config.env} with {config.agent.spec} (interrupted)", stop.summary)
        console.print(
            f"[yellow]interrupted[/]: {stop.summary['episodes']} episode(s) written to "
            f"{stop.summary['episodes_path']}\nresume with: {resume_command(args.argv)}",
            soft_wrap=True,
        )
        return 130
    print_summary(f"{config.env} with {config.agent.spec}", summary)
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


# ---- plug-in commands ----------------------------------------------------------------------------------------------
def plugin_commands() -> dict[str, importlib.metadata.EntryPoint]:
    return {ep.name: ep for ep in importlib.metadata.entry_points(group=COMMAND_GROUP)}


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="rlvr-gym", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("list", help="list registered envs")
    p.add_argument("--json", action="store_true")
    p.set_defaults(fn=cmd_list)

    p = sub.add_parser(
        "eval",
        help="evaluate an agent on an env",
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
    p.set_defaults(fn=cmd_eval)

    p = sub.add_parser(
        "verify",
        help="score a JSONL of external model outputs with the env's verifier",
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
        help="play an env yourself at the terminal",
        description="Play one task of an env at the terminal: type actions, see the env's replies "
        "and the verdict. Ctrl-D or Ctrl-C quits.",
    )
    p.add_argument("env", help="env id, e.g. rlvr/Math-v0 (see `rlvr-gym list`)")
    p.add_argument("--task-index", type=int, help="which task (default: drawn from --seed)")
    p.add_argument("--seed", type=int)
    p.add_argument("--env-arg", action="append", metavar="KEY=VALUE", help="env constructor argument")
    p.set_defaults(fn=cmd_play)

    for name in ("train", "report"):
        p = sub.add_parser(name, help=f"{name} (from the training extra)", add_help=False)
        p.add_argument("rest", nargs=argparse.REMAINDER)
        p.set_defaults(fn=None, plugin=name)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    commands = plugin_commands()
    if argv and argv[0] in commands:
        return int(commands[argv[0]].load()(argv[1:]) or 0)
    parser = build_parser()
    args = parser.parse_args(argv)
    args.argv = argv
    if args.fn is None:
        console.print(
            f"[red]{args.plugin}: not available; install the training extra: pip install 'rlvr-gym[train]'[/]"
        )
        return 2
    try:
        return int(args.fn(args) or 0)
    except (KeyError, ValueError, IndexError, FileNotFoundError, EnvUnavailable, RunLocked) as exc:
        message = exc.args[0] if isinstance(exc, KeyError) and exc.args else exc
        console.print(f"[red]error:[/] {message}", markup=True, highlight=False)
        return 2
    except KeyboardInterrupt:
        console.print("[yellow]interrupted[/]")
        return 130


if __name__ == "__main__":
    raise SystemExit(main())
