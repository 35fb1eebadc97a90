"""`rlvr-gym trainer-data FORMAT ENV_ID -n N -o PATH`: task datasets for other trainers, with no answers in them.

Formats: `verl` (parquet for the `rlvr_gym` agent loop), `nemo-gym` (JSONL for the resources-server template),
`trl` (a `datasets` folder for GRPOTrainer with `environment_factory`).
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence
from pathlib import Path


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="rlvr-gym trainer-data", description=__doc__.splitlines()[0])
    parser.add_argument("format", choices=["verl", "nemo-gym", "trl"])
    parser.add_argument("env", help="env id, e.g. rlvr/Sokoban-v0")
    parser.add_argument("-n", "--num-tasks", type=int, required=True)
    parser.add_argument("-o", "--output", required=True, help="file (verl: .parquet, nemo-gym: .jsonl) or folder (trl)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--env-kwargs", default="{}", help="JSON object of env options, e.g. '{\"split\": \"eval\"}'")
    parser.add_argument("--agent-name", default="rlvr_gym_agent", help="nemo-gym: the agent_ref name of the rows")
    args = parser.parse_args(argv)
    env_kwargs = json.loads(args.env_kwargs)
    if not isinstance(env_kwargs, dict):
        parser.error("--env-kwargs must be a JSON object")
    out = Path(args.output)
    if args.format == "verl":
        from .verl import make_parquet

        make_parquet(args.env, args.num_tasks, out, seed=args.seed, env_kwargs=env_kwargs)
    elif args.format == "nemo-gym":
        from .nemo_gym import write_jsonl

        write_jsonl(args.env, args.num_tasks, out, seed=args.seed, agent_name=args.agent_name, env_kwargs=env_kwargs)
    else:
        import datasets

        from .trl import make_dataset

        datasets.disable_progress_bars()
        make_dataset(args.env, args.num_tasks, seed=args.seed, env_kwargs=env_kwargs).save_to_disk(str(out))
    print(f"{args.format}: {args.num_tasks} tasks of {args.env} -> {out}")
    return 0
