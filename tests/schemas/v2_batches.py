"""A minimal walker over magic-2 record batches (uncompressed or gzip), for tests only and
independent of the project's record decoders (docs/kafka-internals.md §1.7-1.9)."""

from __future__ import annotations

import gzip
import struct
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

# baseOffset, batchLength, partitionLeaderEpoch, magic, crc, attributes, lastOffsetDelta,
# baseTimestamp, maxTimestamp, producerId, producerEpoch, baseSequence, recordsCount
_BATCH = struct.Struct(">qiibIhiqqqhii")


@dataclass(frozen=True)
class Record:
    offset: int
    control: bool
    transactional: bool
    producer_id: int
    key: bytes | None
    value: bytes | None


def _varint(data: bytes, pos: int) -> tuple[int, int]:
    shift = result = 0
    while True:
        byte = data[pos]
        pos += 1
        result |= (byte & 0x7F) << shift
        shift += 7
        if not byte & 0x80:
            return (result >> 1) ^ -(result & 1), pos


def records(path: Path) -> Iterator[Record]:
    data = path.read_bytes()
    pos = 0
    while pos + _BATCH.size <= len(data):
        header = _BATCH.unpack_from(data, pos)
        base_offset, length, _, magic, _, attributes = header[:6]
        producer_id, count = header[9], header[12]
        end = pos + 12 + length
        assert magic == 2
        body = data[pos + _BATCH.size : end]
        codec = attributes & 0x7
        assert codec in (0, 1), codec
        if codec == 1:
            body = gzip.decompress(body)
        cursor = 0
        for _ in range(count):
            size, cursor = _varint(body, cursor)
            record_end = cursor + size
            cursor += 1  # attributes
            _, cursor = _varint(body, cursor)  # timestampDelta
            offset_delta, cursor = _varint(body, cursor)
            key_length, cursor = _varint(body, cursor)
            key = None if key_length < 0 else body[cursor : cursor + key_length]
            cursor += max(key_length, 0)
            value_length, cursor = _varint(body, cursor)
            value = None if value_length < 0 else body[cursor : cursor + value_length]
            cursor = record_end
            yield Record(
                base_offset + offset_delta,
                bool(attributes & 0x20),
                bool(attributes & 0x10),
                producer_id,
                key,
                value,
            )
        pos = end
