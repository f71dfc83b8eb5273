"""Zig-zag varints of the v2 record format (Kafka's ``ByteUtils.readVarint``/``readVarlong``).

A varint is unsigned LEB128 (7 bits per byte, high bit = more) of the zig-zag encoding
``(n << 1) ^ (n >> 31)``; at most 5 bytes for an int32 and 10 for an int64. Source:
clients/src/main/java/org/apache/kafka/common/utils/ByteUtils.java (3.8.0).
"""

from __future__ import annotations

from offsets_auditor.errors import CorruptError, TruncatedError


def read_varint(
    buf: bytes | bytearray | memoryview, pos: int, end: int, field: str
) -> tuple[int, int]:
    """The signed (zig-zag) int32 varint at ``pos``, and the position after it."""
    return _read(buf, pos, end, field, 5)


def read_varlong(
    buf: bytes | bytearray | memoryview, pos: int, end: int, field: str
) -> tuple[int, int]:
    """The signed (zig-zag) int64 varlong at ``pos``, and the position after it."""
    return _read(buf, pos, end, field, 10)


def _read(
    buf: bytes | bytearray | memoryview, pos: int, end: int, field: str, max_bytes: int
) -> tuple[int, int]:
    raw = 0
    shift = 0
    start = pos
    while True:
        if pos >= end:
            raise TruncatedError(
                "varint runs past the end of its buffer", field=field, position=start
            )
        byte = buf[pos]
        pos += 1
        raw |= (byte & 0x7F) << shift
        if byte < 0x80:
            raw &= (1 << (7 * max_bytes - (3 if max_bytes == 5 else 6))) - 1  # Java int/long width
            return (raw >> 1) ^ -(raw & 1), pos
        shift += 7
        if pos - start >= max_bytes:
            raise CorruptError(f"varint longer than {max_bytes} bytes", field=field, position=start)
