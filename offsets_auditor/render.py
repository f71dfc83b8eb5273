"""How decoded records and errors are shown: one JSON object per line, or one text line.

JSON follows Kafka's names in snake_case. bytes are base64 (as Kafka's own JSON dumps show
them); a value Kafka cannot interpret either comes with its raw bytes.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator, Mapping
from typing import Any, Final

from offsets_auditor.decode import (
    DecodedRecord,
    KeyCache,
    decode_record,
    offset_commit_key,
    offset_commit_value_parts,
)
from offsets_auditor.errors import DecodeError, TruncatedError
from offsets_auditor.fastlane import text_fast_lane
from offsets_auditor.records.compression import codec_label
from offsets_auditor.records.log_file import (
    DEFAULT_DECOMPRESS_LIMIT,
    DEFAULT_MAX_BATCH_BYTES,
    DEFAULT_WINDOW_BYTES,
    ByteSource,
    FastLane,
    read_batches,
)
from offsets_auditor.records.model import TimestampType
from offsets_auditor.schemas import RecordValue, UnknownValue

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


def offset_commit_value_text(raw: bytes) -> str | None:
    """The text :func:`record_to_text` shows for the OffsetCommitValue v0-v3 in ``raw``
    (``v1 offset=... metadata='...' ...``, schemas.classic's field names and order), made
    straight from the bytes; ``None`` when ``offset_commit_value`` would not take it."""
    parts = offset_commit_value_parts(raw)
    if parts is None:
        return None
    version, offset, leader_epoch, metadata, commit_timestamp, expire_timestamp = parts
    if version == 1:
        return (
            f"v1 offset={offset} metadata={metadata!r} commit_timestamp={commit_timestamp}"
            f" expire_timestamp={expire_timestamp}"
        )
    if version == 3:
        return (
            f"v3 offset={offset} leader_epoch={leader_epoch} metadata={metadata!r}"
            f" commit_timestamp={commit_timestamp}"
        )
    return f"v{version} offset={offset} metadata={metadata!r} commit_timestamp={commit_timestamp}"


def segment_text(
    source: ByteSource,
    *,
    file: str | None = None,
    window_bytes: int = DEFAULT_WINDOW_BYTES,
    max_batch_bytes: int = DEFAULT_MAX_BATCH_BYTES,
    decompress_limit: int = DEFAULT_DECOMPRESS_LIMIT,
    accelerate: bool = True,
    blocks: bool = False,
) -> Iterator[str | DecodeError]:
    """What ``dump`` prints for a segment: one :func:`record_to_text` line per record, and each
    problem, in file order (the limits are those of ``read_batches``).

    The same lines as rendering ``decode_segment``'s records, made faster for the common record:
    with ``accelerate`` (and the C extension, see ``fastlane.text_fast_lane``) runs of plain
    offset-commit entries are rendered in C; otherwise an offset-commit key seen before and an
    OffsetCommitValue v0-v3 (or a tombstone) go from bytes to text without building the decoded
    objects. Anything else takes the full path. With ``blocks``, the C lane's lines come as one
    string of several lines (joined by newlines, no trailing one) instead of one by one.
    """
    commit_keys: dict[bytes, str] = {}  # raw OffsetCommitKey -> its text
    key_texts: dict[bytes, str] = {}
    keys: KeyCache = {}
    lane = (
        text_fast_lane(max_batch_bytes=max_batch_bytes, window_bytes=window_bytes)
        if accelerate
        else None
    )
    pending: list[str] = []  # the lane's text not yet handed on, in file order
    fast_lane: FastLane | None = None
    if lane is not None:
        text_lane = lane

        def fast_lane(window: memoryview, start: int, end: int, position: int) -> tuple[int, Any]:
            # read_batches yields nothing for what a lane takes: refuse while text is pending,
            # so that it decodes (and yields) this entry and the text is handed on first
            return (start, _NO_TEXT) if pending else text_lane(window, start, end, position)

    def on_fast_lane(taken: Mapping[str, Any]) -> None:
        text: str = taken["text"]
        if text:
            pending.append(text[:-1])

    for item in read_batches(
        source,
        file=file,
        window_bytes=window_bytes,
        max_batch_bytes=max_batch_bytes,
        decompress_limit=decompress_limit,
        fast_lane=fast_lane,
        on_fast_lane=on_fast_lane,
    ):
        if pending:
            yield from _lane_lines(pending, blocks)
        if isinstance(item, DecodeError):
            yield item
            continue
        header = item.header
        codec = codec_label(header.codec)
        timestamp_name = _TIMESTAMP_NAMES.get(header.timestamp_type, "?")
        transactional = (
            f" transactional producerId: {header.producer_id}" if header.is_transactional else ""
        )
        fast = not header.is_control
        for record in item.records:
            raw_key = record.key
            if fast and raw_key is not None:
                key_text = commit_keys.get(raw_key)
                if key_text is None:
                    key = offset_commit_key(raw_key)
                    if key is not None:
                        key_text = f"{key.key_type}/v{key.version} {_fields_text(key.fields)}"
                        if len(commit_keys) >= KEY_TEXT_CACHE_SIZE:
                            commit_keys.clear()
                        commit_keys[raw_key] = key_text
                if key_text is not None:
                    raw_value = record.value
                    value_text = (
                        "<tombstone>" if raw_value is None else offset_commit_value_text(raw_value)
                    )
                    if value_text is not None:
                        timestamp = record.timestamp
                        yield (
                            f"offset: {record.offset} position: {header.position} magic:"
                            f" {record.magic} codec: {codec}"
                            f"{f' {timestamp_name}: {timestamp}' if timestamp >= 0 else ''}"
                            f"{transactional} key: {key_text} value: {value_text}"
                        )
                        continue
            decoded = decode_record(header, record, file, keys)
            if decoded.error is not None:
                yield decoded.error
            yield record_to_text(decoded, key_texts)
    if pending:
        yield from _lane_lines(pending, blocks)


_NO_TEXT: Final[Mapping[str, Any]] = {"text": ""}


def _lane_lines(pending: list[str], blocks: bool) -> Iterator[str]:
    """The lane's pending text (``pending`` emptied): blocks of lines, or line by line."""
    texts = pending[:]
    pending.clear()
    for text in texts:
        if blocks:
            yield text
        else:
            yield from text.split("\n")


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
    kind = "truncated" if isinstance(error, TruncatedError) else "corrupt"
    where = f"{error.file or '-'} position {error.position}"
    return f"{kind}: {where}: {error.message} (field {error.field})"
