"""The decoded forms of ``__consumer_offsets`` keys and values (the package's public types)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field


@dataclass(frozen=True, slots=True)
class RecordKey:
    """A decoded key.

    ``key_type``: ``"offset_commit"`` (key version 0 or 1), ``"group_metadata"`` (2), the new
    coordinator's record name in snake_case without ``_key`` for types 3..23 (e.g.
    ``"consumer_group_member_metadata"``), or ``"unknown"``. ``version`` is the int16 prefix (key
    version, called record type / apiKey from Kafka 4.1). ``group`` is the group id (None only
    for unknown types). ``fields`` holds every key field under the snake_case of Kafka's name
    (``group``/``topic``/``partition`` for classic keys, ``group_id``/``member_id``/... for the
    new coordinator's)."""

    key_type: str
    version: int
    group: str | None
    topic: str | None = None
    partition: int | None = None
    fields: Mapping[str, object] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class RecordValue:
    """A decoded value.

    ``version`` is the int16 value-version prefix. ``fields`` maps the snake_case of Kafka's JSON
    field names to values, only for fields that exist in that version (and, for tagged fields,
    only those present in the bytes). bytes stay ``bytes``; uuids are Kafka's base64 ``Uuid``
    strings; nested structs are dicts (a nested struct's unknown tagged fields, if any, under
    ``"_unknown_tagged_fields"``); arrays are lists. ``unknown_tagged_fields``: the top-level
    tags this decoder does not know, raw. ``layout``: for record types whose layout changed
    without a version bump, which one decoded these bytes (e.g. ``"3.7"``, ``"3.8+"``)."""

    version: int
    fields: Mapping[str, object]
    unknown_tagged_fields: Mapping[int, bytes] = field(default_factory=dict)
    layout: str | None = None


@dataclass(frozen=True, slots=True)
class UnknownValue:
    """A value this decoder cannot interpret: an unknown value version for a known key type, or
    any value of an unknown key type. Data to report, not corruption (Kafka 3.5+ loaders skip
    unknown key types; an unknown value version makes Kafka's loader throw)."""

    version: int | None
    reason: str
