"""Server-rendered pages of the viewer (Jinja2 with autoescape: model text always reaches the page as text).

No page runs script: the Content-Security-Policy the app sends forbids it, so even a rendering mistake cannot turn
model output into code. Images are shown only from `data:image/...;base64,` URLs that match a strict pattern.
"""

from __future__ import annotations

import json
import re
from typing import Any

from jinja2 import DictLoader, Environment, select_autoescape

SAFE_IMAGE = re.compile(r"data:image/(png|jpeg|gif|webp|apng);base64,[A-Za-z0-9+/=\s]{1,20000000}")

BASE = """<!doctype html><html><head><meta charset="utf-8"><title>{{ title }} · rlvr-gym</title>
<style>
body{font:14px system-ui,sans-serif;margin:1.5em;color:#222} table{border-collapse:collapse;margin:.5em 0}
td,th{border:1px solid #ccc;padding:3px 7px;text-align:left;vertical-align:top} th{background:#f3f3f3}
pre{white-space:pre-wrap;word-break:break-word;background:#f8f8f8;padding:6px;margin:2px 0;max-height:40em;overflow:auto}
.pass{color:#176b2c}.fail{color:#a11}.error{color:#b35900}.alarm{background:#fde2e2;padding:4px 8px}
.msg{border-left:3px solid #99c;padding-left:8px;margin:6px 0}.role{font-weight:600;color:#446}
img.frame{max-width:360px;border:1px solid #aaa;margin:2px} nav a{margin-right:1em}
</style></head><body><nav><a href="/">runs</a>{% block nav %}{% endblock %}</nav><h1>{{ title }}</h1>
{% block body %}{% endblock %}</body></html>"""

RUNS = """{% extends "base" %}{% block body %}
<table><tr><th>#</th><th>episodes file</th><th>episodes</th><th>pass rate</th><th>mean reward</th><th>errors</th></tr>
{% for run in runs %}<tr><td>{{ loop.index0 }}</td><td><a href="/run/{{ loop.index0 }}">{{ run.path }}</a></td>
<td>{{ run.rows|length }}</td><td>{{ '%.3f'|format(stats[loop.index0].pass_rate) }}</td>
<td>{{ '%.3f'|format(stats[loop.index0].mean_reward) }}</td><td>{{ stats[loop.index0].errors }}</td></tr>{% endfor %}
</table>
{% if runs|length > 1 %}<form action="/diff"><label>diff run <input name="a" value="0" size="2"></label>
<label>against <input name="b" value="1" size="2"></label> <button>show flipped tasks</button></form>{% endif %}
{% endblock %}"""

RUN = """{% extends "base" %}{% block nav %}<a href="/run/{{ rid }}/curves">training curves</a>{% endblock %}
{% block body %}
<h2>Summary</h2>
<table><tr><th>episodes</th><td>{{ stats.episodes }}</td><th>pass rate</th><td>{{ '%.3f'|format(stats.pass_rate) }}</td>
<th>mean reward (scored + invalid)</th><td>{{ '%.3f'|format(stats.mean_reward) }}</td></tr>
<tr><th>outcomes</th><td colspan="5">{% for k, v in stats.outcomes.items() %}{{ k }}: {{ v }} {% endfor %}</td></tr>
<tr><th>errors by kind</th><td colspan="5">{% for k, v in stats.errors.items() %}{{ k }}: {{ v }} {% endfor %}</td></tr>
<tr><th>reward histogram</th><td colspan="5">{% for label, n in stats.histogram %}[{{ label }}]: {{ n }} {% endfor %}</td></tr>
<tr><th>component means</th><td colspan="5">{% for k, v in stats.components.items() %}{{ k }}={{ '%.3f'|format(v) }} {% endfor %}</td></tr>
{% if broken %}<tr><th>unreadable lines</th><td colspan="5">{{ broken|join(', ') }}</td></tr>{% endif %}
</table>
{% if manifest %}<details><summary>run manifest</summary><pre>{{ manifest }}</pre></details>{% endif %}
<h2>Episodes</h2>
<form id="filters"><label>outcome <select name="outcome"><option value="">any</option>
{% for o in ["scored", "invalid", "error"] %}<option {% if f.outcome == o %}selected{% endif %}>{{ o }}</option>{% endfor %}
</select></label> <label>passed <select name="passed"><option value="">any</option>
<option value="1" {% if f.passed == "1" %}selected{% endif %}>yes</option><option value="0" {% if f.passed == "0" %}selected{% endif %}>no</option></select></label>
<label>env <input name="env" value="{{ f.env }}" size="14"></label>
<label>task / episode contains <input name="q" value="{{ f.q }}" size="14"></label>
<label>reward ≥ <input name="min_reward" value="{{ f.min_reward }}" size="4"></label>
<label>sort <select name="sort">{% for s in ["line", "reward", "-reward", "seconds", "-seconds", "turns"] %}
<option {% if f.sort == s %}selected{% endif %}>{{ s }}</option>{% endfor %}</select></label>
<button id="apply">filter</button></form>
<p id="count">{{ total }} matching episodes · page {{ page + 1 }} of {{ pages }}</p>
<table id="episodes"><tr><th>line</th><th>env</th><th>task</th><th>sample</th><th>reward</th><th>outcome</th><th>error</th>
<th>turns</th><th>seconds</th><th>components</th></tr>
{% for pos, r in rows %}<tr><td><a class="episode-link" href="/run/{{ rid }}/episode/{{ pos }}">{{ r.line }}</a></td><td>{{ r.env_id }}</td>
<td>{{ r.task_id }}</td><td>{{ r.sample_index }}</td><td>{{ '' if r.reward is none else '%.3f'|format(r.reward) }}</td>
<td class="{{ 'pass' if r.passed else ('error' if r.outcome == 'error' else 'fail') }}">{{ r.outcome }}{{ ' ✓' if r.passed else '' }}</td>
<td>{{ r.error or '' }}</td><td>{{ r.turns }}</td><td>{{ '%.2f'|format(r.seconds) }}</td>
<td>{% for k, v in r.components.items() %}{{ k }}={{ '%.2f'|format(v) }} {% endfor %}</td></tr>{% endfor %}
</table>
{% if page > 0 %}<a id="prev" href="?{{ query }}&page={{ page - 1 }}">previous</a>{% endif %}
{% if page + 1 < pages %}<a id="next" href="?{{ query }}&page={{ page + 1 }}">next</a>{% endif %}
{% endblock %}"""

EPISODE = """{% extends "base" %}{% block nav %}<a href="/run/{{ rid }}">back to run</a>{% endblock %}
{% block body %}
<table><tr><th>episode</th><td>{{ ep.episode_id }}</td><th>task</th><td>{{ ep.task_id }}</td></tr>
<tr><th>outcome</th><td>{{ ep.outcome }}</td><th>agent</th><td>{{ ep.agent }}</td></tr>
<tr><th>verdict</th><td colspan="3">{% if ep.verdict %}reward {{ ep.verdict.reward }} · passed {{ ep.verdict.passed }}
· valid {{ ep.verdict.get('valid', True) }}{% for k, v in (ep.verdict.components or {}).items() %} · {{ k }}={{ v }}{% endfor %}
{% if ep.verdict.feedback %}<pre>{{ ep.verdict.feedback }}</pre>{% endif %}{% else %}none{% endif %}</td></tr>
{% if ep.error %}<tr><th>error</th><td colspan="3" class="error">{{ ep.error.kind }}: {{ ep.error.message }}</td></tr>{% endif %}
</table>
{% for turn in ep.turns %}<h3>Turn {{ turn.index }} · reward {{ turn.reward }}{{ '' if turn.valid_action else ' · invalid action' }}</h3>
{% for m in turn.observation %}{{ message(m) }}{% endfor %}
<div class="msg"><span class="role">assistant</span>{% set img = image(turn.action) %}
{% if img %}<div><img class="frame" alt="frames" src="{{ img }}"></div>{% else %}<pre class="action">{{ turn.action }}</pre>{% endif %}</div>
{% if turn.info %}<details><summary>info</summary><pre>{{ pretty(turn.info) }}</pre></details>{% endif %}
{% endfor %}
{% if ep.final_observation %}<h3>Final observation</h3>{% for m in ep.final_observation %}{{ message(m) }}{% endfor %}{% endif %}
{% endblock %}"""

BAD_LINE = """{% extends "base" %}{% block nav %}<a href="/run/{{ rid }}">back to run</a>{% endblock %}
{% block body %}<p class="alarm">Line {{ line }} of the episodes file is not an episode this viewer can show
({{ reason }}).</p>{% endblock %}"""

MESSAGE = """{% macro message(m) %}<div class="msg"><span class="role">{{ m.role }}</span>
{% if m.content is string %}<pre>{{ m.content }}</pre>{% elif m.content %}{% for part in m.content %}
{% if part.type == 'image_url' and image((part.image_url or {}).get('url', '')) %}<img class="frame" alt="image" src="{{ image(part.image_url.url) }}">
{% else %}<pre>{{ part.text or '' }}</pre>{% endif %}{% endfor %}{% endif %}
{% for call in m.tool_calls or [] %}<pre>tool call {{ call.name }}({{ call.arguments }})</pre>{% endfor %}</div>{% endmacro %}"""

DIFF = """{% extends "base" %}{% block body %}
<p>{{ a }} → {{ b }}: {{ both }} episodes on the same (task, sample); {{ flipped|length }} flipped.</p>
<table id="flipped"><tr><th>task</th><th>sample</th><th>before</th><th>after</th></tr>
{% for f in flipped %}<tr><td>{{ f.task }}</td><td>{{ f.sample }}</td>
<td><a href="/run/{{ ia }}/episode/{{ f.pa }}">{{ f.before }}</a></td><td><a href="/run/{{ ib }}/episode/{{ f.pb }}">{{ f.after }}</a></td></tr>{% endfor %}
</table>{% endblock %}"""

CURVES = """{% extends "base" %}{% block nav %}<a href="/run/{{ rid }}">back to run</a>{% endblock %}
{% block body %}{% if not charts %}<p>No training metrics (metrics.jsonl) in this run's folder.</p>{% endif %}
{% for alarm in alarms %}<p class="alarm">{{ alarm }}</p>{% endfor %}
{% for name, svg in charts %}<h3>{{ name }}</h3>{{ svg|safe }}{% endfor %}{% endblock %}"""


def image(url: Any) -> str | None:
    """The URL if it is an inline image we are willing to show, else None (shown as text instead)."""
    if isinstance(url, str) and SAFE_IMAGE.fullmatch(url.strip()):
        return url.strip()
    return None


def pretty(value: Any) -> str:
    return json.dumps(value, indent=1, ensure_ascii=False, default=str)[:200_000]


def make_templates() -> Environment:
    env = Environment(loader=DictLoader({"base": BASE, "runs": RUNS, "run": RUN, "episode": MESSAGE + EPISODE,
                                         "diff": DIFF, "curves": CURVES, "bad_line": BAD_LINE}),
                      autoescape=select_autoescape(default=True, default_for_string=True))
    env.globals.update(image=image, pretty=pretty)
    return env
