"""A minimal walker over uncompressed magic-0 message sets, for tests only (independent of the
project's record decoders): [offset int64][size int32][crc uint32][magic int8][attributes int8]
[key length int32][key][value length int32][value] (docs/kafka-internals.md §1.2)."""

from __future__ import annotations

import struct
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

_HEADER = struct.Struct(">qiIbbi")  # offset, size, crc, magic, attributes, key length


@dataclass(frozen=True)
class Entry:
    offset: int
    position: int
    crc: int
    key: bytes | None
    value: bytes | None


def entries(path: Path) -> Iterator[Entry]:
    data = path.read_bytes()
    position = 0
    while position + 12 <= len(data):
        offset, size, crc, magic, attributes, key_length = _HEADER.unpack_from(data, position)
        end = position + 12 + size
        if end > len(data):
            return  # partial tail
        assert magic == 0 and attributes == 0, (position, magic, attributes)
        assert zlib.crc32(data[position + 16 : end]) == crc, position
        cursor = position + _HEADER.size
        key = None if key_length < 0 else data[cursor : cursor + key_length]
        cursor += max(key_length, 0)
        (value_length,) = struct.unpack_from(">i", data, cursor)
        cursor += 4
        value = None if value_length < 0 else data[cursor : cursor + value_length]
        assert cursor + max(value_length, 0) == end, position
        yield Entry(offset, position, crc, key, value)
        position = end
