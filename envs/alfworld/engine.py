"""The TextWorld PDDL engine behind ALFWorld, with memoised parsing and translation.

Stepping a TextWorld PDDL game re-parses the same grammar strings with TatSu on every derivation, and every
reset re-runs Fast Downward's PDDL→SAS translation of the same problem. Both are pure functions of their string
inputs, so they are memoised here, returning deep copies so no caller can alias cached objects. Patches are
scoped to textworld's PDDL modules (their module globals), installed at runtime from this package; site-packages
is never edited. `caching(False)` turns the caches off (benchmarks, the identity test). `install()` also makes
textworld's game loader close the game file it reads (it leaves it to the garbage collector).

A fourth change: textgen's `copy_context` deep-copies the derivation context's `variables` and `mapping` dicts
for every symbol, although derivation only adds keys to those dicts and never mutates their values (EntityInfo,
Placeholder, Variable); with caching on, fresh dicts with the same values are used instead. The identity test and
`benchmarks/alfworld_step.py` hash whole trajectories to show that the output does not change.

Fast Downward's `pddl2sas` overwrites `sys.argv` on every call (its `translate.options` module parses argv when
first imported) and keeps its translation options in module globals. The wrapper restores `sys.argv` and holds one
process-wide lock for the call, so env workers on threads neither see each other's argv nor mix optimised and
unoptimised translation options; `install()` imports `translate.options` once under a clean argv. The same lock
guards every engine call (`engine_lock()`): textworld parses with module-level TatSu parsers that are not
thread-safe, and the runner steps envs on worker threads. The engine is pure Python, so little is lost to the GIL.
"""

from __future__ import annotations

import contextlib
import copy
import json
import os
import sys
import threading
import types
from collections import OrderedDict
from collections.abc import Callable, Iterator
from typing import Any

_lock = threading.RLock()
_fd_lock = threading.RLock()  # the engine: Fast Downward's global argv/options, textworld's shared TatSu parsers
_installed = False
_enabled = True
_shallow_context = True
_MAX_ENTRIES = 4096


class _Memo:
    """A bounded LRU memo of a pure function; hits return deep copies of the stored result."""

    def __init__(self, fn: Callable[..., Any], name: str, copy_result: bool = True) -> None:
        self.fn = fn
        self.name = name
        self.copy_result = copy_result
        self.store: OrderedDict[Any, Any] = OrderedDict()
        self.hits = 0
        self.misses = 0

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if not _enabled:
            return self.fn(*args, **kwargs)
        key = (args, tuple(sorted(kwargs.items())))
        with _lock:
            if key in self.store:
                self.hits += 1
                self.store.move_to_end(key)
                value = self.store[key]
                return copy.deepcopy(value) if self.copy_result else value
        value = self.fn(*args, **kwargs)
        with _lock:
            self.misses += 1
            self.store[key] = copy.deepcopy(value) if self.copy_result else value
            while len(self.store) > _MAX_ENTRIES:
                self.store.popitem(last=False)
        return value

    def clear(self) -> None:
        with _lock:
            self.store.clear()
            self.hits = self.misses = 0


_memos: dict[str, _Memo] = {}


def _argv_safe(fn: Callable[..., Any]) -> Callable[..., Any]:
    def wrapped(*args: Any, **kwargs: Any) -> Any:
        with _fd_lock:
            original = sys.argv
            saved = list(original)
            try:
                return fn(*args, **kwargs)
            finally:
                original[:] = saved
                sys.argv = original

    return wrapped


def install() -> None:
    """Install the memoised functions into textworld's PDDL modules (idempotent)."""
    global _installed
    with _lock:
        if _installed:
            return
        import fast_downward

        _argv_safe(_import_translate_options)()
        import textworld.envs.pddl.logic as tw_logic
        import textworld.envs.pddl.textgen as tw_textgen

        textgen_parse = _Memo(tw_textgen._parse_and_convert, "textgen_parse")
        logic_parse = _Memo(tw_logic._parse_and_convert, "logic_parse")
        pddl2sas = _Memo(_argv_safe(fast_downward.pddl2sas), "pddl2sas")
        base_rule = tw_textgen.Rule
        rule_query = _Memo(base_rule.parse_conjunctive_query, "rule_query")

        class CachedRule(base_rule):  # type: ignore[misc, valid-type]
            """textworld's Rule with a memoised `parse_conjunctive_query` (only textgen sees this class)."""

            parse_conjunctive_query = staticmethod(rule_query)

        deep_copy_context = tw_textgen.copy_context

        def copy_context(context: dict[str, Any]) -> dict[str, Any]:
            if not (_enabled and _shallow_context):
                return deep_copy_context(context)
            return {
                "state": context["state"],
                "facts": context["facts"],
                "variables": dict(context["variables"]),
                "mapping": dict(context["mapping"]),
                "entity_infos": context["entity_infos"],
            }

        proxy = types.ModuleType("fast_downward")
        proxy.__dict__.update(fast_downward.__dict__)
        proxy.pddl2sas = pddl2sas  # type: ignore[attr-defined]

        tw_textgen._parse_and_convert = textgen_parse
        tw_textgen.Rule = CachedRule
        tw_textgen.copy_context = copy_context
        tw_logic._parse_and_convert = logic_parse
        tw_logic.fast_downward = proxy
        _close_game_files()
        _memos.update({m.name: m for m in (textgen_parse, logic_parse, pddl2sas, rule_query)})
        _installed = True


def _close_game_files() -> None:
    """textworld 1.7's `PddlEnv.load` reads a game file with `json.load(open(path))` and never closes it (one
    ResourceWarning and one open descriptor per game until the collector runs): read it in a `with` block here."""
    from textworld.envs.pddl.pddl import PddlEnv

    leaky = PddlEnv.load
    if getattr(leaky, "_closes_files", False):
        return

    def load(self: Any, filename_or_data: Any) -> None:
        if not isinstance(filename_or_data, (str, os.PathLike)):
            return leaky(self, filename_or_data)
        with open(filename_or_data, encoding="utf-8") as f:
            data = json.load(f)
        leaky(self, data)
        self._game_file = filename_or_data  # what the path branch sets (the `gamefile` info)

    load._closes_files = True  # type: ignore[attr-defined]
    PddlEnv.load = load


def _import_translate_options() -> None:
    sys.argv = ["translate.py", "domain", "task"]
    import fast_downward.translate.options  # noqa: F401  (parses sys.argv on first import)


@contextlib.contextmanager
def caching(enabled: bool, *, shallow_context: bool = True) -> Iterator[None]:
    """Temporarily switch the memo caches (and the shallow context copies) on or off; patches stay installed."""
    global _enabled, _shallow_context
    install()
    previous = _enabled, _shallow_context
    _enabled, _shallow_context = enabled, shallow_context
    try:
        yield
    finally:
        _enabled, _shallow_context = previous


def engine_lock() -> threading.RLock:
    """The process-wide lock every textworld engine call must hold (re-entrant)."""
    return _fd_lock


def clear_caches() -> None:
    for memo in _memos.values():
        memo.clear()


def start_game(path: str, *, policy_commands: bool = False, facts: bool = False, shuffle: bool = False):
    """Load a `game.tw-pddl` with alfworld's demangler (names like "apple 1") on the TextWorld PDDL engine."""
    install()
    import textworld
    from alfworld.agents.environment.alfred_tw_env import AlfredDemangler, AlfredInfos

    infos = textworld.EnvInfos(
        won=True, admissible_commands=True, policy_commands=policy_commands, facts=facts, extras=["gamefile"]
    )
    return _argv_safe(textworld.start)(path, infos, wrappers=[AlfredDemangler(shuffle=shuffle), AlfredInfos])


def load_game(env: Any | None, path: str, *, policy_commands: bool = False) -> Any:
    """Load `path` into an existing engine (reusing its Fast Downward library copy), or start a new engine.

    Each fresh engine dlopens its own copy of libdownward, which is never unloaded, so long-lived processes
    should reuse one engine per env rather than start one per game.
    """
    if env is None:
        return start_game(path, policy_commands=policy_commands)
    env.request_infos.policy_commands = policy_commands
    env.load(path)
    return env


def set_policy_commands(env: Any, enabled: bool) -> None:
    """Ask the planner for policy commands on the next reset/step only when needed (it replans every time)."""
    env.request_infos.policy_commands = enabled


def timed_trajectory(env: Any, actions: list[str]) -> tuple[str, float, list[float]]:
    """Play `actions` on a raw textworld env: (hash of every observation, reset seconds, per-step seconds).

    The hash covers feedback, admissible commands and `won` after each step, so two engines (cached or not) that
    return the same digest produced identical trajectories.
    """
    import hashlib
    import json
    import time

    digest = hashlib.sha256()
    t0 = time.perf_counter()
    state = env.reset()
    reset_s = time.perf_counter() - t0
    digest.update(state.feedback.encode() + json.dumps(state["admissible_commands"]).encode())
    steps = []
    for action in actions:
        t0 = time.perf_counter()
        state, _, _ = env.step(action)
        steps.append(time.perf_counter() - t0)
        digest.update(state.feedback.encode() + json.dumps(state["admissible_commands"]).encode())
        digest.update(str(state["won"]).encode())
    return digest.hexdigest(), reset_s, steps
