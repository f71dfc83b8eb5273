"""Decoded records, one by one, from the columns of ``offsets_auditor.reader``.

:func:`decode_segment` reads one ``.log`` file (``reader.read_segment``) and yields, in file
order, a :class:`DecodedRecord` for every record and a located :class:`DecodeError` for every
problem. A record whose key or value cannot be decoded is still yielded (with its raw bytes and
the error), preceded by that error, so that counts add up and nothing is lost.

Keys and values the reader decoded into columns (``KeyStatus.OK``, ``ValueStatus.OK``) are
built from them; the rest is decoded here by ``offsets_auditor.schemas`` (:func:`decode_record`),
the reference for everything. Strings are Java-decoded (``schemas.java_utf8``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Final, NamedTuple

from offsets_auditor.errors import CorruptError, DecodeError
from offsets_auditor.reader.columns import Chunk, KeyStatus, ValueStatus
from offsets_auditor.reader.options import DEFAULT_LIMITS, Backend, Limits
from offsets_auditor.reader.segment import ByteSource, read_segment
from offsets_auditor.records.control import CONTROL_TYPES, ControlRecord, decode_control
from offsets_auditor.records.model import BatchHeader, Record
from offsets_auditor.schemas import RecordKey, RecordValue, UnknownValue, decode_key, decode_value
from offsets_auditor.schemas.java_utf8 import java_utf8

_new_tuple: Final = tuple.__new__


class DecodedRecord(NamedTuple):
    """One record of a segment with its batch and what its key and value mean.

    ``key`` is ``None`` for control records and for keys that failed to decode (then ``error``
    says why). ``value`` is ``None`` for tombstones and control records. ``control`` is set for
    the records of control batches (transaction markers). Records of one segment with equal
    keys may share one :class:`RecordKey` object: treat it as read-only.
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
    backend: Backend = Backend.NATIVE,
    limits: Limits = DEFAULT_LIMITS,
) -> Iterator[DecodedRecord | DecodeError]:
    """Every record of a segment, decoded, and every problem, located."""
    rows = RowDecoder(file)
    for item in read_segment(source, file=file, backend=backend, limits=limits, digests=False):
        if isinstance(item, DecodeError):
            yield item
        else:
            yield from rows.rows(item)


@dataclass
class RowDecoder:
    """Turns the rows of a segment's chunks into :class:`DecodedRecord`\\ s (one instance per
    segment: it caches decoded strings and keys by id)."""

    file: str | None
    _texts: dict[int, str] = field(default_factory=dict)
    _keys: dict[tuple[int, int, int, int], RecordKey] = field(default_factory=dict)

    def text(self, chunk: Chunk, string_id: int) -> str:
        """String ``string_id`` of the segment's table, decoded as Java decodes it."""
        text = self._texts.get(string_id)
        if text is None:
            text = self._texts[string_id] = java_utf8(chunk.strings[string_id])
        return text

    def rows(self, chunk: Chunk) -> Iterator[DecodedRecord | DecodeError]:
        """Each record of ``chunk``, preceded by its error if it has one."""
        for decoded in self.decoded(chunk):
            if decoded.error is not None:
                yield decoded.error
            yield decoded

    def decoded(self, chunk: Chunk, rows: Iterable[int] | None = None) -> Iterator[DecodedRecord]:
        """The :class:`DecodedRecord` of each row (all, or ``rows``), errors attached."""
        r = chunk.records
        headers = batch_headers(chunk)
        columns = (
            r.batch.tolist(),
            r.offset.tolist(),
            r.timestamp.tolist(),
            r.magic.tolist(),
            r.key_status.tolist(),
            r.value_status.tolist(),
            r.group.tolist(),
        )
        batch_of, offsets, timestamps, magics, key_status, value_status, groups = columns
        for row in rows if rows is not None else range(len(r)):
            header = headers[batch_of[row]]
            record = _new_tuple(
                Record,
                (
                    offsets[row],
                    timestamps[row],
                    chunk.key_bytes(row),
                    chunk.value_bytes(row),
                    magics[row],
                    (),
                ),
            )
            ks = key_status[row]
            named = groups[row] >= 0  # not so when read without names: decode the key's bytes
            if ks == KeyStatus.OK and named and value_status[row] != ValueStatus.DEFERRED:
                key = self._column_key(chunk, row)
                value = None if value_status[row] == ValueStatus.NULL else _column_value(chunk, row)
                yield _new_tuple(DecodedRecord, (self.file, header, record, key, value, None, None))
            elif ks == KeyStatus.CONTROL:
                control = ControlRecord(
                    CONTROL_TYPES.get(int(r.control_type[row]), "unknown"),
                    int(r.control_type[row]),
                    int(r.coordinator_epoch[row]) if int(r.control_type[row]) in (0, 1) else None,
                )
                yield DecodedRecord(self.file, header, record, None, None, control=control)
            else:
                known = self._column_key(chunk, row) if ks == KeyStatus.OK and named else None
                yield decode_record(header, record, self.file, known)

    def _column_key(self, chunk: Chunk, row: int) -> RecordKey:
        r = chunk.records
        ident = (
            int(r.key_type[row]),
            int(r.group[row]),
            int(r.topic[row]),
            int(r.partition[row]),
        )
        key = self._keys.get(ident)
        if key is None:
            version, group_id, topic_id, partition = ident
            group = self.text(chunk, group_id)
            if topic_id < 0:
                key = RecordKey("group_metadata", version, group, fields={"group": group})
            else:
                topic = self.text(chunk, topic_id)
                fields = {"group": group, "topic": topic, "partition": partition}
                key = RecordKey("offset_commit", version, group, topic, partition, fields)
            if len(self._keys) >= _KEY_CACHE_SIZE:
                self._keys.clear()
            self._keys[ident] = key
        return key


#: How many distinct keys a segment's :class:`RowDecoder` remembers.
_KEY_CACHE_SIZE: Final = 1 << 17


def batch_headers(chunk: Chunk) -> list[BatchHeader]:
    """The :class:`BatchHeader` of each batch row of ``chunk``."""
    b = chunk.batches
    columns = (
        b.position.tolist(),
        b.size.tolist(),
        b.magic.tolist(),
        b.base_offset.tolist(),
        b.last_offset.tolist(),
        b.codec.tolist(),
        b.timestamp_type.tolist(),
        b.max_timestamp.tolist(),
        b.crc.tolist(),
        b.transactional.tolist(),
        b.control.tolist(),
        b.producer_id.tolist(),
        b.producer_epoch.tolist(),
        b.base_sequence.tolist(),
        b.partition_leader_epoch.tolist(),
        b.record_count.tolist(),
        b.delete_horizon.tolist(),
        b.has_delete_horizon.tolist(),
    )
    headers = []
    for (
        position,
        size,
        magic,
        base_offset,
        last_offset,
        codec,
        timestamp_type,
        max_timestamp,
        crc,
        transactional,
        control,
        producer_id,
        producer_epoch,
        base_sequence,
        partition_leader_epoch,
        record_count,
        delete_horizon,
        has_delete_horizon,
    ) in zip(*columns, strict=True):
        headers.append(
            BatchHeader(
                position,
                size,
                magic,
                base_offset,
                last_offset,
                codec,
                timestamp_type,
                max_timestamp,
                crc,
                bool(transactional),
                bool(control),
                producer_id,
                producer_epoch,
                base_sequence,
                partition_leader_epoch,
                None if record_count < 0 else record_count,
                delete_horizon if has_delete_horizon else None,
            )
        )
    return headers


def _column_value(chunk: Chunk, row: int) -> RecordValue:
    """The OffsetCommitValue v0-v3 the reader decoded into the columns of ``row``."""
    r = chunk.records
    version = int(r.value_version[row])
    offset = int(r.committed_offset[row])
    metadata = java_utf8(chunk.metadata_bytes(row))
    commit_timestamp = int(r.commit_timestamp[row])
    fields: dict[str, object]
    if version == 1:
        fields = {
            "offset": offset,
            "metadata": metadata,
            "commit_timestamp": commit_timestamp,
            "expire_timestamp": int(r.expire_timestamp[row]),
        }
    elif version == 3:
        fields = {
            "offset": offset,
            "leader_epoch": int(r.leader_epoch[row]),
            "metadata": metadata,
            "commit_timestamp": commit_timestamp,
        }
    else:
        fields = {"offset": offset, "metadata": metadata, "commit_timestamp": commit_timestamp}
    return _new_record_value(version, fields)


def decode_record(
    header: BatchHeader, record: Record, file: str | None, key: RecordKey | None = None
) -> DecodedRecord:
    """The reference decode of one record's key and value (``key``: already decoded)."""
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
    if key is None:
        try:
            key = decode_key(raw_key)
        except DecodeError as error:
            return DecodedRecord(
                file, header, record, None, None, error=_at(error, header, record, file, "key")
            )
    raw_value = record.value
    if raw_value is None:
        return DecodedRecord(file, header, record, key, None)
    try:
        value = decode_value(key, raw_value)
    except DecodeError as error:
        return DecodedRecord(
            file, header, record, key, None, error=_at(error, header, record, file, "value")
        )
    return DecodedRecord(file, header, record, key, value)


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
