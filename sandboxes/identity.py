"""Object identity made invisible to programs: no address in any repr, one constant for every identity hash.

Why: CPython prints an object's address in its default repr (`<function f at 0x7f...>`, also inside error messages
such as `[].index(f)`'s) and hashes objects without their own hash by address (`None`, functions, bound methods,
NaN floats), which orders sets. Addresses change with every process (ASLR) and with whatever ran before, so a
program that reads them, directly or through set order, computes something else in every process. `hide_identity`
rewrites, in the running process only (a sandbox job: stdlib only, no `from __future__`, sent as text with the
jail), the type slots that do this, and the slot wrappers that classes created later copy them from: reprs become
`<function f>` / `<C object>`, identity hashes and NaN hashes one constant (equal objects still hash equal; sets
of such objects are ordered by insertion alone). It checks the result and raises `JailError` when the interpreter's
layout is not the one it knows (64-bit CPython 3.8-3.13), so a job refuses rather than runs nondeterministically.
"""

import sys
import types


class JailError(RuntimeError):
    """The process cannot give the jail's guarantees (no fixed hash seed, an interpreter layout it does not know)."""


IDENTITY_HASH = 0x5EED


_OFFSET_REPR, _OFFSET_HASH = 88, 120  # tp_repr and tp_hash in CPython's PyTypeObject (64-bit)
_OFFSET_WRAPPED = 48  # d_wrapped in a slot wrapper (`object.__repr__`): the C function it calls


def _wrapped(kind, name):
    """The C function behind `kind.__dict__[name]` when that is a slot wrapper, else None."""
    import ctypes

    descriptor = (
        kind.__dict__.get(name) if isinstance(getattr(kind, "__dict__", None), types.MappingProxyType) else None
    )
    if type(descriptor) is not types.WrapperDescriptorType:
        return None
    return ctypes.c_size_t.from_address(id(descriptor) + _OFFSET_WRAPPED).value


def _all_types():
    seen, stack = {}, [object]
    while stack:
        kind = stack.pop()
        if id(kind) in seen:
            continue
        seen[id(kind)] = kind
        try:
            stack.extend(type.__subclasses__(kind))
        except TypeError:
            pass
    return list(seen.values())


def _probes():
    """Objects whose default repr prints where they live (one of each kind the interpreter has)."""
    import _thread
    import weakref

    def gen():
        yield 1

    async def coro():
        return 1

    async def agen():
        yield 1

    pending = coro()
    pending.close()  # a closed coroutine keeps its repr and never warns that it was not awaited
    made = [object(), gen, gen(), pending, agen(), [].append, (0).__add__, iter([]), compile("1", "p", "eval"),
            sys._getframe(), property(), {}.get, memoryview(b""), _thread.allocate_lock(), weakref.ref(JailError),
            types.SimpleNamespace().__eq__]  # fmt: skip
    cell = (lambda: gen).__closure__
    return [*made, *(cell or ())]


def _replacements(ctypes):
    """{original C function: replacement} for the repr and hash slots, and the callbacks to keep alive."""
    reprs = {_slot(ctypes, type(p), _OFFSET_REPR).value for p in _probes() if " at 0x" in repr(p)}
    by_identity = {_slot(ctypes, kind, _OFFSET_HASH).value for kind in (object, types.MethodType,
                                                                          types.BuiltinMethodType,
                                                                          types.MethodWrapperType)}  # fmt: skip
    float_hash, complex_hash = (_slot(ctypes, kind, _OFFSET_HASH).value for kind in (float, complex))
    to_repr = ctypes.PYFUNCTYPE(ctypes.py_object, ctypes.py_object)
    to_hash = ctypes.PYFUNCTYPE(ctypes.c_ssize_t, ctypes.py_object)
    plain, constant = to_repr(_plain_repr), to_hash(lambda value: IDENTITY_HASH)
    floats, complexes = (to_hash(_nan_safe(to_hash(original))) for original in (float_hash, complex_hash))
    address = lambda f: ctypes.cast(f, ctypes.c_void_p).value  # noqa: E731
    replace = {**dict.fromkeys(reprs, address(plain)), **dict.fromkeys(by_identity, address(constant)),
               float_hash: address(floats), complex_hash: address(complexes)}  # fmt: skip
    return replace, [plain, constant, floats, complexes]


def _slot(ctypes, kind, offset):
    return ctypes.c_size_t.from_address(id(kind) + offset)


def hide_identity():
    """Replace every address-printing repr and every identity hash of this process by deterministic ones."""
    import ctypes

    if sys.implementation.name != "cpython" or sys.maxsize != 2**63 - 1 or not (3, 8) <= sys.version_info < (3, 14):
        raise JailError("identity hiding needs 64-bit CPython 3.8-3.13")
    if _wrapped(object, "__repr__") != _slot(ctypes, object, _OFFSET_REPR).value:
        raise JailError("unknown slot-wrapper layout")
    replace, callbacks = _replacements(ctypes)
    _KEEP.extend(callbacks)
    for kind in _all_types():
        for offset in (_OFFSET_REPR, _OFFSET_HASH):
            current = _slot(ctypes, kind, offset)
            current.value = replace.get(current.value, current.value)
        for name in ("__repr__", "__hash__"):  # what classes made later copy into their own slots
            wrapped = _wrapped(kind, name)
            if wrapped in replace:
                ctypes.c_size_t.from_address(id(kind.__dict__[name]) + _OFFSET_WRAPPED).value = replace[wrapped]
    _check_hidden()


def _check_hidden():
    class Made:
        pass

    probes = [*_probes(), Made()]
    hashes = {hash(Made()), hash(None), hash(float("nan")), hash(probes[0])}
    if any(" at 0x" in repr(p) for p in probes) or hashes != {IDENTITY_HASH}:
        raise JailError("identity hiding did not take (unknown interpreter layout)")


_KEEP = []  # the callbacks must outlive every call through the patched slots


def _plain_repr(value):
    try:
        kind = type(value)
        named = isinstance(value, (types.FunctionType, types.BuiltinFunctionType, types.MethodType))
        qualname = value.__qualname__ if named else None
        return f"<{kind.__name__} {qualname}>" if isinstance(qualname, str) else f"<{kind.__name__} object>"
    except BaseException:
        return "<object>"


def _nan_safe(original):
    def hashed(value):
        try:
            return IDENTITY_HASH if value != value else original(value)
        except BaseException:
            return IDENTITY_HASH

    return hashed
