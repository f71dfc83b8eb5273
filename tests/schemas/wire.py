"""Hand encoders for golden bytes: Kafka's wire primitives written with ``struct.pack``.

Independent of the decoder: nothing here imports ``offsets_auditor``. Each test composes the
bytes field by field from Kafka's JSON schema, in the order the schema lists them.
"""

from __future__ import annotations

import base64
import struct


def i8(value: int) -> bytes:
    return struct.pack(">b", value)


def i16(value: int) -> bytes:
    return struct.pack(">h", value)


def u16(value: int) -> bytes:
    return struct.pack(">H", value)


def i32(value: int) -> bytes:
    return struct.pack(">i", value)


def i64(value: int) -> bytes:
    return struct.pack(">q", value)


def uvarint(value: int) -> bytes:
    """Unsigned varint, 7 bits per byte, low group first."""
    out = bytearray()
    while True:
        byte = value & 0x7F
        value >>= 7
        if value:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


def s(text: str | None) -> bytes:
    """Classic string: int16 length + UTF-8 (-1 = null)."""
    if text is None:
        return i16(-1)
    data = text.encode()
    return i16(len(data)) + data


def b(data: bytes | None) -> bytes:
    """Classic bytes: int32 length (-1 = null)."""
    if data is None:
        return i32(-1)
    return i32(len(data)) + data


def cs(text: str | None) -> bytes:
    """Compact string: uvarint length+1 (0 = null)."""
    if text is None:
        return uvarint(0)
    data = text.encode()
    return uvarint(len(data) + 1) + data


def cb(data: bytes | None) -> bytes:
    """Compact bytes: uvarint length+1 (0 = null)."""
    if data is None:
        return uvarint(0)
    return uvarint(len(data) + 1) + data


def ca(count: int | None) -> bytes:
    """Compact array header: uvarint count+1 (0 = null)."""
    return uvarint(0 if count is None else count + 1)


NO_TAGS = uvarint(0)


def tags(*fields: tuple[int, bytes]) -> bytes:
    """A tagged-field section: count, then (tag, size, data) each."""
    out = uvarint(len(fields))
    for tag, data in fields:
        out += uvarint(tag) + uvarint(len(data)) + data
    return out


def kafka_uuid(raw: bytes) -> str:
    """What ``org.apache.kafka.common.Uuid.toString`` prints for these 16 bytes."""
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")
