"""Length-prefixed JSON frames (bytes as base64) between the supervisor and the trusted side of a sandbox."""

from __future__ import annotations

import base64
import json
import os
import struct

MAX_FRAME = 1 << 30


def encode(obj) -> bytes:
    def enc(o):
        if isinstance(o, bytes):
            return {"__b64": base64.b64encode(o).decode()}
        if isinstance(o, dict):
            return {k: enc(v) for k, v in o.items()}
        if isinstance(o, (list, tuple)):
            return [enc(v) for v in o]
        return o

    data = json.dumps(enc(obj)).encode()
    return struct.pack(">I", len(data)) + data


def decode(data: bytes):
    def dec(o):
        if isinstance(o, dict):
            if len(o) == 1 and "__b64" in o:
                return base64.b64decode(o["__b64"])
            return {k: dec(v) for k, v in o.items()}
        if isinstance(o, list):
            return [dec(v) for v in o]
        return o

    return dec(json.loads(data))


def read_exact(fd: int, n: int) -> bytes:
    chunks, left = [], n
    while left:
        chunk = os.read(fd, min(left, 1 << 20))
        if not chunk:
            raise EOFError("peer closed")
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


def recv_frame(fd: int):
    (size,) = struct.unpack(">I", read_exact(fd, 4))
    if size > MAX_FRAME:
        raise ValueError(f"frame of {size} bytes")
    return decode(read_exact(fd, size))


def send_frame(fd: int, obj) -> None:
    write_all(fd, encode(obj))


def write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]
