"""The new group coordinator's record types 3-23: keys and values, by record type.

The declarations live in ``consumer_group_records`` (3-8, 16), ``share_group_records`` (9-15)
and ``streams_group_records`` (17, 19-23); this module dispatches on the record type and picks
the value layout. Type 18 is not used by any release read (A:3.7.0 - C:v8.3.1) and decodes as
an unknown type, as does any type above 23.

Value rules:

- Value version 0 is the only one; any other version gives ``UnknownValue`` (Kafka's
  ``CoordinatorRecordSerde.deserialize`` throws ``UnknownRecordVersionException``, C:v8.0.0).
- A type with one layout is read as Kafka reads it: trailing bytes after the value's tagged
  fields are ignored (the generated ``read`` never checks ``remaining()``).
- A type whose layout changed without a version bump (4, 5, 7, 8: "3.7" vs "3.8+"; 9: "3.9" vs
  "4.0"; 11: "3.9-4.0" vs "4.1+"; 15: "4.0" vs "4.1+") is tried newest layout first, and a
  layout is accepted only if it consumes every byte; ``RecordValue.layout`` says which one. If
  none does, the newest layout's error is raised (naming every layout tried), because guessing
  would misreport the fields.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final, cast

from offsets_auditor.errors import DecodeError
from offsets_auditor.schemas import (
    consumer_group_records,
    share_group_records,
    streams_group_records,
)
from offsets_auditor.schemas.coordinator_spec import VALUE_VERSION, Layout, RecordType
from offsets_auditor.schemas.message import read_message
from offsets_auditor.schemas.model import RecordKey, RecordValue, UnknownValue
from offsets_auditor.schemas.primitives import Reader

RECORD_TYPES: Final[Mapping[int, RecordType]] = {
    spec.record_type: spec
    for spec in (
        *consumer_group_records.RECORD_TYPES,
        *share_group_records.RECORD_TYPES,
        *streams_group_records.RECORD_TYPES,
    )
}


def is_known_type(record_type: int) -> bool:
    """Whether ``record_type`` is one of the declared new-coordinator types."""
    return record_type in RECORD_TYPES


def decode_key(reader: Reader, record_type: int) -> RecordKey:
    """Decode a key body after its int16 record type; every byte must be used."""
    spec = RECORD_TYPES[record_type]
    fields, _ = read_message(reader, spec.key, 0)
    reader.expect_end(spec.key.name)
    return RecordKey(spec.key_type, record_type, cast(str, fields["group_id"]), fields=fields)


def decode_value(key: RecordKey, reader: Reader) -> RecordValue | UnknownValue:
    """Decode a value (int16 version + struct) for a new-coordinator ``key``."""
    spec = RECORD_TYPES.get(key.version)
    if spec is None or spec.key_type != key.key_type:
        version = reader.int16("RecordValue.version") if reader.remaining >= 2 else None
        return UnknownValue(version, f"unknown key type {key.version}")
    version = reader.int16(f"{spec.layouts[0].value.name}.version")
    if version != VALUE_VERSION:
        return UnknownValue(version, f"unknown value version {version} for {spec.key_type}")
    if len(spec.layouts) == 1:
        return _read_layout(reader, spec.layouts[0], version)
    failures: list[tuple[Layout, DecodeError]] = []
    for layout in spec.layouts:
        attempt = reader.fork()
        try:
            value = _read_layout(attempt, layout, version)
            attempt.expect_end(layout.value.name)
        except DecodeError as error:
            failures.append((layout, error))
            continue
        return value
    newest = failures[0][1]
    tried = "; ".join(f"{layout.label}: {error}" for layout, error in failures)
    raise type(newest)(
        f"no known layout fits ({tried})", field=newest.field, position=newest.position
    )


def _read_layout(reader: Reader, layout: Layout, version: int) -> RecordValue:
    fields, unknown = read_message(reader, layout.value, version)
    return RecordValue(version, fields, unknown, layout.label)
