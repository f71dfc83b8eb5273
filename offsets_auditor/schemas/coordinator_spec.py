"""How a new-coordinator record type is declared: its key, and its value layout(s).

Every key and value of types 3-23 follows one pattern (docs/kafka-internals.md §2.6):

- key = int16 record type + non-flexible struct of strings (3.7-4.0 JSON: ``validVersions "<N>"``;
  4.1+: ``"apiKey": N, "validVersions": "0"``; the bytes are the same);
- value = int16 value version (always 0) + a flexible struct (``flexibleVersions "0+"``).

Some values changed their layout without a version bump (3.7 -> 3.8 for types 4, 5, 7, 8; share
types 9, 11, 15 between 3.9, 4.0 and 4.1), so a record type lists its value layouts newest first,
each with the label of the Kafka releases that write it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from offsets_auditor.schemas.message import (
    ALL,
    NONE,
    STRING,
    Field,
    FieldType,
    Message,
    only,
    since,
)

VALUE_VERSION: Final = 0
"""The only value version of types 3-23 (A:3.7.0 ``RecordHelpers.java`` writes ``(short) 0``;
every value JSON through C:v8.3.1 says ``"validVersions": "0"``)."""


@dataclass(frozen=True, slots=True)
class Layout:
    """One value layout; ``label`` names the releases that write it (None: the only layout)."""

    label: str | None
    value: Message


@dataclass(frozen=True, slots=True)
class RecordType:
    """A new-coordinator record type: ``key_type`` is the snake_case record name without
    ``_key``; ``layouts`` are newest first."""

    record_type: int
    key_type: str
    key: Message
    layouts: tuple[Layout, ...]


def key_message(name: str, *field_names: str, source: str) -> Message:
    """A key schema: non-nullable, non-flexible strings (``GroupId``, ``MemberId``, ...)."""
    return Message(
        name=name,
        versions=only(0),
        flexible=NONE,
        fields=tuple(Field(field_name, STRING) for field_name in field_names),
        source=source,
    )


def value_message(name: str, *fields: Field, source: str) -> Message:
    """A value schema: ``validVersions "0"``, ``flexibleVersions "0+"``."""
    return Message(
        name=name, versions=only(VALUE_VERSION), flexible=since(0), fields=fields, source=source
    )


def tagged(name: str, kind: FieldType, tag: int, *, nullable: bool = False) -> Field:
    """A tagged field of a flexible-from-0 value (``"taggedVersions": "0+"``)."""
    return Field(name, kind, nullable=ALL if nullable else NONE, tag=tag, tagged=ALL)
