"""Offline path: episodes (e.g. from `rlvr-gym eval --group-size G`) -> a DPO preference dataset in TRL's format.

Pairs come from within a group (same task, same opening observation), so chosen and rejected share the prompt and
differ only in what the policy did: the data side of G2D-style offline preference learning. Two TRL formats:
- `conversational` (default): `prompt` = the opening messages, `chosen`/`rejected` = the rest of the conversation
  (assistant turns and, for multi-turn episodes, the env replies between them) as message lists;
- `standard`: plain strings; the prompt is rendered with the tokenizer's chat template when one is given.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any, Literal

from rlvr_gym.types import Episode, Message


def load_episodes(path: str | Path) -> list[Episode]:
    """Episodes from a runner JSONL (a torn last line is skipped)."""
    out = []
    for line in Path(path).read_text(encoding="utf-8").splitlines():
        if line.strip():
            try:
                out.append(Episode.model_validate_json(line))
            except ValueError:
                continue
    return out


def _continuation(ep: Episode, multi_turn: str) -> list[Message]:
    msgs: list[Message] = []
    for k, turn in enumerate(ep.turns):
        if k > 0:
            if multi_turn == "first_turn":
                break
            msgs.extend(turn.observation)
        msgs.append(Message(role="assistant", content=turn.action))
    return msgs


def _pairs(
    group: list[Episode], strategy: str, min_margin: float, max_pairs: int | None
) -> list[tuple[Episode, Episode]]:
    ranked = sorted(group, key=lambda e: (-e.reward, e.sample_index))
    if strategy == "best_worst":
        best, worst = ranked[0], ranked[-1]
        return [(best, worst)] if best.reward - worst.reward > min_margin else []
    pairs = [(a, b) for i, a in enumerate(ranked) for b in ranked[i + 1 :] if a.reward - b.reward > min_margin]
    return pairs[:max_pairs] if max_pairs is not None else pairs


def episodes_to_dpo(
    episodes: Iterable[Episode] | str | Path,
    *,
    strategy: Literal["best_worst", "all"] = "best_worst",
    min_margin: float = 0.0,
    max_pairs_per_group: int | None = None,
    format: Literal["conversational", "standard"] = "conversational",
    multi_turn: Literal["full", "first_turn"] = "full",
    system_prompt: str | None = None,
    tokenizer: Any = None,
    with_metadata: bool = True,
) -> list[dict[str, Any]]:
    """DPO rows `{prompt, chosen, rejected}` (+ `score_chosen`, `score_rejected`, `group_id` when with_metadata).

    A pair needs a reward gap > `min_margin`; failed episodes (typed `error`) and identical continuations are
    skipped. `strategy="best_worst"` yields at most one pair per group, `"all"` every ordered pair with a gap.
    """
    eps = load_episodes(episodes) if isinstance(episodes, (str, Path)) else list(episodes)
    groups: dict[str, list[Episode]] = {}
    for ep in eps:
        if ep.error is None and ep.turns:
            groups.setdefault(ep.group_id, []).append(ep)
    rows: list[dict[str, Any]] = []
    for gid, group in groups.items():
        for chosen, rejected in _pairs(group, strategy, min_margin, max_pairs_per_group):
            c, r = _continuation(chosen, multi_turn), _continuation(rejected, multi_turn)
            if [m.text() for m in c] == [m.text() for m in r]:
                continue
            prompt = ([Message(role="system", content=system_prompt)] if system_prompt else []) + list(
                chosen.turns[0].observation
            )
            row = _format(prompt, c, r, format, tokenizer)
            if with_metadata:
                row.update(
                    {
                        "score_chosen": chosen.reward,
                        "score_rejected": rejected.reward,
                        "group_id": gid,
                        "task_id": chosen.task_id,
                    }
                )
            rows.append(row)
    return rows


def _format(
    prompt: Sequence[Message], chosen: Sequence[Message], rejected: Sequence[Message], fmt: str, tokenizer: Any
) -> dict[str, Any]:
    if fmt == "conversational":
        dump = lambda ms: [{"role": m.role, "content": m.text()} for m in ms]  # noqa: E731
        return {"prompt": dump(prompt), "chosen": dump(chosen), "rejected": dump(rejected)}
    if tokenizer is not None:
        from rlvr_gym.agents.templates import render_chat

        text_prompt = render_chat(tokenizer, list(prompt), add_generation_prompt=True)
    else:
        text_prompt = "\n\n".join(m.text() for m in prompt)
    join = lambda ms: "\n\n".join(m.text() for m in ms)  # noqa: E731
    return {"prompt": text_prompt, "chosen": join(chosen), "rejected": join(rejected)}


def write_jsonl(rows: Iterable[dict[str, Any]], path: str | Path) -> int:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    n = 0
    with path.open("w", encoding="utf-8") as f:
        for row in rows:
            f.write(json.dumps(row) + "\n")
            n += 1
    return n
