"""How decoded records and errors are shown: one JSON object per line, or one text line.

JSON follows Kafka's names in snake_case. bytes are base64 (as Kafka's own JSON dumps show
them); a value Kafka cannot interpret either comes with its raw bytes.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Mapping
from typing import Any

from offsets_auditor.decode import DecodedRecord
from offsets_auditor.errors import DecodeError, TruncatedError
from offsets_auditor.records.compression import Codec
from offsets_auditor.records.model import TimestampType
from offsets_auditor.schemas import RecordValue, UnknownValue


def codec_label(codec: int) -> str:
    try:
        return Codec(codec).label
    except ValueError:
        return f"unknown({codec})"


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
    batch, record, key, value = item.batch, item.record, item.key, item.value
    data: dict[str, Any] = {
        "file": item.file,
        "offset": record.offset,
        "position": batch.position,
        "batch_base_offset": batch.base_offset,
        "batch_last_offset": batch.last_offset,
        "magic": record.magic,
        "codec": codec_label(batch.codec),
        "timestamp": record.timestamp,
        "timestamp_type": TimestampType.NAMES.get(batch.timestamp_type, str(batch.timestamp_type)),
        "transactional": batch.is_transactional,
        "control": item.control.type if item.control is not None else None,
        "producer_id": batch.producer_id,
        "producer_epoch": batch.producer_epoch,
        "key_type": None if item.control is not None else (key.key_type if key else "unknown"),
        "key_version": key.version if key else None,
        "group": key.group if key else None,
        "topic": key.topic if key else None,
        "partition": key.partition if key else None,
        "tombstone": record.value is None,
        "value_version": value.version if value is not None else None,
        "value": None,
    }
    if key is not None and key.key_type not in ("offset_commit", "group_metadata", "unknown"):
        data["key"] = jsonable(key.fields)
    if item.control is not None:
        data["value"] = {"coordinator_epoch": item.control.coordinator_epoch}
    elif isinstance(value, RecordValue):
        data["value"] = jsonable(value.fields)
        if value.unknown_tagged_fields:
            data["unknown_tagged_fields"] = jsonable(
                {str(tag): raw for tag, raw in value.unknown_tagged_fields.items()}
            )
        if value.layout is not None:
            data["layout"] = value.layout
    if isinstance(value, UnknownValue):
        data["unknown"] = value.reason
    if key is None or key.key_type == "unknown" or isinstance(value, UnknownValue) or item.error:
        data["raw_key"] = jsonable(record.key) if record.key is not None else None
        data["raw_value"] = jsonable(record.value) if record.value is not None else None
    if item.error is not None:
        data["error"] = item.error.message
    return data


def error_to_json(error: DecodeError) -> dict[str, Any]:
    return {
        "error": error.message,
        "kind": "truncated" if isinstance(error, TruncatedError) else "corrupt",
        "file": error.file,
        "position": error.position,
        "field": error.field,
    }


def record_to_text(item: DecodedRecord) -> str:
    batch, record, key, value = item.batch, item.record, item.key, item.value
    parts = [
        f"offset: {record.offset}",
        f"position: {batch.position}",
        f"magic: {record.magic}",
        f"codec: {codec_label(batch.codec)}",
    ]
    if record.timestamp >= 0:
        parts.append(f"{TimestampType.NAMES.get(batch.timestamp_type, '?')}: {record.timestamp}")
    if batch.is_transactional:
        parts.append(f"transactional producerId: {batch.producer_id}")
    if item.control is not None:
        parts.append(
            f"control: {item.control.type} coordinatorEpoch: {item.control.coordinator_epoch}"
        )
        return " ".join(parts)
    if key is None:
        parts.append(f"key: <undecodable> ({item.error.message if item.error else 'null key'})")
        return " ".join(parts)
    parts.append(f"key: {key.key_type}/v{key.version} {_fields_text(key.fields)}")
    if record.value is None:
        parts.append("value: <tombstone>")
    elif isinstance(value, UnknownValue):
        parts.append(f"value: <{value.reason}>")
    elif isinstance(value, RecordValue):
        parts.append(f"value: v{value.version} {_fields_text(value.fields)}")
    elif item.error is not None:
        parts.append(f"value: <undecodable: {item.error.message}>")
    return " ".join(parts)


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
