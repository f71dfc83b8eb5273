"""A ``__consumer_offsets`` segment written from typed records, so that a rule table can run the
production path (the C reader's columns, ``DeltaBuilder.add``) on its cases.

Batches are built by kafka-python's ``DefaultRecordBatchBuilder`` (an independent v2
implementation); keys and values are written field by field from Kafka's schemas
(``tests/schemas/wire.py``): OffsetCommitKey v1, OffsetCommitValue v3, GroupMetadataKey v2,
GroupMetadataValue v1 (members with a ConsumerProtocol v0 assignment), control records
(``ControlRecordType``: version 0, type; value: version 0, coordinator epoch). A control batch's
attributes get bit 5 and its CRC-32C is computed again.
"""

from __future__ import annotations

import struct
from collections.abc import Sequence
from typing import Any

from crc32c import crc32c
from kafka.record.default_records import DefaultRecordBatchBuilder

from tests.schemas.wire import b, i16, i32, i64, s

#: v2 batch header offsets: baseOffset, crc, attributes (``DefaultRecordBatch``).
_BASE_OFFSET, _CRC, _ATTRIBUTES = 0, 17, 21
_CONTROL = 0x20


def key_bytes(key: Any) -> bytes:
    if key.key_type == "offset_commit":
        return i16(1) + s(key.group) + s(key.topic) + i32(key.partition)
    if key.key_type == "group_metadata":
        return i16(2) + s(key.group)
    raise ValueError(f"no encoder for {key.key_type}")


def _assignment(assignment: dict[str, Any]) -> bytes:
    out = i16(assignment["version"]) + i32(len(assignment["assigned_partitions"]))
    for entry in assignment["assigned_partitions"]:
        out += s(entry["topic"]) + i32(len(entry["partitions"]))
        out += b"".join(i32(p) for p in entry["partitions"])
    return out + b(None)  # user data


def value_bytes(key: Any, value: Any) -> bytes | None:
    if value is None:
        return None
    f = value.fields
    if key.key_type == "offset_commit" and value.version == 3:
        return (
            i16(3) + i64(f["offset"]) + i32(f["leader_epoch"]) + s(f["metadata"])
            + i64(f["commit_timestamp"])
        )  # fmt: skip
    if key.key_type == "group_metadata" and value.version == 1:
        out = i16(1) + s(f["protocol_type"]) + i32(f["generation"]) + s(f["protocol"])
        out += s(f["leader"]) + i32(len(f["members"]))
        for m in f["members"]:
            out += s(m["member_id"]) + s(m["client_id"]) + s(m["client_host"])
            out += i32(m["rebalance_timeout"]) + i32(m["session_timeout"])
            out += b(m["subscription"]) + b(_assignment(m["assignment"]))
        return out
    raise ValueError(f"no encoder for {key.key_type} value v{value.version}")


def encodable(records: Sequence[Any]) -> bool:
    """Whether every record's key and value can be written here."""
    try:
        for r in records:
            if r.control is None:
                key_bytes(r.key)
                value_bytes(r.key, r.value)
    except (ValueError, KeyError):
        return False
    return True


def segment_bytes(records: Sequence[Any]) -> bytes:
    """The records (``reader.decode.DecodedRecord``, offsets increasing) as a segment: records
    sharing a batch header (its position) share a batch."""
    out = bytearray()
    batches: list[list[Any]] = []
    for r in records:
        if batches and batches[-1][0].batch.position == r.batch.position:
            batches[-1].append(r)
        else:
            batches.append([r])
    for batch in batches:
        header = batch[0].batch
        base = batch[0].record.offset
        builder = DefaultRecordBatchBuilder(
            2, 0, header.is_transactional, header.producer_id, header.producer_epoch, -1, 1 << 20
        )
        for r in batch:
            if r.control is not None:
                key, value = i16(0) + i16(r.control.type_id), i16(0) + i32(0)
            else:
                key, value = key_bytes(r.key), value_bytes(r.key, r.value)
            builder.append(r.record.offset - base, 0, key, value, [])
        data = bytearray(builder.build())
        struct.pack_into(">q", data, _BASE_OFFSET, base)
        if header.is_control:
            data[_ATTRIBUTES + 1] |= _CONTROL  # attributes is an int16: the low byte
            struct.pack_into(">I", data, _CRC, crc32c(bytes(data[_ATTRIBUTES:])))
        out += data
    return bytes(out)


class BytesSource:
    """A segment's bytes as the reader reads a file (``reader.segment.ByteSource``)."""

    def __init__(self, data: bytes) -> None:
        self.data = data

    @property
    def size(self) -> int:
        return len(self.data)

    def read_at(self, position: int, length: int) -> bytes:
        return self.data[position : position + length]
