"""A small declarative field-spec language for Kafka message schemas, and its one decoder.

Our declarations (``classic.py``, ``consumer_protocol.py``, ``coordinator_records.py``,
``transaction_log.py``) describe each record the way Kafka's JSON message definitions do — field
name, type, the versions it exists in, nullable versions, tag — and :func:`read_message`
interprets them. The decoding rules are those of Kafka's generated readers (C:v8.1.0
``generator/src/main/java/org/apache/kafka/message/MessageDataGenerator.java``,
``generateClassReader`` / ``generateVariableLengthReader`` / ``generateStructReader``):

- In a flexible version strings, bytes and arrays are compact, and every struct (the message and
  each nested struct) ends with a tagged-field section.
- A nullable struct that is not tagged is preceded by an int8 (negative = null); a tagged nullable
  struct by an unsigned varint (0 = null).
- Known tags are decoded, unknown ones kept raw. Tagged fields absent from the bytes are absent
  from the result (Kafka only writes a tagged field whose value differs from its default).
- A field that does not exist in a version is absent from the result.

Deliberate difference from Kafka: a known tagged field must consume exactly the ``size`` bytes it
announces (Kafka's generated reader reads it from the main buffer and does not check), otherwise
:class:`CorruptError`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import partial
from typing import Final

from offsets_auditor.errors import DecodeError
from offsets_auditor.schemas.primitives import Reader

UNKNOWN_TAGS_KEY: Final = "_unknown_tagged_fields"
"""Key under which a NESTED struct's unknown tagged fields appear in its dict (only when any)."""


@dataclass(frozen=True, slots=True)
class Versions:
    """An inclusive version range, as Kafka's ``"1+"`` / ``"0-3"`` / ``"2"``; ``high`` None = no
    upper bound."""

    low: int
    high: int | None = None

    def __contains__(self, version: object) -> bool:
        return (
            isinstance(version, int)
            and version >= self.low
            and (self.high is None or version <= self.high)
        )


def since(low: int) -> Versions:
    """Kafka's ``"N+"``."""
    return Versions(low)


def only(version: int) -> Versions:
    """Kafka's ``"N"``."""
    return Versions(version, version)


def between(low: int, high: int) -> Versions:
    """Kafka's ``"L-H"``."""
    return Versions(low, high)


ALL: Final = since(0)
NONE: Final = Versions(1, 0)

# Primitive type names, Kafka's spelling.
INT8: Final = "int8"
INT16: Final = "int16"
UINT16: Final = "uint16"
INT32: Final = "int32"
INT64: Final = "int64"
UUID: Final = "uuid"
STRING: Final = "string"
BYTES: Final = "bytes"


@dataclass(frozen=True, slots=True)
class ArrayOf:
    """Kafka's ``[]T``."""

    element: FieldType


@dataclass(frozen=True, slots=True)
class Struct:
    """A struct (the message itself, or a nested or common struct)."""

    name: str
    fields: tuple[Field, ...]


FieldType = str | ArrayOf | Struct

_MIN_SIZE: Final[Mapping[str, int]] = {
    INT8: 1,
    INT16: 2,
    UINT16: 2,
    INT32: 4,
    INT64: 8,
    UUID: 16,
}


@dataclass(frozen=True, slots=True)
class Field:
    """One field. ``name`` is the snake_case of Kafka's JSON name; ``versions`` where it exists;
    ``nullable`` where it may be null; ``tag``/``tagged`` for a tagged field."""

    name: str
    type: FieldType
    versions: Versions = ALL
    nullable: Versions = NONE
    tag: int | None = None
    tagged: Versions = NONE


@dataclass(frozen=True, slots=True)
class Message:
    """A top-level schema: Kafka's JSON file, in our words. ``source`` cites where it was read.

    ``versions`` must be bounded; a read plan per version is compiled once, at declaration."""

    name: str
    versions: Versions
    flexible: Versions
    fields: tuple[Field, ...]
    source: str
    plans: Mapping[int, _StructPlan] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if self.versions.high is None:
            raise ValueError(f"{self.name}: declare a bounded version range")
        plans = {
            version: _compile_struct(self.fields, version, version in self.flexible, self.name)
            for version in range(self.versions.low, self.versions.high + 1)
        }
        object.__setattr__(self, "plans", plans)


def read_message(
    reader: Reader, message: Message, version: int
) -> tuple[dict[str, object], dict[int, bytes]]:
    """Decode ``message`` at ``version`` (one of its ``versions``): its fields (dict, in schema
    order) and its unknown tagged fields (tag -> raw bytes). Trailing bytes are left unread for
    the caller to judge."""
    return _read_struct(reader, message.plans[version])


# -- compiled read plans -------------------------------------------------------------------------
# Each field compiles, for one version, to a step: a function of the Reader returning the value.
# Paths of array elements are compiled with "[]" and get their index only when an error escapes.

_Step = Callable[[Reader], object]


@dataclass(frozen=True, slots=True)
class _StructPlan:
    path: str
    flexible: bool
    regular: tuple[tuple[str, _Step], ...]
    tagged: Mapping[int, tuple[str, str, _Step]]  # tag -> (name, path, step)


def _compile_struct(
    fields: tuple[Field, ...], version: int, flexible: bool, path: str
) -> _StructPlan:
    regular: list[tuple[str, _Step]] = []
    tagged: dict[int, tuple[str, str, _Step]] = {}
    for spec in fields:
        if version not in spec.versions:
            continue
        field_path = f"{path}.{spec.name}"
        if flexible and version in spec.tagged and spec.tag is not None:
            step = _compile_field(spec, version, flexible, field_path, tagged=True)
            tagged[spec.tag] = (spec.name, field_path, step)
        else:
            regular.append((spec.name, _compile_field(spec, version, flexible, field_path)))
    return _StructPlan(path, flexible, tuple(regular), tagged)


def _compile_field(
    spec: Field, version: int, flexible: bool, path: str, *, tagged: bool = False
) -> _Step:
    nullable = version in spec.nullable
    kind = spec.type
    if isinstance(kind, Struct):
        plan = _compile_struct(kind.fields, version, flexible, path)
        if not nullable:
            return partial(_read_nested, plan=plan)
        # tagged: unsigned varint, 0 = null; otherwise int8, negative = null
        return partial(_read_nullable_nested, plan=plan, tagged=tagged)
    if isinstance(kind, ArrayOf):
        if isinstance(kind.element, ArrayOf):
            raise ValueError(f"{path}: nested arrays are not a Kafka type")
        element_path = f"{path}[]"
        if isinstance(kind.element, Struct):
            element_plan = _compile_struct(kind.element.fields, version, flexible, element_path)
            element: _Step = partial(_read_nested, plan=element_plan)
        else:
            element = _compile_scalar(kind.element, False, flexible, element_path)
        return partial(
            _read_array,
            path=path,
            flexible=flexible,
            nullable=nullable,
            element_size=_min_size(kind.element),
            element=element,
        )
    return _compile_scalar(kind, nullable, flexible, path)


def _compile_scalar(kind: str, nullable: bool, flexible: bool, path: str) -> _Step:
    if kind in _FIXED_READERS:
        return partial(_FIXED_READERS[kind], field=path)
    read: Callable[[Reader, str, bool], object]
    if kind == STRING:
        read = Reader.nullable_string if nullable else Reader.string
    elif kind == BYTES:
        read = Reader.nullable_bytes if nullable else Reader.bytes_
    else:
        raise ValueError(f"{path}: unknown field type {kind!r}")
    return partial(read, field=path, compact=flexible)


_FIXED_READERS: Final[Mapping[str, Callable[..., object]]] = {
    INT8: Reader.int8,
    INT16: Reader.int16,
    UINT16: Reader.uint16,
    INT32: Reader.int32,
    INT64: Reader.int64,
    UUID: Reader.uuid,
}


def _read_struct(reader: Reader, plan: _StructPlan) -> tuple[dict[str, object], dict[int, bytes]]:
    result = {name: step(reader) for name, step in plan.regular}
    unknown: dict[int, bytes] = {}
    if plan.flexible:
        for tag, body in reader.tagged_fields(plan.path):
            known = plan.tagged.get(tag)
            if known is None:
                unknown[tag] = body.raw(body.remaining, f"{plan.path}._tagged_fields[{tag}]")
                continue
            name, field_path, step = known
            result[name] = step(body)
            body.expect_end(field_path)
    return result, unknown


def _read_nested(reader: Reader, plan: _StructPlan) -> dict[str, object]:
    value, unknown = _read_struct(reader, plan)
    if unknown:
        value[UNKNOWN_TAGS_KEY] = unknown
    return value


def _read_nullable_nested(
    reader: Reader, plan: _StructPlan, tagged: bool
) -> dict[str, object] | None:
    is_null = reader.unsigned_varint(plan.path) == 0 if tagged else reader.int8(plan.path) < 0
    return None if is_null else _read_nested(reader, plan)


def _read_array(
    reader: Reader,
    path: str,
    flexible: bool,
    nullable: bool,
    element_size: int,
    element: _Step,
) -> list[object] | None:
    count = reader.array_length(
        path, compact=flexible, nullable=nullable, element_size=element_size
    )
    if count is None:
        return None
    values: list[object] = []
    try:
        for _ in range(count):
            values.append(element(reader))
    except DecodeError as error:
        placeholder = f"{path}[]"
        if not error.field.startswith(placeholder):
            raise
        field_path = f"{path}[{len(values)}]{error.field[len(placeholder) :]}"
        raise type(error)(error.message, field=field_path, position=error.position) from None
    return values


def _min_size(kind: FieldType) -> int:
    """The fewest bytes one array element can take (bounds the count before building a list)."""
    if isinstance(kind, str):
        return _MIN_SIZE.get(kind, 1)
    return 1
