"""Legacy messages: message format v0 (magic 0) and v1 (magic 1, Kafka 0.10.0+).

Grammar of one entry, as it sits in a ``.log`` file (Kafka 0.9.0.1 ``kafka/message/Message.scala``
and ``MessageSet.scala``; 3.8.0 ``clients/.../record/LegacyRecord.java``)::

    entry      = offset:int64 size:int32 message          ; size = bytes after the size field
    message    = crc:uint32 magic:int8 attributes:int8 [timestamp:int64 if magic 1]
                 key_length:int32 key value_length:int32 value   ; length -1 = null
    attributes = bits 0-2 codec, bit 3 timestamp type (magic 1)

The CRC-32 covers ``magic`` to the end of the message. A compressed message (codec != 0) is a
*wrapper* whose value is a compressed inner message set in the same framing. Inner offsets are
absolute for magic 0 and relative for magic 1, where the wrapper's offset is that of the last
inner message (``AbstractLegacyRecordBatch.DeepRecordsIterator``, 3.8.0).
"""

from __future__ import annotations

import struct
import zlib

from offsets_auditor.errors import ChecksumError, CorruptError, DecodeError, TruncatedError
from offsets_auditor.records.compression import Codec, decompress
from offsets_auditor.records.model import (
    NO_TIMESTAMP,
    Batch,
    BatchHeader,
    Record,
    TimestampType,
)

#: offset, size: the 12-byte log overhead every entry starts with (``Records.LOG_OVERHEAD``).
LOG_OVERHEAD = struct.Struct(">qi")
#: crc, magic, attributes: the start of every legacy message.
MESSAGE_HEAD = struct.Struct(">Ibb")
#: magic 1 only: timestamp.
TIMESTAMP = struct.Struct(">q")
#: key_length / value_length.
LENGTH = struct.Struct(">i")

CRC_OFFSET = LOG_OVERHEAD.size  # 12
MAGIC_OFFSET = CRC_OFFSET + 4  # 16
ATTRIBUTES_OFFSET = MAGIC_OFFSET + 1  # 17
#: Smallest message (crc..value length) per magic: ``LegacyRecord.RECORD_OVERHEAD_V0/V1``.
RECORD_OVERHEAD = {0: 14, 1: 22}

CODEC_MASK = 0x07
TIMESTAMP_TYPE_MASK = 0x08


def decode_legacy_entry(
    buf: memoryview, pos: int, *, position: int, decompress_limit: int
) -> Batch:
    """Decode the legacy entry starting at ``buf[pos]``, which holds all of it.

    ``position`` is the entry's byte position in its file (reported, not used for reading).
    Raises ``CorruptError`` (malformed message, bad compressed payload) or ``TruncatedError``;
    positions in the errors are relative to ``buf``. A CRC that does not match (the wrapper's or
    an inner message's) is no reason to stop: the broker never checks it, so the records are
    returned with the ``ChecksumError`` (or named in the error when they cannot be read).
    """
    offset, size = LOG_OVERHEAD.unpack_from(buf, pos)
    end = pos + CRC_OFFSET + size
    crc, magic, attributes = MESSAGE_HEAD.unpack_from(buf, pos + CRC_OFFSET)
    computed = zlib.crc32(buf[pos + MAGIC_OFFSET : end])
    checksum = (
        None
        if computed == crc
        else ChecksumError(
            f"Message is corrupt (stored crc = {crc}, computed crc = {computed})",
            field="crc",
            position=pos,
        )
    )
    codec = attributes & CODEC_MASK
    timestamp_type = _timestamp_type(magic, attributes)
    try:
        timestamp, key, value = _message_body(buf, pos, end, magic)
        if codec == Codec.NONE:
            records: tuple[Record, ...] = (Record(offset, timestamp, key, value, magic),)
        else:
            records, inner_checksum = _decompressed_records(
                value, magic, offset, timestamp, timestamp_type, codec, pos, decompress_limit
            )
            checksum = checksum or inner_checksum
    except DecodeError as error:
        if checksum is None:
            raise
        raise error.with_checksum_mismatch(checksum) from None
    header = BatchHeader(
        position=position,
        size=CRC_OFFSET + size,
        magic=magic,
        base_offset=records[0].offset,
        last_offset=offset,
        codec=codec,
        timestamp_type=timestamp_type,
        max_timestamp=timestamp,
        crc=crc,
    )
    return Batch(header, records, checksum)


def _decompressed_records(
    value: bytes | None,
    magic: int,
    offset: int,
    timestamp: int,
    timestamp_type: int,
    codec: int,
    pos: int,
    decompress_limit: int,
) -> tuple[tuple[Record, ...], ChecksumError | None]:
    if value is None:
        raise CorruptError(
            f"Found invalid compressed record set with null value (magic = {magic})",
            field="value",
            position=pos,
        )
    try:
        inner = decompress(codec, value, magic=magic, limit=decompress_limit)
    except DecodeError as error:
        raise error.located(base=pos) from None
    return _inner_records(inner, magic, offset, timestamp, timestamp_type, pos)


def _timestamp_type(magic: int, attributes: int) -> int:
    if magic == 0:
        return TimestampType.NO_TIMESTAMP_TYPE
    return (
        TimestampType.LOG_APPEND_TIME
        if attributes & TIMESTAMP_TYPE_MASK
        else TimestampType.CREATE_TIME
    )


def _message_body(
    buf: memoryview, pos: int, end: int, magic: int
) -> tuple[int, bytes | None, bytes | None]:
    """timestamp, key, value of the message in ``buf[pos:end]`` (entry framing included)."""
    if magic not in RECORD_OVERHEAD:
        raise CorruptError(
            f"Invalid magic found in record: {magic}", field="magic", position=pos + MAGIC_OFFSET
        )
    if end - pos - CRC_OFFSET < RECORD_OVERHEAD[magic]:
        raise CorruptError(
            f"message of {end - pos - CRC_OFFSET} bytes is smaller than the magic {magic} overhead"
            f" ({RECORD_OVERHEAD[magic]})",
            field="size",
            position=pos + 8,
        )
    cursor = ATTRIBUTES_OFFSET + 1 + pos
    timestamp = NO_TIMESTAMP
    if magic == 1:
        (timestamp,) = TIMESTAMP.unpack_from(buf, cursor)
        cursor += 8
    key, cursor = _sized(buf, cursor, end, "key")
    value, cursor = _sized(buf, cursor, end, "value")
    if cursor != end:
        raise CorruptError(
            f"{end - cursor} bytes left after the value of the message",
            field="size",
            position=pos + 8,
        )
    return timestamp, key, value


def _sized(buf: memoryview, cursor: int, end: int, field: str) -> tuple[bytes | None, int]:
    if cursor + 4 > end:
        raise CorruptError(
            f"{field} length runs past the message", field=f"{field}_length", position=cursor
        )
    (length,) = LENGTH.unpack_from(buf, cursor)
    cursor += 4
    if length < 0:
        if length != -1:
            raise CorruptError(
                f"negative {field} length {length}", field=f"{field}_length", position=cursor - 4
            )
        return None, cursor
    if cursor + length > end:
        raise CorruptError(
            f"{field} of {length} bytes runs past the message",
            field=f"{field}_length",
            position=cursor - 4,
        )
    return bytes(buf[cursor : cursor + length]), cursor + length


def _inner_records(
    inner: bytes,
    wrapper_magic: int,
    wrapper_offset: int,
    wrapper_timestamp: int,
    wrapper_timestamp_type: int,
    wrapper_pos: int,
) -> tuple[tuple[Record, ...], ChecksumError | None]:
    """The inner messages of a wrapper with absolute offsets (``DeepRecordsIterator``), and the
    first inner CRC that does not match. Error positions point at the wrapper: inner bytes have
    no position in the file."""
    view = memoryview(inner)
    entries: list[tuple[int, int, bytes | None, bytes | None, int]] = []
    checksum: ChecksumError | None = None
    pos = 0
    while pos < len(view):
        if len(view) - pos < CRC_OFFSET + RECORD_OVERHEAD[0]:
            raise TruncatedError(
                f"compressed message set ends inside an inner message header (inner byte {pos})",
                field="value.inner_messages",
                position=wrapper_pos,
            )
        inner_offset, size = LOG_OVERHEAD.unpack_from(view, pos)
        end = pos + CRC_OFFSET + size
        if size < RECORD_OVERHEAD[0] or end > len(view):
            raise CorruptError(
                f"inner message at inner byte {pos} declares size {size},"
                " beyond the compressed set",
                field="value.inner_messages.size",
                position=wrapper_pos,
            )
        crc, magic, attributes = MESSAGE_HEAD.unpack_from(view, pos + CRC_OFFSET)
        computed = zlib.crc32(view[pos + MAGIC_OFFSET : end])
        if computed != crc and checksum is None:
            checksum = ChecksumError(
                f"Inner message at inner byte {pos} is corrupt (stored crc = {crc},"
                f" computed crc = {computed})",
                field="value.inner_messages.crc",
                position=wrapper_pos,
            )
        if attributes & CODEC_MASK:
            raise CorruptError(
                "Inner messages must not be compressed",
                field="value.inner_messages.attributes",
                position=wrapper_pos,
            )
        try:
            timestamp, key, value = _message_body(view, pos, end, magic)
        except DecodeError as error:
            raise CorruptError(
                f"inner message at inner byte {pos}: {error.message}",
                field=f"value.inner_messages.{error.field}",
                position=wrapper_pos,
            ) from None
        if magic == 1 and wrapper_timestamp_type == TimestampType.LOG_APPEND_TIME:
            timestamp = wrapper_timestamp
        entries.append((inner_offset, timestamp, key, value, magic))
        pos = end
    if not entries:
        raise CorruptError(
            "Found invalid compressed record set with no inner records",
            field="value",
            position=wrapper_pos,
        )
    if wrapper_magic == 0:
        base = 0
    elif wrapper_offset == 0:
        base = 0  # produce data from certain versions of librdkafka
    else:
        last_inner = entries[-1][0]
        if wrapper_offset < last_inner:
            raise CorruptError(
                "Found invalid wrapper offset in compressed v1 message set, wrapper offset "
                f"'{wrapper_offset}' is less than the last inner message offset '{last_inner}'"
                " and it is not zero.",
                field="offset",
                position=wrapper_pos,
            )
        base = wrapper_offset - last_inner
    return tuple(Record(base + o, ts, k, v, m) for o, ts, k, v, m in entries), checksum
