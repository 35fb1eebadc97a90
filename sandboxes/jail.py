"""Deterministic, restricted Python for model-written programs, set up inside a sandbox job.

A verdict that runs a model's program is worth something only if it is a function of the program and its inputs:
the same program must earn the same verdict in every process, and a proposer must not be able to record an answer
that the program shown to solvers does not compute. The robot and AZR families build their jobs on this module.
It is stdlib only and has no `from __future__` import: families send its text into the sandbox as part of the job
script (`rlvr_gym.sandboxes.jail.source()`) and import it in the verifier for the same source rules.

What a program can reach (`program_globals`):
- builtins from an allowlist of pure functions and types (no open, eval, exec, compile, getattr, vars, dir, id,
  hash, globals, input, memoryview, object, ...);
- `import` of the modules its family allows, each a *facade*: a fresh namespace holding chosen functions, classes
  and constants of the real module, never a module object. Names that read attributes by string
  (operator.attrgetter, string.Formatter, functools.wraps) or evaluate text (typing.get_type_hints,
  collections.namedtuple) are left out, so nothing leads to sys, os, io or a file descriptor;
- `time` is a virtual clock: each read returns a fixed epoch plus one tick per earlier read, `sleep` advances it;
- `random` is one `random.Random` seeded by the job: no SystemRandom, no unseeded Random, `seed()` needs a value.

What the process guarantees once `seal()` has run:
- the hash seed is fixed (the job refuses to run otherwise), so str/bytes hashes and set order are fixed;
- object identity is invisible (`identity.py`): default reprs print no address and every identity hash (the
  default one, bound methods, NaN floats) is one constant, so neither text nor set order depends on addresses;
- the cyclic garbage collector is off, so finalizers never run at allocation-dependent moments;
- `isolated` runs each call in a fresh fork of the sealed process: nothing one call changes reaches another.

The source rules (`source_problems`, checked in the job and by the families' static checks): no name starting with
`__` but `__name__`, no attribute starting with `_`, no frame/code/traceback attribute (they lead from a generator
or an exception into the harness's frames), no `.format`/`.format_map` (format fields walk attributes), no bare
`except` (it would swallow the run's timer).

Left to chance: a program that runs into its time or memory limit near the boundary can end either way.
"""

import ast
import builtins
import gc
import json
import os
import random
import select
import signal
import sys
import types

try:  # in a job script the identity module's text comes just before this one
    from .identity import JailError, hide_identity
except ImportError:
    pass

PURE_BUILTINS = (
    "abs", "all", "any", "ascii", "bin", "bool", "bytearray", "bytes", "callable", "chr", "complex", "dict",
    "divmod", "enumerate", "filter", "float", "format", "frozenset", "hex", "int", "isinstance", "issubclass",
    "iter", "len", "list", "map", "max", "min", "next", "oct", "ord", "pow", "print", "range", "repr",
    "reversed", "round", "set", "slice", "sorted", "str", "sum", "tuple", "zip", "Ellipsis", "NotImplemented",
    "Exception", "ArithmeticError", "AssertionError", "AttributeError", "IndexError", "KeyError", "LookupError",
    "NameError", "NotImplementedError", "OverflowError", "RecursionError", "RuntimeError", "StopIteration",
    "TypeError", "ValueError", "ZeroDivisionError",
)  # fmt: skip
FACADE_NAMES = {  # None: every public name that is not a module
    "math": None,
    "itertools": None,
    "heapq": None,
    "bisect": None,
    "operator": None,
    "collections": ("ChainMap", "Counter", "OrderedDict", "defaultdict", "deque"),
    "functools": ("cache", "cmp_to_key", "lru_cache", "partial", "reduce", "total_ordering"),
    "string": ("ascii_letters", "ascii_lowercase", "ascii_uppercase", "capwords", "digits", "hexdigits",
               "octdigits", "printable", "punctuation", "whitespace"),
    "re": ("A", "ASCII", "DOTALL", "I", "IGNORECASE", "M", "MULTILINE", "S", "VERBOSE", "X", "Match", "Pattern",
           "error", "compile", "escape", "findall", "finditer", "fullmatch", "match", "search", "split", "sub",
           "subn"),
    "typing": ("Any", "Callable", "DefaultDict", "Deque", "Dict", "FrozenSet", "Iterable", "Iterator", "List",
               "Mapping", "Optional", "Sequence", "Set", "Tuple", "Union"),
}  # fmt: skip
LEFT_OUT = {"operator": ("attrgetter", "methodcaller")}  # they read attributes named by a string
RANDOM_METHODS = (
    "betavariate", "choice", "choices", "expovariate", "gammavariate", "gauss", "getrandbits", "lognormvariate",
    "normalvariate", "paretovariate", "randbytes", "randint", "random", "randrange", "sample", "shuffle",
    "triangular", "uniform", "vonmisesvariate", "weibullvariate",
)  # fmt: skip
EPOCH = 1_700_000_000.0  # what the virtual clock's time() starts at
TICK = 0.001  # seconds each clock read advances the virtual clock
INTROSPECTION = ("gi_", "cr_", "ag_", "f_", "tb_", "co_")
BANNED_ATTRIBUTES = ("format", "format_map", "mro")


class Timeout(BaseException):
    """The call's time budget ran out (a BaseException: `except Exception` in the program does not stop it)."""


# ---- the program's surface -------------------------------------------------------------------------------------
def facade(name):
    """A fresh namespace of the allowlisted names of module `name` (never a module, never a private name)."""
    module = __import__(name)
    chosen = FACADE_NAMES[name]
    names = [n for n in dir(module) if not n.startswith("_")] if chosen is None else chosen
    values = {n: getattr(module, n) for n in names if n not in LEFT_OUT.get(name, ())}
    return types.SimpleNamespace(**{n: v for n, v in values.items() if not isinstance(v, types.ModuleType)})


def virtual_clock():
    """The `time` facade: a clock that only the program's own reads and sleeps move."""
    now = [0.0]

    def read():
        value = now[0]
        now[0] += TICK
        return value

    def sleep(seconds):
        now[0] += max(float(seconds), 0.0)

    return types.SimpleNamespace(
        time=lambda: EPOCH + read(),
        time_ns=lambda: int((EPOCH + read()) * 1e9),
        monotonic=read,
        monotonic_ns=lambda: int(read() * 1e9),
        perf_counter=read,
        perf_counter_ns=lambda: int(read() * 1e9),
        process_time=read,
        sleep=sleep,
    )


def seeded_random(seed):
    """The `random` facade: the methods of one Random seeded by the job; `seed()` without a value is refused."""
    rng = random.Random(seed)

    def reseed(a, version=2):
        if a is None:
            raise ValueError("random.seed() needs a value here (the job has no entropy)")
        rng.seed(a, version)

    return types.SimpleNamespace(seed=reseed, **{n: getattr(rng, n) for n in RANDOM_METHODS if hasattr(rng, n)})


def program_globals(modules, *, seed=0, extra_builtins=(), classes=False, name="program"):
    """The globals a program runs in: allowlisted builtins, an importer of `modules` facades, nothing else."""
    made = {}

    def importer(module, globals=None, locals=None, fromlist=(), level=0):
        if level != 0 or module not in modules:
            raise ImportError(f"only {sorted(modules)} may be imported")
        if module not in made:
            made[module] = (
                virtual_clock() if module == "time" else (seeded_random(seed) if module == "random" else facade(module))
            )
        return made[module]

    allowed = {n: getattr(builtins, n) for n in (*PURE_BUILTINS, *extra_builtins) if hasattr(builtins, n)}
    allowed["__import__"] = importer
    if classes:
        allowed["__build_class__"] = builtins.__build_class__
    return {"__builtins__": allowed, "__name__": name}


# ---- source rules ----------------------------------------------------------------------------------------------
def source_problems(tree):
    """Every breach of the shared source rules in a parsed program, as "line N: what" texts."""
    found = []
    for node in ast.walk(tree):
        line = getattr(node, "lineno", "?")
        if isinstance(node, ast.Attribute) and (
            node.attr.startswith(("_", *INTROSPECTION)) or node.attr in BANNED_ATTRIBUTES
        ):
            found.append(f"line {line}: attribute {node.attr}")
        elif isinstance(node, ast.Name) and node.id.startswith("__") and node.id != "__name__":
            found.append(f"line {line}: name {node.id}")
        elif isinstance(node, ast.ExceptHandler) and node.type is None:
            found.append(f"line {line}: bare except")
        elif isinstance(node, (ast.Import, ast.ImportFrom)) and any(a.name == "*" for a in node.names):
            found.append(f"line {line}: import *")
    return found


def compile_program(source, filename="program.py"):
    """The program's code object, after the source rules; raises SyntaxError or ValueError (the rule broken)."""
    tree = ast.parse(source, filename)
    problems = source_problems(tree)
    if problems:
        raise ValueError("; ".join(problems[:5]))
    return compile(tree, filename, "exec", dont_inherit=True)


# ---- the process ------------------------------------------------------------------------------------------------
def seal():
    """Make this process deterministic for programs (see the module docstring); raises JailError when it cannot."""
    if sys.flags.hash_randomization:
        raise JailError("the job's hash seed is not fixed (run it with ExecRequest(hash_seed=...))")
    gc.disable()
    hide_identity()


def isolated(fn, timeout_s, grace_s=2.0, max_bytes=8_000_000):
    """`fn()` (a JSON-able dict) computed in a fresh fork of this process, `Timeout` raised in it after
    `timeout_s`; None when the fork died or overran its grace without an answer."""
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: run, report on the pipe, leave without running any cleanup of the parent
        os.close(read_end)
        try:
            signal.signal(signal.SIGALRM, _raise_timeout)
            signal.setitimer(signal.ITIMER_REAL, timeout_s)
            record = fn()
            signal.setitimer(signal.ITIMER_REAL, 0)
            data = json.dumps(record, ensure_ascii=True, allow_nan=True, separators=(",", ":")).encode()
            while data:
                data = data[os.write(write_end, data) :]
        finally:
            os._exit(0)
    os.close(write_end)
    chunks, size, deadline = [], 0, timeout_s + grace_s
    import time as real_time  # the parent's own deadline (the program only ever sees the virtual clock)

    end = real_time.monotonic() + deadline
    while size <= max_bytes:
        ready, _, _ = select.select([read_end], [], [], max(0.0, end - real_time.monotonic()))
        chunk = os.read(read_end, 1 << 16) if ready else b""
        if not chunk:
            break
        chunks.append(chunk)
        size += len(chunk)
    os.close(read_end)
    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    os.waitpid(pid, 0)
    try:
        record = json.loads(b"".join(chunks)) if chunks and size <= max_bytes else None
    except ValueError:
        return None
    return record if isinstance(record, dict) else None


def _raise_timeout(signum, frame):
    raise Timeout()


def record_channel(allow_nan=False):
    """Keep a duplicate of fd 1 for the job's JSON record lines and point fds 0-2 at /dev/null, before any program
    code runs: nothing a program prints, and no inherited descriptor it writes to, can add a record. Returns
    `write(record)`, one line per record."""
    out = os.dup(1)
    devnull = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(devnull, fd)

    def write(record):
        data = (json.dumps(record, ensure_ascii=True, allow_nan=allow_nan, separators=(",", ":")) + "\n").encode()
        while data:
            data = data[os.write(out, data) :]

    return write


def source():
    """The jail as job-script text: the identity module, then this one."""
    folder = os.path.dirname(os.path.abspath(__file__))
    parts = []
    for name in ("identity.py", "jail.py"):
        with open(os.path.join(folder, name), encoding="utf-8") as handle:
            parts.append(handle.read())
    return "\n\n".join(parts)
