"""The `rlvr-gym` command: list envs, evaluate agents, verify external outputs, play, train, report.

`train` and `report` live with the algorithms; they are found through the entry-point group `rlvr_gym.commands`
(name -> `fn(argv: list[str]) -> int`) so the core does not import the training stack.
"""

from __future__ import annotations

import argparse
import asyncio
import importlib.metadata
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn
from rich.table import Table

from .agent import make_agent
from .config import AgentConfig, EvalConfig, apply_overrides, load_yaml, parse_value
from .registry import env_info, list_envs, load_plugins, make
from .rollout import collect
from .summary import summarize, summarize_by
from .types import Episode, Task

COMMAND_GROUP = "rlvr_gym.commands"
console = Console(stderr=True)


# ---- list ------------------------------------------------------------------------------------------------------------
def cmd_list(args: argparse.Namespace) -> int:
    envs = list_envs()
    errors = load_plugins()
    if args.json:
        rows = [
            {"id": e.id, "family": e.family, "description": e.description, "entry_point": e.entry_point}
            for e in envs
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
        "max_error_rate": args.max_error_rate,
        "min_pass_rate": args.min_pass_rate,
    }
    data.update({k: v for k, v in flags.items() if v is not None})
    if args.resume:
        data["resume"] = True
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


def run_eval(config: EvalConfig, *, show_progress: bool = True) -> tuple[list[Episode], dict[str, Any]]:
    env_info(config.env)
    agent_cfg = config.agent if isinstance(config.agent, AgentConfig) else AgentConfig.model_validate(config.agent)
    agent = make_agent(agent_cfg.spec, **agent_cfg.factory_options(config.seed))
    output = config.output_path()
    tasks = list(range(config.task_offset, config.task_offset + config.num_tasks))
    total = len(tasks) * config.group_size
    stats = {"n": 0, "reward": 0.0, "passed": 0, "errors": 0}

    with _progress() as progress:
        bar = progress.add_task(config.env, total=total, reward=0.0, passed=0.0, errors=0, visible=show_progress)

        def on_episode(episode: Episode) -> None:
            stats["n"] += 1
            stats["reward"] += episode.reward or 0.0
            stats["passed"] += int(episode.passed)
            stats["errors"] += int(episode.error is not None)
            n = stats["n"]
            progress.update(
                bar, advance=1, reward=stats["reward"] / n, passed=stats["passed"] / n, errors=stats["errors"]
            )

        async def go() -> list[Episode]:
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
                    env_kwargs=config.env_kwargs,
                    step_timeout_s=config.step_timeout_s,
                    episode_timeout_s=config.episode_timeout_s,
                    on_episode=on_episode,
                )
            finally:
                await agent.aclose()

        episodes = asyncio.run(go())
    summary = summarize(episodes)
    summary["by"] = summarize_by(episodes, config.group_by or None)
    summary["config"] = json.loads(config.model_dump_json())
    summary["episodes_path"] = str(output)
    summary_path = output.with_name("summary.json")
    summary_path.write_text(json.dumps(summary, indent=2), encoding="utf-8")
    summary["summary_path"] = str(summary_path)
    return episodes, summary


def print_summary(title: str, summary: dict[str, Any]) -> None:
    table = Table(title=title)
    table.add_column("metric")
    table.add_column("value", justify="right")
    for key in ("episodes", "groups", "mean_reward", "std_reward", "pass_rate", "pass_at_group", "mean_turns",
                "invalid_action_rate", "error_rate"):
        value = summary[key]
        table.add_row(key, f"{value:.4f}" if isinstance(value, float) else str(value))
    for name, value in summary["components"].items():
        table.add_row(f"component:{name}", f"{value:.4f}")
    for kind, count in summary["errors"].items():
        table.add_row(f"error:{kind}", str(count))
    out = Console()
    out.print(table)
    for key, buckets in (summary.get("by") or {}).items():
        by_table = Table(title=f"by {key}")
        for column in (key, "episodes", "mean_reward", "pass_rate", "errors"):
            by_table.add_column(column)
        for value, s in buckets.items():
            by_table.add_row(value, str(s["episodes"]), f"{s['mean_reward']:.4f}", f"{s['pass_rate']:.4f}",
                             str(sum(s["errors"].values())))
        out.print(by_table)


def cmd_eval(args: argparse.Namespace) -> int:
    config = _eval_config(args)
    episodes, summary = run_eval(config, show_progress=not args.no_progress)
    print_summary(f"{config.env} with {config.agent.spec}", summary)
    console.print(f"episodes: {summary['episodes_path']}\nsummary:  {summary['summary_path']}")
    if summary["error_rate"] > config.max_error_rate:
        console.print(f"[red]error rate {summary['error_rate']:.3f} exceeds {config.max_error_rate}[/]")
        return 1
    if config.min_pass_rate is not None and summary["pass_rate"] < config.min_pass_rate:
        console.print(f"[red]pass rate {summary['pass_rate']:.3f} below {config.min_pass_rate}[/]")
        return 1
    return 0


# ---- verify ----------------------------------------------------------------------------------------------------------
def resolve_task(env: Any, row: dict[str, Any], id_index: dict[str, int]) -> Task:
    """A row names its task by a full `task`, a `task_index`, or a `task_id` (looked up among the env's tasks)."""
    if row.get("task") is not None:
        return env.coerce_task(row["task"])
    if row.get("task_index") is not None:
        return env.get_task(int(row["task_index"]))
    task_id = str(row.get("task_id", ""))
    if task_id in id_index:
        return env.get_task(id_index[task_id])
    for candidate in reversed([part for part in task_id.replace(":", "-").split("-") if part.isdigit()]):
        task = env.get_task(int(candidate))
        if task.id == task_id:
            return task
    raise KeyError(f"cannot resolve task {task_id!r}: give task_index or the full task")


def cmd_verify(args: argparse.Namespace) -> int:
    env = make(args.env, **{k: parse_value(v) for k, v in (kv.partition("=")[::2] for kv in args.env_arg or [])})
    id_index: dict[str, int] = {}
    if env.num_tasks is not None and env.num_tasks <= 100_000:
        id_index = {env.get_task(i).id: i for i in range(env.num_tasks)}
    rows = [json.loads(line) for line in Path(args.outputs).read_text(encoding="utf-8").splitlines() if line.strip()]
    scored = []
    for row in rows:
        try:
            task = resolve_task(env, row, id_index)
            actions = row["outputs"] if "outputs" in row else [row.get("output", "")]
            verdict = env.verify(task, [str(a) for a in actions])
            scored.append({**row, "task_id": task.id, "verdict": verdict.model_dump()})
        except Exception as exc:  # one bad row is reported, not fatal
            scored.append({**row, "verdict": None, "error": f"{type(exc).__name__}: {exc}"})
    out_path = Path(args.output) if args.output else Path(args.outputs).with_suffix(".scored.jsonl")
    out_path.write_text("".join(json.dumps(r) + "\n" for r in scored), encoding="utf-8")
    ok = [r for r in scored if r.get("verdict")]
    mean = sum(r["verdict"]["reward"] for r in ok) / max(1, len(ok))
    passed = sum(r["verdict"]["passed"] for r in ok) / max(1, len(ok))
    print(json.dumps({"rows": len(scored), "scored": len(ok), "mean_reward": mean, "pass_rate": passed,
                      "errors": len(scored) - len(ok), "output": str(out_path)}))
    return 0 if len(ok) == len(scored) else 1


# ---- play ----
def _text_of(message: dict[str, Any]) -> str:
    content = message.get("content")
    if isinstance(content, list):
        return "".join(p.get("text") or "[image]" for p in content if isinstance(p, dict))
    return content or ""


# ---- play --------------------------------------------------------------------------------------------------------------
def cmd_play(args: argparse.Namespace) -> int:
    env = make(args.env)
    options = {"task_index": args.task_index} if args.task_index is not None else None
    obs, info = env.reset(seed=args.seed, options=options)
    out = Console()
    out.print(f"[bold]{args.env}[/] task {info['task_id']} (max {env.max_turns} turns). "
              "Type your action; '\\n' inserts a newline; Ctrl-D quits.")
    while True:
        for message in obs:
            out.print(f"[cyan]\\[{message['role']}][/]")
            out.print(_text_of(message), markup=False, highlight=False)
        try:
            action = input("> ").replace("\\n", "\n")
        except EOFError:
            return 0
        obs, reward, terminated, truncated, info = env.step(action)
        if not info.get("valid_action", True):
            out.print("[yellow](invalid action)[/]")
        if terminated or truncated:
            for message in obs:
                out.print(f"[cyan]\\[{message['role']}][/]")
                out.print(_text_of(message), markup=False, highlight=False)
            verdict = info["verdict"]
            out.print(f"[bold]done[/]: reward {verdict.reward:.3f}, passed {verdict.passed}, "
                      f"components {verdict.components}")
            if verdict.feedback:
                out.print(verdict.feedback, markup=False)
            return 0


# ---- plug-in commands ----------------------------------------------------------------------------------------------
def plugin_commands() -> dict[str, importlib.metadata.EntryPoint]:
    return {ep.name: ep for ep in importlib.metadata.entry_points(group=COMMAND_GROUP)}


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="rlvr-gym", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("list", help="list registered envs")
    p.add_argument("--json", action="store_true")
    p.set_defaults(fn=cmd_list)

    p = sub.add_parser("eval", help="evaluate an agent on an env")
    p.add_argument("env", nargs="?")
    p.add_argument("--config", help="YAML EvalConfig (flags override it)")
    p.add_argument("--agent", help="agent spec: smollm2 (default), oracle, constant:<text>, hf:<path>, "
                                   "openai:<model>@<base_url>, vllm:<path>, replay:<file>")
    p.add_argument("-n", "--num-tasks", type=int)
    p.add_argument("--task-offset", type=int)
    p.add_argument("-g", "--group-size", type=int)
    p.add_argument("-c", "--concurrency", type=int)
    p.add_argument("--seed", type=int)
    p.add_argument("-o", "--output", help="episodes JSONL (summary.json goes beside it)")
    p.add_argument("--resume", action="store_true", help="continue a partial episodes file")
    p.add_argument("--temperature", type=float)
    p.add_argument("--max-new-tokens", type=int)
    p.add_argument("--system-prompt")
    p.add_argument("--step-timeout", type=float)
    p.add_argument("--episode-timeout", type=float)
    p.add_argument("--group-by", action="append", help="task metadata key to break results down by")
    p.add_argument("--env-arg", action="append", metavar="KEY=VALUE", help="env constructor argument")
    p.add_argument("--set", action="append", metavar="KEY=VALUE", help="override any config field (dotted)")
    p.add_argument("--max-error-rate", type=float)
    p.add_argument("--min-pass-rate", type=float)
    p.add_argument("--no-progress", action="store_true")
    p.set_defaults(fn=cmd_eval)

    p = sub.add_parser("verify", help="score a JSONL of external model outputs with the env's verifier")
    p.add_argument("env")
    p.add_argument("outputs", help='JSONL rows {"task_id"|"task_index"|"task", "output"|"outputs"}')
    p.add_argument("-o", "--output")
    p.add_argument("--env-arg", action="append", metavar="KEY=VALUE")
    p.set_defaults(fn=cmd_verify)

    p = sub.add_parser("play", help="play an env yourself at the terminal")
    p.add_argument("env")
    p.add_argument("--task-index", type=int)
    p.add_argument("--seed", type=int)
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
    if args.fn is None:
        console.print(f"[red]{args.plugin}: not available; install the training extra: pip install 'rlvr-gym[train]'[/]")
        return 2
    try:
        return int(args.fn(args) or 0)
    except (KeyError, ValueError, FileNotFoundError) as exc:
        console.print(f"[red]error:[/] {exc}")
        return 2


if __name__ == "__main__":
    raise SystemExit(main())
