"""Plain data: the only form in which values cross the sandbox boundary (both directions).

A value is encoded as JSON text in which every JSON object is a one-key tag, so the encoding is unambiguous:
`null`/`true`/`false`/numbers/strings/arrays stand for None, bool, int, float (NaN and infinities included), str
and list; `{"t": [...]}` tuple, `{"s": [...]}` set, `{"f": [...]}` frozenset, `{"d": [[k, v], ...]}` dict (any
hashable keys, insertion order kept), `{"b": "hex"}` bytes, `{"c": [re, im]}` complex, `{"g": [...]}` an
iterator/generator (materialised, decoded as a list iterator), `{"y": "int"}` one of the builtin types above
(MBPP passes `int` or `str` as arguments).

Why this matters for the verdict: the decoder builds fresh builtin objects only, so nothing the candidate defined
(an `__eq__` that is always true, an int subclass, a lazy proxy) can reach the trusted side; subclasses of the
builtin containers are encoded as their base type (what the base type's own methods see), which is what `==`
against a builtin compares anyway. The decoder also refuses values made to be slow on the trusted side: set and
dict keys with colliding hashes, and more than `MAX_BIG_NUMBERS` numbers big enough to be chosen to collide. Encoding and decoding are recursive walks bounded by `MAX_DEPTH` and
`MAX_NODES`, and the text by `MAX_CHARS`: anything larger is refused (`PlainDataError`), never truncated.

This module is stdlib-only and free of `from __future__` imports: the code and AZR families send its text
(`source()`) into the sandbox as the first part of their job scripts, so the encoder there is this very code.
"""

import json
import os

MAX_DEPTH = 48
MAX_NODES = 200_000
MAX_CHARS = 2_000_000
MAX_ITEMS = 100_000  # items taken from one iterator/generator
MAX_BIG_NUMBERS = 1_000  # numbers >= 2**61 in magnitude per value (see `_Decoder.value`)
HASH_MODULUS = 2**61 - 1


class PlainDataError(ValueError):
    """A value that is not plain data, or is larger/deeper than the limits."""


_BASES = (bool, int, float, str, bytes, complex, list, tuple, dict, set, frozenset)
_TYPES = {kind.__name__: kind for kind in (*_BASES, type(None), object, type)}  # builtin types are data too
_TYPE_NAMES = {kind: name for name, kind in _TYPES.items()}


def _base_type(value):
    kind = type(value)
    if kind in _BASES or value is None:
        return kind
    for base in _BASES:
        if isinstance(value, base):
            return base
    if hasattr(kind, "__next__") and hasattr(kind, "__iter__"):
        return "iterator"
    return None


class _Encoder:
    def __init__(self):
        self.nodes = 0
        self.chars = 0

    def text(self, value):
        self.chars += len(value)
        if self.chars > MAX_CHARS:
            raise PlainDataError(f"value too large (over {MAX_CHARS} characters)")
        return value

    def tree(self, value, depth):
        self.nodes += 1
        if self.nodes > MAX_NODES or depth > MAX_DEPTH:
            raise PlainDataError("value too large or too deeply nested")
        if value is None:
            return None
        if type(value) is type and value in _TYPE_NAMES:
            return {"y": _TYPE_NAMES[value]}
        kind = _base_type(value)
        if kind is bool:
            return value is True
        if kind is int:
            return int.__int__(value)
        if kind is float:
            return float.__float__(value)
        if kind is str:
            return self.text(str.__str__(value))
        if kind is bytes:
            return {"b": self.text(bytes.hex(bytes(value)))}
        if kind is complex:
            return {"c": [complex.__complex__(value).real, complex.__complex__(value).imag]}
        if kind is list:
            return [self.tree(item, depth + 1) for item in list.__iter__(value)]
        if kind is tuple:
            return {"t": [self.tree(item, depth + 1) for item in tuple.__iter__(value)]}
        if kind is set or kind is frozenset:
            items = [self.tree(item, depth + 1) for item in kind.__iter__(value)]
            return {"s" if kind is set else "f": items}
        if kind is dict:
            return {"d": [[self.tree(k, depth + 1), self.tree(v, depth + 1)] for k, v in dict.items(value)]}
        if kind == "iterator":
            items = []
            for item in value:
                if len(items) >= MAX_ITEMS:
                    raise PlainDataError("iterator yields too many items")
                items.append(self.tree(item, depth + 1))
            return {"g": items}
        raise PlainDataError(f"not plain data: an object of type {type(value).__name__!s:.80}")


def encode_tree(value):
    """The JSON-able tree of `value` (see the module docstring); raises PlainDataError for anything else."""
    try:
        return _Encoder().tree(value, 0)
    except RecursionError as exc:
        raise PlainDataError("value too deeply nested") from exc


def encode(value):
    """Canonical JSON text of `value`: equal texts mean equal data (used as a memo key for calls)."""
    try:
        text = json.dumps(encode_tree(value), ensure_ascii=True, allow_nan=True, separators=(",", ":"))
    except ValueError as exc:  # an int beyond the interpreter's digit limit for str()
        raise PlainDataError(str(exc)[:200]) from exc
    if len(text) > MAX_CHARS:
        raise PlainDataError(f"value too large ({len(text)} characters encoded)")
    return text


def _hashable(value):
    try:
        hash(value)
    except TypeError as exc:
        raise PlainDataError("unhashable set element or dict key") from exc
    return value


def _hash_table_safe(items):
    """Refuse element lists built to collide in a hash table (quadratic to insert on the trusted side)."""
    if len(items) > 256 and 2 * len({hash(item) for item in items}) < len(items):
        raise PlainDataError("set or dict keys with colliding hashes")
    return items


class _Decoder:
    def __init__(self):
        self.nodes = 0
        self.big = 0

    def value(self, tree, depth):
        self.nodes += 1
        if self.nodes > MAX_NODES or depth > MAX_DEPTH:
            raise PlainDataError("value too large or too deeply nested")
        kind = type(tree)
        if kind is int or kind is float:
            if abs(tree) >= HASH_MODULUS:  # numbers hash modulo 2**61 - 1: only big ones can be made to collide
                self.big += 1
                if self.big > MAX_BIG_NUMBERS:
                    raise PlainDataError(f"more than {MAX_BIG_NUMBERS} numbers of magnitude 2**61 or more")
            return tree
        if tree is None or kind in (bool, str):
            return tree
        if kind is list:
            return [self.value(item, depth + 1) for item in tree]
        if kind is not dict or len(tree) != 1:
            raise PlainDataError("malformed plain-data tag")
        ((tag, body),) = tree.items()
        return self.tagged(tag, body, depth)

    def items(self, body, depth):
        if type(body) is not list:
            raise PlainDataError("malformed plain-data container")
        return [self.value(item, depth + 1) for item in body]

    def tagged(self, tag, body, depth):
        if tag == "t":
            return tuple(self.items(body, depth))
        if tag == "s":
            return set(_hash_table_safe([_hashable(item) for item in self.items(body, depth)]))
        if tag == "f":
            return frozenset(_hash_table_safe([_hashable(item) for item in self.items(body, depth)]))
        if tag == "g":
            return iter(self.items(body, depth))
        if tag == "d":
            pairs = self.items(body, depth)
            if not all(type(pair) is list and len(pair) == 2 for pair in pairs):
                raise PlainDataError("malformed dict entry")
            _hash_table_safe([_hashable(key) for key, _ in pairs])
            return {key: value for key, value in pairs}
        if tag == "b" and type(body) is str:
            try:
                return bytes.fromhex(body)
            except ValueError as exc:
                raise PlainDataError("malformed bytes") from exc
        if tag == "y" and type(body) is str and body in _TYPES:
            return _TYPES[body]
        if tag == "c" and type(body) is list and len(body) == 2 and all(type(x) in (int, float) for x in body):
            return complex(body[0], body[1])
        raise PlainDataError(f"unknown plain-data tag {tag!r:.20}")


def decode_tree(tree):
    """Fresh builtin objects from a tree made by `encode_tree`; raises PlainDataError on anything else."""
    try:
        return _Decoder().value(tree, 0)
    except RecursionError as exc:
        raise PlainDataError("value too deeply nested") from exc


def decode(text):
    """Fresh builtin objects from JSON text made by `encode`; raises PlainDataError on anything else."""
    if type(text) is not str or len(text) > MAX_CHARS:
        raise PlainDataError("plain-data text missing or too large")
    try:
        tree = json.loads(text)
    except (ValueError, RecursionError) as exc:
        raise PlainDataError("plain-data text is not JSON") from exc
    return decode_tree(tree)


def source():
    """This module as job-script text (sent ahead of a family's runner, which then has `encode`/`decode_tree`)."""
    with open(os.path.abspath(__file__), encoding="utf-8") as handle:
        return handle.read()
