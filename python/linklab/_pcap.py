"""Merging per-direction pcap captures into one file (for a ``A-B`` link spec)."""

from __future__ import annotations

import heapq
import struct
from collections.abc import Iterator, Sequence

__all__ = ["merge"]

_GLOBAL_HEADER = 24
_RECORD_HEADER = 16
_MAGICS = {
    b"\xd4\xc3\xb2\xa1": "<",  # microseconds, little-endian
    b"\x4d\x3c\xb2\xa1": "<",  # nanoseconds, little-endian
    b"\xa1\xb2\xc3\xd4": ">",
    b"\xa1\xb2\x3c\x4d": ">",
}


def _records(data: bytes, order: str) -> Iterator[tuple[int, int, bytes]]:
    pos = _GLOBAL_HEADER
    while pos < len(data):
        if pos + _RECORD_HEADER > len(data):
            raise ValueError("truncated pcap record header")
        sec, frac, incl, _ = struct.unpack_from(f"{order}IIII", data, pos)
        end = pos + _RECORD_HEADER + incl
        if end > len(data):
            raise ValueError("truncated pcap record")
        yield sec, frac, data[pos:end]
        pos = end


def merge(captures: Sequence[bytes]) -> bytes:
    """One capture holding every record of ``captures``, in time order.

    All captures must share the global header (format, link type, snaplen);
    records with equal timestamps keep the order of ``captures``.
    """
    if not captures:
        raise ValueError("nothing to merge")
    header = captures[0][:_GLOBAL_HEADER]
    order = _MAGICS.get(header[:4])
    if order is None or len(header) < _GLOBAL_HEADER:
        raise ValueError("not a pcap file")
    for other in captures[1:]:
        if other[:_GLOBAL_HEADER] != header:
            raise ValueError("pcap captures with different headers cannot be merged")
    streams = [
        ((sec, frac, i, rec) for sec, frac, rec in _records(data, order))
        for i, data in enumerate(captures)
    ]
    out = bytearray(header)
    for _, _, _, rec in heapq.merge(*streams):
        out += rec
    return bytes(out)
