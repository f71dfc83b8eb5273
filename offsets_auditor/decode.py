"""Decode ``__consumer_offsets`` segments: record framing plus key/value schemas.

:func:`decode_segment` walks one ``.log`` file and yields, in file order, a
:class:`DecodedRecord` for every record and a located :class:`DecodeError` for every problem.
A record whose key or value cannot be decoded is still yielded (with its raw bytes and the
error), so that counts add up and nothing is lost.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from offsets_auditor.errors import CorruptError, DecodeError
from offsets_auditor.records.control import ControlRecord, decode_control
from offsets_auditor.records.log_file import ByteSource, read_batches
from offsets_auditor.records.model import Batch, BatchHeader, Record
from offsets_auditor.schemas import RecordKey, RecordValue, UnknownValue, decode_key, decode_value


@dataclass(frozen=True, slots=True)
class DecodedRecord:
    """One record of a segment with its batch and what its key and value mean.

    ``key`` is ``None`` for control records and for keys that failed to decode (then ``error``
    says why). ``value`` is ``None`` for tombstones and control records. ``control`` is set for
    the records of control batches (transaction markers).
    """

    file: str | None
    batch: BatchHeader
    record: Record
    key: RecordKey | None
    value: RecordValue | UnknownValue | None
    control: ControlRecord | None = None
    error: DecodeError | None = None


def decode_segment(
    source: ByteSource, *, file: str | None = None, **limits: int
) -> Iterator[DecodedRecord | DecodeError]:
    """Every record of a segment, decoded, and every problem, located. ``limits`` are passed
    to :func:`offsets_auditor.records.log_file.read_batches`."""
    for item in read_batches(source, file=file, **limits):
        if isinstance(item, DecodeError):
            yield item
            continue
        yield from decode_batch_records(item, file)


def decode_batch_records(batch: Batch, file: str | None) -> Iterator[DecodedRecord | DecodeError]:
    header = batch.header
    for record in batch.records:
        decoded = _decode_record(header, record, file)
        if decoded.error is not None:
            yield decoded.error
        yield decoded


def _decode_record(header: BatchHeader, record: Record, file: str | None) -> DecodedRecord:
    if header.is_control:
        try:
            control = decode_control(record.key, record.value)
        except DecodeError as error:
            return DecodedRecord(file, header, record, None, None, error=_at(error, header, record, file))
        return DecodedRecord(file, header, record, None, None, control=control)
    if record.key is None:
        missing = CorruptError(
            f"record at offset {record.offset} has a null key (Kafka: 'Group metadata/offset"
            " entry key should not be null')",
            field="key",
            position=header.position,
            file=file,
        )
        return DecodedRecord(file, header, record, None, None, error=missing)
    try:
        key = decode_key(record.key)
    except DecodeError as error:
        return DecodedRecord(file, header, record, None, None, error=_at(error, header, record, file, "key"))
    if record.value is None:
        return DecodedRecord(file, header, record, key, None)
    try:
        value = decode_value(key, record.value)
    except DecodeError as error:
        return DecodedRecord(file, header, record, key, None, error=_at(error, header, record, file, "value"))
    return DecodedRecord(file, header, record, key, value)


def _at(
    error: DecodeError, header: BatchHeader, record: Record, file: str | None, part: str = ""
) -> DecodeError:
    """Anchor a key/value error at its batch's file position (key and value bytes inside a
    compressed batch have no position of their own); keep the byte within the key/value in
    the message."""
    within = f" (byte {error.position} of the {part})" if part and error.position is not None else ""
    return type(error)(
        f"record at offset {record.offset}: {error.message}{within}",
        field=f"{part}.{error.field}" if part else error.field,
        position=header.position,
        file=file,
    )
