"""Record batches: message format v2 (magic 2, Kafka 0.11.0+).

Grammar (3.8.0 ``clients/.../record/DefaultRecordBatch.java`` and ``DefaultRecord.java``)::

    batch   = baseOffset:int64 length:int32 partitionLeaderEpoch:int32 magic:int8 crc:uint32
              attributes:int16 lastOffsetDelta:int32 baseTimestamp:int64 maxTimestamp:int64
              producerId:int64 producerEpoch:int16 baseSequence:int32 recordsCount:int32
              records                       ; compressed as one stream when the codec is not none
    record  = length:varint attributes:int8 timestampDelta:varlong offsetDelta:varint
              keyLength:varint key valueLength:varint value headersCount:varint header*
    header  = keyLength:varint key valueLength:varint value

The CRC-32C covers ``attributes`` to the end of the batch. Varints are zig-zag encoded; a length
of -1 is null. ``attributes``: bits 0-2 codec, 3 timestamp type, 4 transactional, 5 control,
6 delete horizon set (3.1+, then ``baseTimestamp`` is the delete horizon).
"""

from __future__ import annotations

import struct

from offsets_auditor import _native
from offsets_auditor.errors import ChecksumError, CorruptError, DecodeError, TruncatedError
from offsets_auditor.records.compression import Codec, decompress
from offsets_auditor.records.model import Batch, BatchHeader, Record, TimestampType
from offsets_auditor.records.varint import read_varint, read_varlong

#: The 61-byte batch header (``DefaultRecordBatch.RECORD_BATCH_OVERHEAD``), Kafka's field names.
BATCH_HEADER = struct.Struct(
    ">q"  # baseOffset
    "i"  # length: bytes after this field
    "i"  # partitionLeaderEpoch (not covered by the CRC)
    "b"  # magic
    "I"  # crc: CRC-32C from attributes to the end
    "h"  # attributes
    "i"  # lastOffsetDelta
    "q"  # baseTimestamp (the delete horizon when attribute bit 6 is set)
    "q"  # maxTimestamp
    "q"  # producerId
    "h"  # producerEpoch
    "i"  # baseSequence
    "i"  # recordsCount
)
RECORD_BATCH_OVERHEAD = BATCH_HEADER.size  # 61
_LOG_OVERHEAD = struct.Struct(">qi")  # baseOffset, length: what precedes the rest of the header
ATTRIBUTES_OFFSET = struct.calcsize(">qiibI")  # 21: where the CRC starts

CODEC_MASK = 0x07
TIMESTAMP_TYPE_MASK = 0x08
TRANSACTIONAL_FLAG_MASK = 0x10
CONTROL_FLAG_MASK = 0x20
DELETE_HORIZON_FLAG_MASK = 0x40


def decode_batch(buf: memoryview, pos: int, *, position: int, decompress_limit: int) -> Batch:
    """Decode the v2 batch starting at ``buf[pos]``, which holds all of it.

    ``position`` is the batch's byte position in its file. Raises ``CorruptError`` or
    ``TruncatedError`` with positions relative to ``buf``. A CRC that does not match is no
    reason to stop (the broker never checks it): the records come with the ``ChecksumError``.
    """
    _, declared = _LOG_OVERHEAD.unpack_from(buf, pos)
    if 12 + declared < RECORD_BATCH_OVERHEAD:  # check before reading a header that isn't there
        raise CorruptError(
            f"Record batch is corrupt (the size {12 + declared} is smaller than the minimum allowed"
            f" overhead {RECORD_BATCH_OVERHEAD})",
            field="length",
            position=pos + 8,
        )
    end = pos + 12 + declared
    crc = BATCH_HEADER.unpack_from(buf, pos)[4]
    computed = _native.crc(buf[pos + ATTRIBUTES_OFFSET : end], True)
    checksum = (
        None
        if computed == crc
        else ChecksumError(
            f"Record is corrupt (stored crc = {crc}, computed crc = {computed})",
            field="crc",
            position=pos,
        )
    )
    try:
        return Batch(*_decoded(buf, pos, end, position, decompress_limit), checksum)
    except DecodeError as error:
        if checksum is None:
            raise
        raise error.with_checksum_mismatch(checksum) from None


def _decoded(
    buf: memoryview, pos: int, end: int, position: int, decompress_limit: int
) -> tuple[BatchHeader, tuple[Record, ...]]:
    """The header and records of the v2 batch ``buf[pos:end]`` (its CRC aside)."""
    (
        base_offset,
        length,
        partition_leader_epoch,
        magic,
        crc,
        attributes,
        last_offset_delta,
        base_timestamp,
        max_timestamp,
        producer_id,
        producer_epoch,
        base_sequence,
        records_count,
    ) = BATCH_HEADER.unpack_from(buf, pos)
    codec = attributes & CODEC_MASK
    has_delete_horizon = bool(attributes & DELETE_HORIZON_FLAG_MASK)
    log_append_time = bool(attributes & TIMESTAMP_TYPE_MASK)
    header = BatchHeader(
        position=position,
        size=12 + length,
        magic=magic,
        base_offset=base_offset,
        last_offset=base_offset + last_offset_delta,
        codec=codec,
        timestamp_type=TimestampType.LOG_APPEND_TIME
        if log_append_time
        else TimestampType.CREATE_TIME,
        max_timestamp=max_timestamp,
        crc=crc,
        is_transactional=bool(attributes & TRANSACTIONAL_FLAG_MASK),
        is_control=bool(attributes & CONTROL_FLAG_MASK),
        producer_id=producer_id,
        producer_epoch=producer_epoch,
        base_sequence=base_sequence,
        partition_leader_epoch=partition_leader_epoch,
        record_count=records_count,
        delete_horizon_ms=base_timestamp if has_delete_horizon else None,
    )
    if records_count < 0:
        raise CorruptError(
            f"Found invalid record count {records_count} in magic v2 batch",
            field="recordsCount",
            position=pos + 57,
        )
    body_start = pos + RECORD_BATCH_OVERHEAD
    if codec == Codec.NONE:
        body, body_pos, body_end, anchor = buf, body_start, end, 0
    else:
        try:
            body = memoryview(
                decompress(codec, buf[body_start:end], magic=2, limit=decompress_limit)
            )
        except DecodeError as error:
            raise error.located(base=body_start) from None
        body_pos, body_end, anchor = 0, len(body), body_start
    records = _records(
        body,
        body_pos,
        body_end,
        records_count,
        base_offset,
        base_timestamp,
        max_timestamp if log_append_time else None,
        compressed_at=anchor if codec != Codec.NONE else None,
    )
    return header, records


def _records(
    body: memoryview,
    pos: int,
    end: int,
    count: int,
    base_offset: int,
    base_timestamp: int,
    log_append_timestamp: int | None,
    compressed_at: int | None,
) -> tuple[Record, ...]:
    """``count`` records from ``body[pos:end]``. Positions in errors point into ``body`` for an
    uncompressed batch, and at the compressed payload for a compressed one."""
    if count > end - pos:  # every record takes at least 1 byte: refuse before allocating
        raise CorruptError(
            f"recordsCount {count} is more than the {end - pos} bytes of records can hold",
            field="recordsCount",
            position=compressed_at if compressed_at is not None else pos,
        )
    records = []
    try:
        for index in range(count):
            record, pos = _record(
                body, pos, end, index, base_offset, base_timestamp, log_append_timestamp
            )
            records.append(record)
        if pos != end:
            raise CorruptError(
                "Incorrect declared batch size, records still remaining in file",
                field="records",
                position=pos,
            )
    except DecodeError as error:
        if compressed_at is None:
            raise
        raise type(error)(error.message, field=error.field, position=compressed_at) from None
    return tuple(records)


def _record(
    body: memoryview,
    pos: int,
    end: int,
    index: int,
    base_offset: int,
    base_timestamp: int,
    log_append_timestamp: int | None,
) -> tuple[Record, int]:
    field = f"records[{index}]"
    length, pos = read_varint(body, pos, end, f"{field}.length")
    record_end = pos + length
    if length < 0 or record_end > end:
        raise TruncatedError(
            f"record of {length} bytes runs past the batch"
            if length >= 0
            else f"negative record length {length}",
            field=f"{field}.length",
            position=pos,
        )
    pos += 1  # attributes: unused
    timestamp_delta, pos = read_varlong(body, pos, record_end, f"{field}.timestampDelta")
    offset_delta, pos = read_varint(body, pos, record_end, f"{field}.offsetDelta")
    key, pos = _varint_sized(body, pos, record_end, f"{field}.key")
    value, pos = _varint_sized(body, pos, record_end, f"{field}.value")
    header_count, pos = read_varint(body, pos, record_end, f"{field}.headersCount")
    if header_count < 0 or header_count > record_end - pos:
        raise CorruptError(
            f"Found invalid number of record headers {header_count}",
            field=f"{field}.headersCount",
            position=pos,
        )
    headers = []
    for h in range(header_count):
        header_key, pos = _varint_sized(body, pos, record_end, f"{field}.headers[{h}].key")
        if header_key is None:
            raise CorruptError(
                "Invalid negative header key size", field=f"{field}.headers[{h}].key", position=pos
            )
        header_value, pos = _varint_sized(body, pos, record_end, f"{field}.headers[{h}].value")
        headers.append((header_key.decode("utf-8", "replace"), header_value))
    if pos != record_end:
        raise CorruptError(
            f"Invalid record size: expected to read {length} bytes in record payload,"
            " but instead read"
            f" {length - (record_end - pos)}",
            field=f"{field}.length",
            position=pos,
        )
    timestamp = (
        log_append_timestamp
        if log_append_timestamp is not None
        else base_timestamp + timestamp_delta
    )
    return Record(base_offset + offset_delta, timestamp, key, value, 2, tuple(headers)), pos


def _varint_sized(body: memoryview, pos: int, end: int, field: str) -> tuple[bytes | None, int]:
    length, pos = read_varint(body, pos, end, f"{field}Length")
    if length < 0:
        return None, pos
    if pos + length > end:
        raise TruncatedError(
            f"{length} bytes run past the record", field=f"{field}Length", position=pos
        )
    return bytes(body[pos : pos + length]), pos + length
