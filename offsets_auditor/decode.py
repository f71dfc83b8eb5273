"""Decode ``__consumer_offsets`` segments: record framing plus key/value schemas.

:func:`decode_segment` walks one ``.log`` file and yields, in file order, a
:class:`DecodedRecord` for every record and a located :class:`DecodeError` for every problem.
A record whose key or value cannot be decoded is still yielded (with its raw bytes and the
error), so that counts add up and nothing is lost.
"""

from __future__ import annotations

import struct
from collections.abc import Callable, Iterator
from typing import Final, NamedTuple

from offsets_auditor.errors import CorruptError, DecodeError
from offsets_auditor.records.control import ControlRecord, decode_control
from offsets_auditor.records.log_file import (
    DEFAULT_DECOMPRESS_LIMIT,
    DEFAULT_MAX_BATCH_BYTES,
    DEFAULT_WINDOW_BYTES,
    ByteSource,
    read_batches,
)
from offsets_auditor.records.model import Batch, BatchHeader, Record
from offsets_auditor.schemas import RecordKey, RecordValue, UnknownValue, decode_key, decode_value

#: How many distinct keys a segment decode remembers (``__consumer_offsets`` is compacted: the
#: same few thousand keys come back again and again).
KEY_CACHE_SIZE: Final = 1 << 17

KeyCache = dict[bytes, RecordKey]
_new_tuple: Final = tuple.__new__


class DecodedRecord(NamedTuple):
    """One record of a segment with its batch and what its key and value mean.

    ``key`` is ``None`` for control records and for keys that failed to decode (then ``error``
    says why). ``value`` is ``None`` for tombstones and control records. ``control`` is set for
    the records of control batches (transaction markers). Records of one segment with equal
    key bytes may share one :class:`RecordKey` object: treat it as read-only.
    """

    file: str | None
    batch: BatchHeader
    record: Record
    key: RecordKey | None
    value: RecordValue | UnknownValue | None
    control: ControlRecord | None = None
    error: DecodeError | None = None


def decode_segment(
    source: ByteSource,
    *,
    file: str | None = None,
    window_bytes: int = DEFAULT_WINDOW_BYTES,
    max_batch_bytes: int = DEFAULT_MAX_BATCH_BYTES,
    decompress_limit: int = DEFAULT_DECOMPRESS_LIMIT,
) -> Iterator[DecodedRecord | DecodeError]:
    """Every record of a segment, decoded, and every problem, located. The limits are those
    of :func:`offsets_auditor.records.log_file.read_batches`."""
    keys: KeyCache = {}
    for item in read_batches(
        source,
        file=file,
        window_bytes=window_bytes,
        max_batch_bytes=max_batch_bytes,
        decompress_limit=decompress_limit,
    ):
        if isinstance(item, DecodeError):
            yield item
            continue
        header = item.header
        if header.is_control:
            yield from decode_batch_records(item, file, keys)
            continue
        for record in item.records:
            # the common case inline: a known key with a classic offset-commit value
            raw_key, raw_value = record.key, record.value
            key = keys.get(raw_key) if raw_key is not None else None
            if key is not None and key.key_type == "offset_commit":
                value = None if raw_value is None else offset_commit_value(raw_value)
                if value is not None or raw_value is None:
                    # DecodedRecord(file, header, record, key, value) without the Python-level
                    # NamedTuple.__new__ (a third of the cost)
                    yield _new_tuple(DecodedRecord, (file, header, record, key, value, None, None))
                    continue
            decoded = decode_record(header, record, file, keys)
            if decoded.error is not None:
                yield decoded.error
            yield decoded


def decode_batch_records(
    batch: Batch, file: str | None, keys: KeyCache | None = None
) -> Iterator[DecodedRecord | DecodeError]:
    """The decoded records of one batch, each preceded by its error if it has one. ``keys``
    caches decoded keys across the batches of a segment."""
    header = batch.header
    cache: KeyCache = {} if keys is None else keys
    for record in batch.records:
        decoded = decode_record(header, record, file, cache)
        if decoded.error is not None:
            yield decoded.error
        yield decoded


def decode_record(
    header: BatchHeader, record: Record, file: str | None, keys: KeyCache
) -> DecodedRecord:
    if header.is_control:
        try:
            control = decode_control(record.key, record.value)
        except DecodeError as error:
            return DecodedRecord(
                file, header, record, None, None, error=_at(error, header, record, file)
            )
        return DecodedRecord(file, header, record, None, None, control=control)
    raw_key = record.key
    if raw_key is None:
        missing = CorruptError(
            f"record at offset {record.offset} has a null key (Kafka: 'Group metadata/offset"
            " entry key should not be null')",
            field="key",
            position=header.position,
            file=file,
        )
        return DecodedRecord(file, header, record, None, None, error=missing)
    key = keys.get(raw_key)
    if key is None:
        key = offset_commit_key(raw_key)
        if key is None:
            try:
                key = decode_key(raw_key)
            except DecodeError as error:
                return DecodedRecord(
                    file, header, record, None, None, error=_at(error, header, record, file, "key")
                )
        else:
            if len(keys) >= KEY_CACHE_SIZE:
                keys.clear()
            keys[raw_key] = key
    raw_value = record.value
    if raw_value is None:
        return DecodedRecord(file, header, record, key, None)
    value: RecordValue | UnknownValue | None = (
        offset_commit_value(raw_value) if key.key_type == "offset_commit" else None
    )
    if value is None:
        try:
            value = decode_value(key, raw_value)
        except DecodeError as error:
            return DecodedRecord(
                file, header, record, key, None, error=_at(error, header, record, file, "value")
            )
    return DecodedRecord(file, header, record, key, value)


# -- the fast path for classic offset commits ----------------------------------------------------
#
# Nearly every record of ``__consumer_offsets`` is an OffsetCommitKey v0/v1 with an
# OffsetCommitValue v0-v3 (docs/kafka-internals.md §2.2-2.3). These two functions decode exactly
# that, in one ``struct`` call per fixed part, into the same objects the schema decoder builds
# (``schemas.classic``), and return ``None`` for anything else, including every malformed or
# non-UTF-8 input: the schema decoder then decides (and says what is wrong). Tests check that both
# agree on every real fixture and on generated keys and values.

_KEY_HEAD: Final = struct.Struct(">hh")  # key version, group length
_INT16: Final = struct.Struct(">h")
_INT32: Final = struct.Struct(">i")
_VALUE_HEAD: Final = struct.Struct(">hqh")  # v0-v2: version, offset, metadata length
_VALUE_HEAD_V3: Final = struct.Struct(">hqih")  # v3: version, offset, leader_epoch, metadata length
_INT64: Final = struct.Struct(">q")
_INT64_PAIR: Final = struct.Struct(">qq")  # v1: commit_timestamp, expire_timestamp
_MIN_KEY: Final = 10  # version, two empty strings, partition
_MIN_VALUE: Final = 20  # v0/v2: version, offset, empty metadata, commit_timestamp


def offset_commit_key(raw: bytes) -> RecordKey | None:
    """``raw`` as an OffsetCommitKey v0/v1 (version, group, topic, partition, nothing after), or
    ``None`` when it is anything else."""
    size = len(raw)
    if size < _MIN_KEY:
        return None
    version, group_length = _KEY_HEAD.unpack_from(raw)
    if version > 1 or version < 0 or group_length < 0:
        return None
    topic_at = 4 + group_length
    if topic_at + 6 > size:
        return None
    (topic_length,) = _INT16.unpack_from(raw, topic_at)
    if topic_length < 0 or topic_at + 6 + topic_length != size:
        return None
    try:
        group = raw[4:topic_at].decode()
        topic = raw[topic_at + 2 : size - 4].decode()
    except UnicodeDecodeError:  # the schema decoder does the JDK's replacement
        return None
    (partition,) = _INT32.unpack_from(raw, size - 4)
    fields = {"group": group, "topic": topic, "partition": partition}
    return RecordKey("offset_commit", version, group, topic, partition, fields)


#: What :func:`offset_commit_value_parts` reads: version, offset, leader_epoch (v3, else -1),
#: metadata, commit_timestamp, expire_timestamp (v1, else -1).
OffsetCommitParts = tuple[int, int, int, str, int, int]


def offset_commit_value_parts(raw: bytes) -> OffsetCommitParts | None:
    """The fields of ``raw`` as an OffsetCommitValue v0-v3 (trailing bytes ignored, as Kafka
    does), or ``None`` when it is anything else."""
    size = len(raw)
    if size < _MIN_VALUE or raw[0]:  # v0-v3: the int16 version's high byte is 0
        return None
    version = raw[1]
    leader_epoch = -1
    if version == 3:
        if size < _MIN_VALUE + 4:
            return None
        _, offset, leader_epoch, length = _VALUE_HEAD_V3.unpack_from(raw)
        at = _VALUE_HEAD_V3.size
    elif version <= 2:
        _, offset, length = _VALUE_HEAD.unpack_from(raw)
        at = _VALUE_HEAD.size
    else:
        return None
    end = at + length
    if length:
        if length < 0 or end + (16 if version == 1 else 8) > size:
            return None
        try:
            metadata = raw[at:end].decode()
        except UnicodeDecodeError:  # the schema decoder does the JDK's replacement
            return None
    else:
        metadata = ""
    if version == 1:
        if end + 16 > size:
            return None
        commit_timestamp, expire_timestamp = _INT64_PAIR.unpack_from(raw, end)
        return 1, offset, -1, metadata, commit_timestamp, expire_timestamp
    return version, offset, leader_epoch, metadata, _INT64.unpack_from(raw, end)[0], -1


def offset_commit_value(raw: bytes) -> RecordValue | None:
    """``raw`` as an OffsetCommitValue v0-v3 (trailing bytes ignored, as Kafka does), or
    ``None`` when it is anything else."""
    parts = offset_commit_value_parts(raw)
    if parts is None:
        return None
    version, offset, leader_epoch, metadata, commit_timestamp, expire_timestamp = parts
    fields: dict[str, object]
    if version == 1:
        fields = {
            "offset": offset,
            "metadata": metadata,
            "commit_timestamp": commit_timestamp,
            "expire_timestamp": expire_timestamp,
        }
    elif version == 3:
        fields = {
            "offset": offset,
            "leader_epoch": leader_epoch,
            "metadata": metadata,
            "commit_timestamp": commit_timestamp,
        }
    else:
        fields = {"offset": offset, "metadata": metadata, "commit_timestamp": commit_timestamp}
    return _new_record_value(version, fields)


def _record_value_factory() -> Callable[[int, dict[str, object]], RecordValue]:
    """``RecordValue(version, fields, {})``, built by setting its slots directly when it is the
    frozen slotted dataclass of ``schemas.model`` with exactly these fields (less than half the
    time of the frozen ``__init__``, which sets each field through ``object.__setattr__``);
    otherwise by calling it."""
    names = ("version", "fields", "unknown_tagged_fields", "layout")
    declared = getattr(RecordValue, "__dataclass_fields__", {})
    if tuple(declared) != names or getattr(RecordValue, "__slots__", None) is None:
        return lambda version, fields: RecordValue(version, fields, {})
    set_version, set_fields, set_unknown, set_layout = (
        RecordValue.__dict__[name].__set__ for name in names
    )
    new = object.__new__

    def build(version: int, fields: dict[str, object]) -> RecordValue:
        value: RecordValue = new(RecordValue)
        set_version(value, version)
        set_fields(value, fields)
        set_unknown(value, {})
        set_layout(value, None)
        return value

    return build


_new_record_value: Final = _record_value_factory()


def _at(
    error: DecodeError, header: BatchHeader, record: Record, file: str | None, part: str = ""
) -> DecodeError:
    """Anchor a key/value error at its batch's file position (key and value bytes inside a
    compressed batch have no position of their own); keep the byte within the key/value in
    the message."""
    within = (
        f" (byte {error.position} of the {part})" if part and error.position is not None else ""
    )
    return type(error)(
        f"record at offset {record.offset}: {error.message}{within}",
        field=f"{part}.{error.field}" if part else error.field,
        position=header.position,
        file=file,
    )
