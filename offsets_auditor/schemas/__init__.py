"""Every key and value a broker writes into ``__consumer_offsets``, decoded from bytes.

``decode_key`` reads the int16 key version (record type) and the key struct; ``decode_value``
reads the int16 value version and the value struct for that key's type. Tombstones (null values)
are the caller's business and never reach ``decode_value``.

Errors: malformed or short bytes of a KNOWN structure raise ``TruncatedError`` / ``CorruptError``
(``offsets_auditor.errors``) with ``field`` (schema path, e.g. ``"OffsetCommitKey.group"``) and
``position`` (byte offset within the buffer passed in). Unknown key types and unknown value
versions are data, not errors: ``RecordKey(key_type="unknown")`` / ``UnknownValue``.
"""

from __future__ import annotations

from offsets_auditor.schemas import classic, coordinator_records
from offsets_auditor.schemas.model import RecordKey, RecordValue, UnknownValue
from offsets_auditor.schemas.primitives import Reader

__all__ = ["RecordKey", "RecordValue", "UnknownValue", "decode_key", "decode_value"]

_KEY_VERSION_FIELD = "RecordKey.version"


def decode_key(raw: bytes | memoryview) -> RecordKey:
    """Decode a ``__consumer_offsets`` record key. Unknown types give ``key_type="unknown"``
    (``group`` None); a known key with bytes left over is corrupt."""
    reader = Reader(raw)
    version = reader.int16(_KEY_VERSION_FIELD)
    if (
        version in classic.OFFSET_COMMIT_KEY_VERSIONS
        or version == classic.GROUP_METADATA_KEY_VERSION
    ):
        return classic.decode_classic_key(reader, version)
    if coordinator_records.is_known_type(version):
        return coordinator_records.decode_key(reader, version)
    return RecordKey(key_type="unknown", version=version, group=None)


def decode_value(key: RecordKey, raw: bytes | memoryview) -> RecordValue | UnknownValue:
    """Decode the (non-null) value of a record whose key is ``key``.

    Returns ``UnknownValue`` for an unknown key type or an unknown value version (never raises
    for those). A known type with fewer than 2 bytes, or bytes that do not parse at a known
    version, raises ``TruncatedError`` / ``CorruptError``. Trailing bytes after a value are
    ignored, as Kafka's readers ignore them (see ``classic`` and ``coordinator_records`` for
    the layout-guessing exception)."""
    reader = Reader(raw)
    if key.key_type == "unknown":
        version = reader.int16("RecordValue.version") if reader.remaining >= 2 else None
        return UnknownValue(version, f"unknown key type {key.version}")
    if key.key_type == "offset_commit":
        version = reader.int16("OffsetCommitValue.version")
        if version not in classic.OFFSET_COMMIT_VALUE.versions:
            return UnknownValue(version, f"unknown value version {version} for offset_commit")
        return classic.decode_offset_commit_value(reader, version)
    if key.key_type == "group_metadata":
        version = reader.int16("GroupMetadataValue.version")
        if version not in classic.GROUP_METADATA_VALUE.versions:
            return UnknownValue(version, f"unknown value version {version} for group_metadata")
        return classic.decode_group_metadata_value(reader, version)
    return coordinator_records.decode_value(key, reader)
