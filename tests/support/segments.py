"""Building segment bytes for tests: every message format, by hand (our own packing, Kafka's
layouts) and with kafka-python's builders (an independent implementation), plus a table of
entries a reader must take or refuse and a fixer that recomputes CRCs after a mutation."""

from __future__ import annotations

import gzip
import struct
import zlib
from collections.abc import Callable, Iterable

from crc32c import crc32c
from kafka.record.default_records import DefaultRecordBatchBuilder
from kafka.record.legacy_records import LegacyRecordBatchBuilder

GZIP = 1
TIMESTAMP = 1_763_700_000_000


def string(text: str) -> bytes:
    raw = text.encode()
    return struct.pack(">h", len(raw)) + raw


def commit_key(group: str = "g", topic: str = "t", partition: int = 0, version: int = 1) -> bytes:
    return struct.pack(">h", version) + string(group) + string(topic) + struct.pack(">i", partition)


def group_metadata_key(group: str = "g") -> bytes:
    return struct.pack(">h", 2) + string(group)


def group_metadata_value() -> bytes:
    """GroupMetadataValue v0 of an Empty consumer group without members."""
    return (
        struct.pack(">h", 0)
        + string("consumer")
        + struct.pack(">i", 3)
        + string("range")
        + string("m")
        + struct.pack(">i", 0)
    )


def commit_value(
    version: int = 1, offset: int = 42, metadata: str = "", leader_epoch: int = 5
) -> bytes:
    ts = struct.pack(">q", TIMESTAMP)
    if version == 4:  # flexible: compact string, tagged fields
        raw = metadata.encode()
        return (
            struct.pack(">hqi", 4, offset, leader_epoch)
            + bytes([len(raw) + 1])
            + raw
            + ts
            + b"\x00"
        )
    head = struct.pack(">hq", version, offset)
    if version == 3:
        head += struct.pack(">i", leader_epoch)
    tail = ts + (struct.pack(">q", TIMESTAMP + 1000) if version == 1 else b"")
    return head + string(metadata) + tail


def legacy(
    offset: int,
    key: bytes | None,
    value: bytes | None,
    *,
    magic: int = 0,
    attributes: int = 0,
    crc: int | None = None,
    raw_key_length: int | None = None,
) -> bytes:
    """One magic 0/1 message (our own packing)."""
    body = bytes([magic, attributes])
    if magic == 1:
        body += struct.pack(">q", TIMESTAMP)
    key_length = (-1 if key is None else len(key)) if raw_key_length is None else raw_key_length
    body += struct.pack(">i", key_length) + (key or b"")
    body += struct.pack(">i", -1 if value is None else len(value)) + (value or b"")
    stored = zlib.crc32(body) if crc is None else crc
    return struct.pack(">qiI", offset, 4 + len(body), stored) + body


def varint(value: int) -> bytes:
    raw = ((value << 1) ^ (value >> 63)) & 0xFFFFFFFFFFFFFFFF
    out = bytearray()
    while raw >= 0x80:
        out.append((raw & 0x7F) | 0x80)
        raw >>= 7
    out.append(raw)
    return bytes(out)


RecordSpec = tuple[int, bytes | None, bytes | None, list[tuple[bytes, bytes | None]]]


def v2_record(
    delta: int,
    key: bytes | None,
    value: bytes | None,
    headers: Iterable[tuple[bytes, bytes | None]] = (),
) -> bytes:
    body = b"\x00" + varint(0) + varint(delta)
    body += varint(-1) if key is None else varint(len(key)) + key
    body += varint(-1) if value is None else varint(len(value)) + value
    headers = list(headers)
    body += varint(len(headers))
    for hk, hv in headers:
        body += varint(len(hk)) + hk + (varint(-1) if hv is None else varint(len(hv)) + hv)
    return varint(len(body)) + body


def v2_batch(
    base_offset: int,
    records: list[bytes],
    *,
    attributes: int = 0,
    count: int | None = None,
    last_offset_delta: int | None = None,
    producer_id: int = -1,
    crc: int | None = None,
) -> bytes:
    """A v2 batch of already encoded records (our own packing)."""
    rest = struct.pack(
        ">hiqqqhii",
        attributes,
        len(records) - 1 if last_offset_delta is None else last_offset_delta,
        TIMESTAMP,
        TIMESTAMP,
        producer_id,
        0 if producer_id >= 0 else -1,
        -1,
        len(records) if count is None else count,
    ) + b"".join(records)
    stored = crc32c(rest) if crc is None else crc
    return struct.pack(">qiibI", base_offset, 4 + 1 + 4 + len(rest), 0, 2, stored) + rest


def commits_v2(
    base_offset: int, n: int, *, version: int = 3, attributes: int = 0, producer_id: int = -1
) -> bytes:
    records = [
        v2_record(i, commit_key(partition=i), commit_value(version, base_offset + i))
        for i in range(n)
    ]
    return v2_batch(base_offset, records, attributes=attributes, producer_id=producer_id)


def control_batch(base_offset: int, producer_id: int = 9) -> bytes:
    """A COMMIT transaction marker (control + transactional)."""
    marker = v2_record(0, struct.pack(">hh", 0, 1), struct.pack(">hi", 0, 3))
    return v2_batch(base_offset, [marker], attributes=0x30, producer_id=producer_id)


def kafka_python_legacy(magic: int, codec: int, first_offset: int, n: int) -> bytes:
    builder = LegacyRecordBatchBuilder(magic, codec, 1 << 20)
    for i in range(n):
        builder.append(
            first_offset + i,
            None if magic == 0 else TIMESTAMP,
            commit_key(partition=i),
            commit_value(1, i),
        )
    data = bytearray(builder.build())
    if codec:  # the wrapper's offset is that of its last inner message (the broker sets it)
        data[0:8] = struct.pack(">q", first_offset + n - 1)
    return bytes(data)


def gzip_wrapper_with_bad_inner_crc(offset: int) -> bytes:
    """A magic 1 gzip wrapper at ``offset`` (its own CRC right) of three inner messages, the
    second of which stores a wrong CRC."""
    inner = b"".join(
        legacy(i, commit_key(partition=i), commit_value(1, i), magic=1, crc=7 if i == 1 else None)
        for i in range(3)
    )
    return legacy(offset, None, gzip.compress(inner), magic=1, attributes=GZIP)


def kafka_python_v2(
    codec: int, base_offset: int, n: int, *, tombstone_at: int | None = None
) -> bytes:
    builder = DefaultRecordBatchBuilder(2, codec, False, -1, -1, -1, 1 << 20)
    for i in range(n):
        value = None if i == tombstone_at else commit_value(3, i)
        builder.append(i, TIMESTAMP, commit_key(partition=i), value, [])
    data = bytearray(builder.build())
    data[0:8] = struct.pack(">q", base_offset)  # baseOffset is outside the CRC
    return bytes(data)


def mixed_segment() -> bytes:
    """Everything a real __consumer_offsets segment can hold, in every format, plus damage."""
    parts = [
        legacy(0, commit_key(version=0), commit_value(0)),
        legacy(1, commit_key(), commit_value(1)),
        legacy(2, commit_key(), None),
        legacy(3, group_metadata_key(), group_metadata_value()),
        legacy(4, commit_key(), commit_value(1), magic=1),
        legacy(5, commit_key(), commit_value(1), magic=1, attributes=0x08),
        kafka_python_legacy(0, GZIP, 6, 3),
        kafka_python_legacy(1, 0, 9, 2),
        kafka_python_legacy(1, GZIP, 11, 2),
        legacy(13, commit_key(), commit_value(1), crc=12345),  # bad CRC in the middle
        legacy(14, commit_key(), commit_value(2)),
        commits_v2(15, 5),
        commits_v2(20, 3, version=1),
        kafka_python_v2(0, 23, 4, tombstone_at=2),
        kafka_python_v2(GZIP, 27, 3),
        commits_v2(30, 2, attributes=0x10, producer_id=9),
        control_batch(32),
        v2_batch(33, [v2_record(0, group_metadata_key(), group_metadata_value())]),
        v2_batch(34, [], last_offset_delta=3),  # emptied by the cleaner
        v2_batch(38, [v2_record(0, commit_key(), commit_value(4))]),
        v2_batch(39, [v2_record(0, commit_key(), commit_value(3), [(b"h", b"v"), (b"n", None)])]),
        commits_v2(40, 2, version=3),
        legacy(42, commit_key(), commit_value(1)),
    ]
    data = b"".join(parts)
    return data + legacy(43, commit_key(), commit_value(1))[:30]  # a partial write at the end


#: name, entry, and whether the C reader takes it (else the reference decoders report it)
CASES: list[tuple[str, Callable[[], bytes], bool]] = [
    ("v0 commit, key v1 value v1", lambda: legacy(7, commit_key(), commit_value(1)), True),
    ("v0 commit, key v0 value v0", lambda: legacy(7, commit_key(version=0), commit_value(0)), True),
    ("v0 commit, value v2", lambda: legacy(7, commit_key(), commit_value(2)), True),
    ("v0 commit, value v3", lambda: legacy(7, commit_key(), commit_value(3)), True),
    (
        "v0 commit, metadata",
        lambda: legacy(7, commit_key(), commit_value(1, metadata="m" * 300)),
        True,
    ),
    ("v0 tombstone", lambda: legacy(7, commit_key(), None), True),
    ("v1 message (timestamp)", lambda: legacy(7, commit_key(), commit_value(1), magic=1), True),
    (
        "v1 LogAppendTime",
        lambda: legacy(7, commit_key(), commit_value(1), magic=1, attributes=8),
        True,
    ),
    (
        "value with trailing bytes (ignored, as Kafka does)",
        lambda: legacy(7, commit_key(), commit_value(1) + b"xx"),
        True,
    ),
    ("value v4 (flexible)", lambda: legacy(7, commit_key(), commit_value(4)), False),
    ("value version -1", lambda: legacy(7, commit_key(), struct.pack(">h", -1)), False),
    ("value of 1 byte", lambda: legacy(7, commit_key(), b"\x00"), False),
    ("value v1 one byte short", lambda: legacy(7, commit_key(), commit_value(1)[:-1]), False),
    (
        "value v3 metadata length -1",
        lambda: legacy(7, commit_key(), struct.pack(">hqih", 3, 1, 0, -1) + bytes(8)),
        False,
    ),
    (
        "group metadata key (v2)",
        lambda: legacy(7, group_metadata_key(), group_metadata_value()),
        False,
    ),
    (
        "key version 3",
        lambda: legacy(7, struct.pack(">h", 3) + commit_key()[2:], commit_value(1)),
        False,
    ),
    ("key with a trailing byte", lambda: legacy(7, commit_key() + b"\x00", commit_value(1)), False),
    ("key one byte short", lambda: legacy(7, commit_key()[:-1], commit_value(1)), False),
    (
        "key group length -1",
        lambda: legacy(7, struct.pack(">hh", 1, -1) + string("t") + bytes(4), commit_value(1)),
        False,
    ),
    ("null key", lambda: legacy(7, None, commit_value(1)), False),
    ("key length -2", lambda: legacy(7, b"", commit_value(1), raw_key_length=-2), False),
    ("bad CRC-32", lambda: legacy(7, commit_key(), commit_value(1), crc=1), False),
    ("gzip wrapper", lambda: kafka_python_legacy(0, GZIP, 7, 2), False),
    (
        "v1 message below the v1 overhead",
        lambda: struct.pack(">qi", 7, 14) + crc_body(bytes([1, 0]) + bytes(8)),
        False,
    ),
    ("magic 3", lambda: struct.pack(">qiI", 7, 20, 0) + bytes([3]) + bytes(15), False),
    ("v2 batch of commits", lambda: commits_v2(7, 5), True),
    ("v2 batch, value v1", lambda: commits_v2(7, 2, version=1), True),
    ("v2 batch, kafka-python, tombstone", lambda: kafka_python_v2(0, 7, 3, tombstone_at=1), True),
    ("v2 transactional commits", lambda: commits_v2(7, 2, attributes=0x10, producer_id=4), True),
    ("v2 delete horizon set", lambda: commits_v2(7, 2, attributes=0x40), True),
    ("v2 empty batch", lambda: v2_batch(7, [], last_offset_delta=4), True),
    (
        "v2 record with headers",
        lambda: v2_batch(7, [v2_record(0, commit_key(), None, [(b"a", b"b"), (b"c", None)])]),
        True,
    ),
    (
        "v2 value length -2 reads as null",
        lambda: v2_batch(7, [raw_record(commit_key(), varint(-2))]),
        True,
    ),
    ("v2 gzip", lambda: kafka_python_v2(GZIP, 7, 2), False),
    ("v2 control batch", lambda: control_batch(7), False),
    (
        "v2 bad CRC-32C",
        lambda: v2_batch(7, [v2_record(0, commit_key(), commit_value(3))], crc=3),
        False,
    ),
    (
        "v2 group metadata record",
        lambda: v2_batch(7, [v2_record(0, group_metadata_key(), group_metadata_value())]),
        False,
    ),
    ("v2 null key", lambda: v2_batch(7, [v2_record(0, None, commit_value(3))]), False),
    (
        "v2 one bad record of three",
        lambda: v2_batch(
            7, [v2_record(i, commit_key(), commit_value(3 if i != 1 else 4)) for i in range(3)]
        ),
        False,
    ),
    (
        "v2 recordsCount too high",
        lambda: v2_batch(7, [v2_record(0, commit_key(), None)], count=2),
        False,
    ),
    (
        "v2 recordsCount too low",
        lambda: v2_batch(7, [v2_record(i, commit_key(), None) for i in range(2)], count=1),
        False,
    ),
    ("v2 recordsCount -1", lambda: v2_batch(7, [], count=-1), False),
    ("v2 recordsCount beyond the bytes", lambda: v2_batch(7, [], count=1000), False),
    (
        "v2 negative header key",
        lambda: v2_batch(
            7, [raw_record(commit_key(), varint(-1), b"\x02" + varint(-1) + varint(-1))]
        ),
        False,
    ),
    (
        "v2 record length off by one",
        lambda: v2_batch(7, [raw_record(commit_key(), varint(-1), extra=b"\x00")]),
        False,
    ),
    ("v2 varint of 6 bytes", lambda: v2_batch(7, [b"\x80\x80\x80\x80\x80\x00"]), False),
    (
        "v2 offset overflows int64",
        lambda: v2_batch(2**63 - 1, [v2_record(5, commit_key(), None)]),
        False,
    ),
    ("v2 header only (61 bytes)", lambda: v2_batch(7, [], count=0), True),
    (
        "v2 entry smaller than the batch header",
        lambda: struct.pack(">qiib", 7, 40, 0, 2) + bytes(35),
        False,
    ),
]


def crc_body(body: bytes) -> bytes:
    return struct.pack(">I", zlib.crc32(body)) + body


def raw_record(
    key: bytes, value_part: bytes, headers_part: bytes = b"\x00", extra: bytes = b""
) -> bytes:
    """A v2 record with its value length and headers given as raw bytes."""
    body = b"\x00\x00\x00" + varint(len(key)) + key + value_part + headers_part
    return varint(len(body) + len(extra)) + body + extra


def fix_crcs(data: bytes) -> bytes:
    """``data`` with the CRC of every entry that can be framed recomputed (CRC-32 over magic..end
    for v0/v1 messages, CRC-32C over attributes..end for v2 batches), so that a mutation reaches
    the checks behind the CRC. Stops at the first entry that does not fit."""
    out = bytearray(data)
    pos = 0
    while len(out) - pos > 17:
        (size,) = struct.unpack_from(">i", out, pos + 8)
        end = pos + 12 + size
        if size < 14 or end > len(out):
            break
        magic = out[pos + 16]
        if magic in (0, 1):
            struct.pack_into(">I", out, pos + 12, zlib.crc32(bytes(out[pos + 16 : end])))
        elif magic == 2 and size >= 49:
            struct.pack_into(">I", out, pos + 17, crc32c(bytes(out[pos + 21 : end])))
        pos = end
    return bytes(out)
