"""What the readers decode of a record's key and value into columns: the reference rules.

``offsets_auditor/_native.c`` implements the same rules (``classify_key``/``classify_value``);
the tests compare both on every fixture and under fuzzing. Anything these functions do not take
is left ``DEFERRED`` for ``offsets_auditor.schemas`` to decode (or to reject) when a rule needs
it, so nothing here ever reports a problem.

Layouts (docs/kafka-internals.md §2.2-2.3; A:0.9.0.1 ``GroupMetadataManager.scala`` schemas,
A:2.8.0 ``OffsetCommitKey.json``/``OffsetCommitValue.json``)::

    OffsetCommitKey v0/v1  = int16 version, string group, string topic, int32 partition
    GroupMetadataKey v2    = int16 version, string group
    OffsetCommitValue v0/v2= int16 version, int64 offset, string metadata, int64 commit_timestamp
    OffsetCommitValue v1   = ... string metadata, int64 commit_timestamp, int64 expire_timestamp
    OffsetCommitValue v3   = int16 version, int64 offset, int32 leader_epoch, string metadata,
                             int64 commit_timestamp
    string                 = int16 length (>= 0 here), bytes

A key must use every byte (our rule: the cleaner compares raw key bytes, so a key with bytes left
over is another key); a value may have trailing bytes (Kafka's readers ignore them).
"""

from __future__ import annotations

import struct
from typing import Final, NamedTuple

_INT16: Final = struct.Struct(">h")
_INT32: Final = struct.Struct(">i")
_INT64: Final = struct.Struct(">q")

#: OffsetCommitValue: version, offset (then v3: leader_epoch).
_VALUE_HEAD: Final = struct.Struct(">hq")
_VALUE_HEAD_V3: Final = struct.Struct(">hqi")


class Span(NamedTuple):
    """``length`` bytes at ``start`` of the buffer they were found in."""

    start: int
    length: int


class OffsetCommitKeyFields(NamedTuple):
    version: int
    group: Span
    topic: Span
    partition: int


class OffsetCommitValueFields(NamedTuple):
    """An OffsetCommitValue v0-v3; ``leader_epoch`` -1 before v3, ``expire_timestamp`` -1
    except in v1; ``metadata`` relative to the value's first byte."""

    version: int
    offset: int
    leader_epoch: int
    metadata: Span
    commit_timestamp: int
    expire_timestamp: int


def _string(raw: bytes, at: int) -> Span | None:
    """The non-null string (int16 length, bytes) at ``at`` when it fits in ``raw``."""
    if at + 2 > len(raw):
        return None
    (length,) = _INT16.unpack_from(raw, at)
    if length < 0 or at + 2 + length > len(raw):
        return None
    return Span(at + 2, length)


def key_type(raw: bytes | None) -> int:
    """The int16 prefix of a key (its record type), -1 when null or shorter than 2 bytes."""
    if raw is None or len(raw) < 2:
        return -1
    value: int = _INT16.unpack_from(raw)[0]
    return value


def group_span(raw: bytes) -> Span | None:
    """Where the group id is in any ``__consumer_offsets`` key: every key type starts with
    ``int16 type`` and the group id as a non-flexible string (docs §2.2, §2.6)."""
    return _string(raw, 2) if len(raw) >= 4 else None


def offset_commit_key(raw: bytes) -> OffsetCommitKeyFields | None:
    """An OffsetCommitKey v0/v1 using every byte of ``raw``, or None."""
    version = key_type(raw)
    if version not in (0, 1):
        return None
    group = _string(raw, 2)
    if group is None:
        return None
    topic = _string(raw, group.start + group.length)
    if topic is None or topic.start + topic.length + 4 != len(raw):
        return None
    (partition,) = _INT32.unpack_from(raw, len(raw) - 4)
    return OffsetCommitKeyFields(version, group, topic, partition)


def group_metadata_key(raw: bytes) -> Span | None:
    """The group of a GroupMetadataKey v2 using every byte of ``raw``, or None."""
    if key_type(raw) != 2:
        return None
    group = _string(raw, 2)
    if group is None or group.start + group.length != len(raw):
        return None
    return group


def offset_commit_value(raw: bytes) -> OffsetCommitValueFields | None:
    """An OffsetCommitValue v0-v3 whose fields all fit in ``raw`` (trailing bytes allowed)."""
    version = key_type(raw)
    if version == 3:
        if len(raw) < _VALUE_HEAD_V3.size:
            return None
        _, offset, leader_epoch = _VALUE_HEAD_V3.unpack_from(raw)
        at = _VALUE_HEAD_V3.size
    elif 0 <= version <= 2:
        if len(raw) < _VALUE_HEAD.size:
            return None
        _, offset = _VALUE_HEAD.unpack_from(raw)
        leader_epoch, at = -1, _VALUE_HEAD.size
    else:
        return None
    metadata = _string(raw, at)
    if metadata is None:
        return None
    at = metadata.start + metadata.length
    if at + (16 if version == 1 else 8) > len(raw):
        return None
    (commit_timestamp,) = _INT64.unpack_from(raw, at)
    expire_timestamp = _INT64.unpack_from(raw, at + 8)[0] if version == 1 else -1
    return OffsetCommitValueFields(
        version, offset, leader_epoch, metadata, commit_timestamp, expire_timestamp
    )
