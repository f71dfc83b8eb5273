"""How decoded records and errors are shown: one JSON object per line, or one text line.

JSON follows Kafka's names in snake_case. bytes are base64 (as Kafka's own JSON dumps show
them); a value Kafka cannot interpret either comes with its raw bytes.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator, Mapping
from typing import Any, Final

from offsets_auditor.errors import DecodeError, TruncatedError, UnreadableFileError
from offsets_auditor.reader.columns import Chunk, KeyStatus, ValueStatus
from offsets_auditor.reader.decode import DecodedRecord, RowDecoder
from offsets_auditor.reader.options import DEFAULT_LIMITS, Backend, Limits
from offsets_auditor.reader.segment import ByteSource, read_segment
from offsets_auditor.records.compression import codec_label
from offsets_auditor.records.model import TimestampType
from offsets_auditor.schemas import RecordValue, UnknownValue
from offsets_auditor.schemas.java_utf8 import java_utf8

_TIMESTAMP_NAMES: Final[Mapping[int, str]] = TimestampType.NAMES
#: How many distinct keys' text :func:`segment_text` keeps.
KEY_TEXT_CACHE_SIZE: Final = 1 << 17


def jsonable(value: Any) -> Any:
    """``value`` with bytes as base64 strings, mappings as dicts and sequences as lists."""
    if isinstance(value, bytes | bytearray | memoryview):
        return base64.b64encode(bytes(value)).decode("ascii")
    if isinstance(value, Mapping):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [jsonable(v) for v in value]
    return value


def record_to_json(item: DecodedRecord) -> dict[str, Any]:
    file, batch, record, key, value, control, error = item
    data: dict[str, Any] = {
        "file": file,
        "offset": record.offset,
        "position": batch.position,
        "batch_base_offset": batch.base_offset,
        "batch_last_offset": batch.last_offset,
        "magic": record.magic,
        "codec": codec_label(batch.codec),
        "timestamp": record.timestamp,
        "timestamp_type": _TIMESTAMP_NAMES.get(batch.timestamp_type, str(batch.timestamp_type)),
        "transactional": batch.is_transactional,
        "control": control.type if control is not None else None,
        "producer_id": batch.producer_id,
        "producer_epoch": batch.producer_epoch,
        "key_type": None if control is not None else (key.key_type if key else "unknown"),
        "key_version": key.version if key else None,
        "group": key.group if key else None,
        "topic": key.topic if key else None,
        "partition": key.partition if key else None,
        "tombstone": record.value is None,
        "value_version": value.version if value is not None else None,
        "value": None,
    }
    key_type = key.key_type if key is not None else None
    if key is not None and key_type not in ("offset_commit", "group_metadata", "unknown"):
        data["key"] = jsonable(key.fields)
    if control is not None:
        data["value"] = {"coordinator_epoch": control.coordinator_epoch}
    elif isinstance(value, RecordValue):
        if key_type == "offset_commit" and 0 <= value.version <= 3 and not value.layout:
            data["value"] = value.fields  # ints and strings only (OffsetCommitValue v0-v3)
        else:
            data["value"] = jsonable(value.fields)
        if value.unknown_tagged_fields:
            data["unknown_tagged_fields"] = jsonable(
                {str(tag): raw for tag, raw in value.unknown_tagged_fields.items()}
            )
        if value.layout is not None:
            data["layout"] = value.layout
    if isinstance(value, UnknownValue):
        data["unknown"] = value.reason
    if key is None or key_type == "unknown" or isinstance(value, UnknownValue) or error:
        data["raw_key"] = jsonable(record.key) if record.key is not None else None
        data["raw_value"] = jsonable(record.value) if record.value is not None else None
    if error is not None:
        data["error"] = error.message
    return data


_JSON_LINE: Final = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"))


def record_to_json_line(item: DecodedRecord) -> str:
    """:func:`record_to_json` as one line of compact JSON (UTF-8 kept as is)."""
    return _JSON_LINE.encode(record_to_json(item))


def error_to_json(error: DecodeError) -> dict[str, Any]:
    return {
        "error": error.message,
        "kind": "truncated" if isinstance(error, TruncatedError) else "corrupt",
        "file": error.file,
        "position": error.position,
        "field": error.field,
    }


def record_to_text(item: DecodedRecord, key_texts: dict[bytes, str] | None = None) -> str:
    """One line for one record. ``key_texts`` (raw key bytes -> text) lets a caller that prints
    many records render each distinct key once (see :func:`segment_text`)."""
    _, batch, record, key, value, control, error = item
    codec = codec_label(batch.codec)
    text = (
        f"offset: {record.offset} position: {batch.position} magic: {record.magic} codec: {codec}"
    )
    if record.timestamp >= 0:
        text += f" {_TIMESTAMP_NAMES.get(batch.timestamp_type, '?')}: {record.timestamp}"
    if batch.is_transactional:
        text += f" transactional producerId: {batch.producer_id}"
    if control is not None:
        return f"{text} control: {control.type} coordinatorEpoch: {control.coordinator_epoch}"
    if key is None:
        return f"{text} key: <undecodable> ({error.message if error else 'null key'})"
    raw_key = record.key
    key_text = None if key_texts is None or raw_key is None else key_texts.get(raw_key)
    if key_text is None:
        key_text = f"{key.key_type}/v{key.version} {_fields_text(key.fields)}"
        if key_texts is not None and raw_key is not None:
            if len(key_texts) >= KEY_TEXT_CACHE_SIZE:
                key_texts.clear()
            key_texts[raw_key] = key_text
    if record.value is None:
        return f"{text} key: {key_text} value: <tombstone>"
    if type(value) is RecordValue:
        fields = value.fields
        if key.key_type == "offset_commit" and value.layout is None:
            # OffsetCommitValue v0-v3 fields are ints and strings: str(int) == repr(int), and
            # a str field shows as its repr (see _short)
            names = tuple(fields)
            if names == _OFFSET_COMMIT_V1:
                return (
                    f"{text} key: {key_text} value: v{value.version} offset={fields['offset']}"
                    f" metadata={fields['metadata']!r}"
                    f" commit_timestamp={fields['commit_timestamp']}"
                    f" expire_timestamp={fields['expire_timestamp']}"
                )
            if names == _OFFSET_COMMIT_V3:
                return (
                    f"{text} key: {key_text} value: v{value.version} offset={fields['offset']}"
                    f" leader_epoch={fields['leader_epoch']} metadata={fields['metadata']!r}"
                    f" commit_timestamp={fields['commit_timestamp']}"
                )
            if names == _OFFSET_COMMIT_V0:
                return (
                    f"{text} key: {key_text} value: v{value.version} offset={fields['offset']}"
                    f" metadata={fields['metadata']!r}"
                    f" commit_timestamp={fields['commit_timestamp']}"
                )
        return f"{text} key: {key_text} value: v{value.version} {_fields_text(fields)}"
    if isinstance(value, UnknownValue):
        return f"{text} key: {key_text} value: <{value.reason}>"
    if isinstance(value, RecordValue):
        return f"{text} key: {key_text} value: v{value.version} {_fields_text(value.fields)}"
    if error is not None:
        return f"{text} key: {key_text} value: <undecodable: {error.message}>"
    return f"{text} key: {key_text}"


#: OffsetCommitValue field names by version (v2 has those of v0), schemas.classic's order.
_OFFSET_COMMIT_V0: Final = ("offset", "metadata", "commit_timestamp")
_OFFSET_COMMIT_V1: Final = ("offset", "metadata", "commit_timestamp", "expire_timestamp")
_OFFSET_COMMIT_V3: Final = ("offset", "leader_epoch", "metadata", "commit_timestamp")


def segment_text(
    source: ByteSource,
    *,
    file: str | None = None,
    backend: Backend = Backend.NATIVE,
    limits: Limits = DEFAULT_LIMITS,
) -> Iterator[str | DecodeError]:
    """What ``dump`` prints for a segment: one :func:`record_to_text` line per record, and each
    problem, in file order.

    Offset commits the reader decoded into columns (``KeyStatus.OK`` OffsetCommitKeys with an
    OK value or a tombstone) are written straight from the columns, with each distinct key's
    text made once; every other record goes through :func:`record_to_text`. Both give the same
    line (tests compare them)."""
    rows = RowDecoder(file)
    key_texts: dict[bytes, str] = {}
    for item in read_segment(source, file=file, backend=backend, limits=limits):
        if isinstance(item, DecodeError):
            yield item
            continue
        yield from _chunk_text(item, rows, key_texts)


def _chunk_text(
    chunk: Chunk, rows: RowDecoder, key_texts: dict[bytes, str]
) -> Iterator[str | DecodeError]:
    r = chunk.records
    fast = (
        (r.key_status == KeyStatus.OK) & (r.topic >= 0) & (r.value_status != ValueStatus.DEFERRED)
    ).tolist()
    heads = _batch_heads(chunk)
    batch_of = r.batch.tolist()
    offsets = r.offset.tolist()
    timestamps = r.timestamp.tolist()
    magics = r.magic.tolist()
    digests = r.digest.tolist()
    for row in range(len(r)):
        if not fast[row]:
            for decoded in rows.decoded(chunk, (row,)):
                if decoded.error is not None:
                    yield decoded.error
                yield record_to_text(decoded)
            continue
        position, codec, timestamp_name, transactional = heads[batch_of[row]]
        timestamp = timestamps[row]
        key_text = key_texts.get(digests[row])
        if key_text is None:
            key_text = _offset_commit_key_text(chunk, rows, row)
            if len(key_texts) >= KEY_TEXT_CACHE_SIZE:
                key_texts.clear()
            key_texts[digests[row]] = key_text
        yield (
            f"offset: {offsets[row]} position: {position} magic: {magics[row]} codec: {codec}"
            f"{f' {timestamp_name}: {timestamp}' if timestamp >= 0 else ''}"
            f"{transactional} key: {key_text} value: {_offset_commit_value_text(chunk, row)}"
        )


def _batch_heads(chunk: Chunk) -> list[tuple[int, str, str, str]]:
    """(position, codec label, timestamp type name, transactional text) of each batch row."""
    b = chunk.batches
    return [
        (
            position,
            codec_label(codec),
            _TIMESTAMP_NAMES.get(timestamp_type, "?"),
            f" transactional producerId: {producer_id}" if transactional else "",
        )
        for position, codec, timestamp_type, transactional, producer_id in zip(
            b.position.tolist(),
            b.codec.tolist(),
            b.timestamp_type.tolist(),
            b.transactional.tolist(),
            b.producer_id.tolist(),
            strict=True,
        )
    ]


def _offset_commit_key_text(chunk: Chunk, rows: RowDecoder, row: int) -> str:
    r = chunk.records
    group = rows.text(chunk, int(r.group[row]))
    topic = rows.text(chunk, int(r.topic[row]))
    return (
        f"offset_commit/v{int(r.key_type[row])} group={group!r} topic={topic!r}"
        f" partition={int(r.partition[row])}"
    )


def _offset_commit_value_text(chunk: Chunk, row: int) -> str:
    """``v1 offset=... metadata='...' ...`` (schemas.classic's field names and order), or
    ``<tombstone>``."""
    r = chunk.records
    if r.value_status[row] == ValueStatus.NULL:
        return "<tombstone>"
    version = int(r.value_version[row])
    size = int(r.metadata_size[row])
    metadata = repr(java_utf8(chunk.metadata_bytes(row))) if size else "''"
    offset = int(r.committed_offset[row])
    commit_timestamp = int(r.commit_timestamp[row])
    if version == 1:
        return (
            f"v1 offset={offset} metadata={metadata} commit_timestamp={commit_timestamp}"
            f" expire_timestamp={int(r.expire_timestamp[row])}"
        )
    if version == 3:
        return (
            f"v3 offset={offset} leader_epoch={int(r.leader_epoch[row])} metadata={metadata}"
            f" commit_timestamp={commit_timestamp}"
        )
    return f"v{version} offset={offset} metadata={metadata} commit_timestamp={commit_timestamp}"


def _fields_text(fields: Mapping[str, object]) -> str:
    return " ".join(f"{name}={_short(v)}" for name, v in fields.items())


def _short(value: object) -> str:
    if isinstance(value, bytes):
        return f"0x{value.hex()}" if len(value) <= 32 else f"<{len(value)} bytes>"
    if isinstance(value, str):
        return repr(value)
    if isinstance(value, list | dict):
        return json.dumps(jsonable(value), separators=(",", ":"), ensure_ascii=False)
    return str(value)


def error_to_text(error: DecodeError) -> str:
    """One problem as a line: ``truncated``/``corrupt``/``unreadable``, where, what. A problem
    that is about the whole file (it cannot be opened) has no byte position and says none."""
    if isinstance(error, UnreadableFileError) or error.position is None:
        kind = "unreadable" if error.field == "file" else "corrupt"
        return f"{kind}: {error.file or '-'}: {error.message}"
    kind = "truncated" if isinstance(error, TruncatedError) else "corrupt"
    where = f"{error.file or '-'} position {error.position}"
    return f"{kind}: {where}: {error.message} (field {error.field})"
