"""The viewer's web app: read-only pages over indexed runs (FastAPI, server-rendered, no script on any page).

Security model: model output is untrusted text. Every value goes through Jinja2's autoescaping, and every response
carries a Content-Security-Policy without `script-src`, so nothing from an episode can run in the browser. Requests
pass the shared guard (`rlvr_gym.http_guard`: launch token, Host allow-list, bounded bodies); the CLI binds
127.0.0.1 unless told otherwise. An episode line that cannot be shown is a 422 page, never a crash.
"""

from __future__ import annotations

import functools
import json
import math
from collections import Counter
from collections.abc import Sequence
from html import escape
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

from fastapi import FastAPI, HTTPException, Query, Request
from fastapi.responses import HTMLResponse

from ..http_guard import GuardPolicy, guard
from .index import Row, RunIndex, load_run
from .pages import make_templates

PAGE_SIZE = 50
CSP = "default-src 'none'; img-src data:; style-src 'unsafe-inline'; form-action 'self'; base-uri 'none'"


def run_stats(rows: Sequence[Row]) -> dict[str, Any]:
    """Summary numbers as `eval` reports them: rewards over scored + invalid, errors counted apart."""
    rewards = [r.reward for r in rows if r.reward is not None]
    components: dict[str, list[float]] = {}
    for r in rows:
        for k, v in r.components.items():
            components.setdefault(k, []).append(v)
    bins = Counter(min(int(x * 5), 4) if 0.0 <= x <= 1.0 else (-1 if x < 0 else 5) for x in rewards)
    labels = {-1: "<0", 0: "0-0.2", 1: "0.2-0.4", 2: "0.4-0.6", 3: "0.6-0.8", 4: "0.8-1", 5: ">1"}
    return {
        "episodes": len(rows),
        "pass_rate": sum(r.passed for r in rows) / max(1, len(rows)),
        "mean_reward": sum(rewards) / max(1, len(rewards)),
        "outcomes": dict(Counter(r.outcome for r in rows)),
        "errors": dict(Counter(r.error for r in rows if r.error)),
        "components": {k: sum(v) / len(v) for k, v in sorted(components.items())},
        "histogram": [(labels[b], bins[b]) for b in sorted(bins)],
    }


def filter_rows(rows: Sequence[Row], f: dict[str, str]) -> list[int]:
    """Positions of the rows matching the table's filters, in the requested order (one pass over the rows)."""
    outcome, env, q = f.get("outcome"), f.get("env"), f.get("q")
    passed = {"0": False, "1": True}.get(f.get("passed", ""))
    try:
        low = float(f["min_reward"]) if f.get("min_reward") else None
    except ValueError:
        low = None
    if not (outcome or env or q or passed is not None or low is not None):
        positions = list(range(len(rows)))
    else:
        positions = [
            i for i, r in enumerate(rows)
            if (not outcome or r.outcome == outcome) and (passed is None or r.passed == passed)
            and (not env or env in r.env_id) and (not q or q in r.task_id or q in r.episode_id)
            and (low is None or (r.reward is not None and r.reward >= low))
        ]
    key = f.get("sort") or "line"
    field = key.lstrip("-")
    if field in ("reward", "seconds", "turns") or key == "-line":
        def order(i: int) -> tuple[bool, float]:
            value = getattr(rows[i], field)
            return value is None, value or 0.0
        positions.sort(key=order, reverse=key.startswith("-"))
    return positions


def svg_chart(points: list[tuple[float, float]], width: int = 520, height: int = 160) -> str:
    """A polyline chart as inline SVG (numbers only, so nothing here needs escaping beyond the labels)."""
    xs, ys = [p[0] for p in points], [p[1] for p in points]
    x0, x1, y0, y1 = min(xs), max(xs), min(ys), max(ys)
    sx = (width - 40) / ((x1 - x0) or 1)
    sy = (height - 20) / ((y1 - y0) or 1)
    coords = " ".join(f"{30 + (x - x0) * sx:.1f},{height - 10 - (y - y0) * sy:.1f}" for x, y in points)
    return (f'<svg width="{width}" height="{height}" role="img"><polyline fill="none" stroke="#36c" stroke-width="2" '
            f'points="{coords}"/><text x="0" y="12" font-size="11">{escape(f"{y1:.3g}")}</text>'
            f'<text x="0" y="{height - 2}" font-size="11">{escape(f"{y0:.3g}")}</text></svg>')


def collapse_alarms(records: list[dict[str, Any]], window: int = 3) -> list[str]:
    """Training-health warnings: reward variance → 0, entropy collapse, advantage collapse."""
    tail = records[-window:]
    alarms = []
    if len(tail) == window and all(r.get("reward_std", 1.0) < 1e-6 for r in tail):
        alarms.append(f"reward variance collapsed: reward_std ≈ 0 for the last {window} steps")
    entropies = [r["entropy"] for r in records if isinstance(r.get("entropy"), int | float)]
    if len(entropies) >= 2 and entropies[-1] < 0.1 * max(entropies):
        alarms.append(f"entropy collapse: {entropies[-1]:.3g} is below 10% of its peak {max(entropies):.3g}")
    if tail and all(r.get("acr", 0.0) > 0.9 for r in tail):
        alarms.append("advantage collapse: ACR > 0.9 (most groups give no learning signal)")
    return alarms


def read_metrics(folder: Path) -> list[dict[str, Any]]:
    path = folder / "metrics.jsonl"
    records = []
    if path.is_file():
        for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
            try:
                value = json.loads(line)
            except ValueError:
                continue
            if isinstance(value, dict) and isinstance(value.get("step"), int | float):
                records.append(value)
    return records


def viewer_policy(token: str | None = None) -> GuardPolicy:
    """Read-only pages: no JSON endpoints, tiny bodies (no route takes one)."""
    return GuardPolicy(token=token, max_body_bytes=64 << 10)


def create_app(targets: Sequence[str | Path], *, policy: GuardPolicy | None = None) -> FastAPI:
    """The viewer over `targets`; `policy` defaults to `viewer_policy()` (loopback Host names, no token)."""
    runs: list[RunIndex] = [load_run(t) for t in targets]
    stats = [run_stats(run.rows) for run in runs]
    templates = make_templates()
    app = FastAPI(title="rlvr-gym viewer", docs_url=None, redoc_url=None, openapi_url=None)

    @app.middleware("http")
    async def content_policy(request: Request, call_next: Any) -> Any:
        response = await call_next(request)
        response.headers["Content-Security-Policy"] = CSP
        return response

    guard(app, policy or viewer_policy())

    @functools.lru_cache(maxsize=64)
    def cached_filter(rid: int, items: tuple[tuple[str, str], ...]) -> list[int]:
        return filter_rows(runs[rid].rows, dict(items))

    app.state.clear_cache = cached_filter.cache_clear  # benchmarks time the uncached path

    def page(name: str, status: int = 200, **context: Any) -> HTMLResponse:
        return HTMLResponse(templates.get_template(name).render(**context), status_code=status)

    def run_at(rid: int) -> RunIndex:
        if not 0 <= rid < len(runs):
            raise HTTPException(404, f"no run {rid}")
        return runs[rid]

    @app.get("/", response_class=HTMLResponse)
    def index() -> HTMLResponse:
        return page("runs", title="Runs", runs=runs, stats=stats)

    @app.get("/run/{rid}", response_class=HTMLResponse)
    def run_page(rid: int, request: Request, page_no: int = Query(0, alias="page", ge=0)) -> HTMLResponse:
        run = run_at(rid)
        keys = ("outcome", "passed", "env", "q", "min_reward", "sort")
        f = {k: request.query_params.get(k, "") for k in keys}
        matched = cached_filter(rid, tuple(sorted(f.items())))
        pages = max(1, math.ceil(len(matched) / PAGE_SIZE))
        page_no = min(page_no, pages - 1)
        shown = [(i, run.rows[i]) for i in matched[page_no * PAGE_SIZE:(page_no + 1) * PAGE_SIZE]]
        manifest = run.read_json("manifest.json")
        return page("run", title=str(run.path), rid=rid, stats=stats[rid], f=f, rows=shown, total=len(matched),
                    page=page_no, pages=pages, query=urlencode({k: v for k, v in f.items() if v}),
                    broken=run.broken_lines, manifest=json.dumps(manifest, indent=1) if manifest else None)

    @app.get("/run/{rid}/episode/{pos}", response_class=HTMLResponse)
    def episode_page(rid: int, pos: int) -> HTMLResponse:
        run = run_at(rid)
        if not 0 <= pos < len(run.rows):
            raise HTTPException(404, f"no episode {pos}")
        try:
            ep = run.episode(pos)
            return page("episode", title=f"Episode {ep.get('episode_id', pos)}", rid=rid, ep=ep)
        except Exception as exc:  # any line of the file is untrusted: a malformed one is shown as such
            return page("bad_line", title="Unreadable episode", rid=rid, line=run.rows[pos].line,
                        reason=f"{type(exc).__name__}: {str(exc)[:300]}", status=422)

    @app.get("/diff", response_class=HTMLResponse)
    def diff_page(a: int = 0, b: int = 1) -> HTMLResponse:
        ra, rb = run_at(a), run_at(b)
        before = {(r.task_id, r.sample_index): (i, r) for i, r in enumerate(ra.rows)}
        after = {(r.task_id, r.sample_index): (i, r) for i, r in enumerate(rb.rows)}
        common = sorted(set(before) & set(after))
        flipped = [{"task": k[0], "sample": k[1], "pa": before[k][0], "pb": after[k][0],
                    "before": "pass" if before[k][1].passed else before[k][1].outcome,
                    "after": "pass" if after[k][1].passed else after[k][1].outcome}
                   for k in common if before[k][1].passed != after[k][1].passed]
        return page("diff", title="Diff", a=str(ra.path), b=str(rb.path), ia=a, ib=b, both=len(common),
                    flipped=flipped)

    @app.get("/run/{rid}/curves", response_class=HTMLResponse)
    def curves_page(rid: int) -> HTMLResponse:
        records = read_metrics(run_at(rid).folder)
        names = [k for k in ("reward_mean", "pass_rate", "eval/reward_mean", "reward_std", "acr", "entropy", "kl",
                             "response_tokens") if any(isinstance(r.get(k), int | float) for r in records)]
        charts = []
        for name in names:
            points = [(float(r["step"]), float(r[name])) for r in records if isinstance(r.get(name), int | float)]
            if len(points) >= 1:
                charts.append((name, svg_chart(points if len(points) > 1 else points * 2)))
        return page("curves", title="Training curves", rid=rid, charts=charts, alarms=collapse_alarms(records))

    return app
