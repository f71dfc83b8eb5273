"""The consumer protocol blobs inside a classic group's member metadata.

A ``GroupMetadataValue`` member of a ``"consumer"`` group carries its ``subscription`` and
``assignment`` as ``int16 version`` + a non-flexible struct (docs/kafka-internals.md §2.5).
Declared from A:3.9 ``clients/src/main/resources/common/message/ConsumerProtocolSubscription.json``
and ``ConsumerProtocolAssignment.json`` (both ``validVersions 0-3``, ``flexibleVersions none``;
unchanged in layout through C:trunk). As Kafka's ``ConsumerProtocol.checkSubscriptionVersion`` /
``checkAssignmentVersion`` do (A:3.9 ``clients/.../consumer/internals/ConsumerProtocol.java``),
a version above the highest known is read with the highest known layout, a negative version is
an error, and trailing bytes are ignored (``ByteBufferAccessor`` never checks for them).
"""

from __future__ import annotations

from typing import Final

from offsets_auditor.errors import CorruptError, DecodeError
from offsets_auditor.schemas.message import (
    BYTES,
    INT32,
    NONE,
    STRING,
    ArrayOf,
    Field,
    Message,
    Struct,
    between,
    read_message,
    since,
)
from offsets_auditor.schemas.primitives import Reader

_SOURCE: Final = "A:3.9 clients/src/main/resources/common/message/"
HIGHEST_KNOWN_VERSION: Final = 3

_TOPIC_PARTITION: Final = Struct(
    "TopicPartition",
    (
        Field("topic", STRING),
        Field("partitions", ArrayOf(INT32)),
    ),
)

CONSUMER_PROTOCOL_SUBSCRIPTION: Final = Message(
    name="ConsumerProtocolSubscription",
    versions=between(0, HIGHEST_KNOWN_VERSION),
    flexible=NONE,
    fields=(
        Field("topics", ArrayOf(STRING)),
        Field("user_data", BYTES, nullable=since(0)),
        Field("owned_partitions", ArrayOf(_TOPIC_PARTITION), versions=since(1)),
        Field("generation_id", INT32, versions=since(2)),
        Field("rack_id", STRING, versions=since(3), nullable=since(3)),
    ),
    source=_SOURCE + "ConsumerProtocolSubscription.json",
)

CONSUMER_PROTOCOL_ASSIGNMENT: Final = Message(
    name="ConsumerProtocolAssignment",
    versions=between(0, HIGHEST_KNOWN_VERSION),
    flexible=NONE,
    fields=(
        Field("assigned_partitions", ArrayOf(_TOPIC_PARTITION)),
        Field("user_data", BYTES, nullable=since(0)),
    ),
    source=_SOURCE + "ConsumerProtocolAssignment.json",
)


def _decode(raw: bytes | memoryview, message: Message) -> dict[str, object]:
    reader = Reader(raw)
    version = reader.int16(f"{message.name}.version")
    if version < 0:
        raise CorruptError(
            f"unsupported {message.name} version {version}",
            field=f"{message.name}.version",
            position=0,
        )
    fields, _ = read_message(reader, message, min(version, HIGHEST_KNOWN_VERSION))
    return {"version": version, **fields}


def decode_subscription(raw: bytes | memoryview) -> dict[str, object]:
    """Decode a ConsumerProtocolSubscription blob; raises TruncatedError / CorruptError."""
    return _decode(raw, CONSUMER_PROTOCOL_SUBSCRIPTION)


def decode_assignment(raw: bytes | memoryview) -> dict[str, object]:
    """Decode a ConsumerProtocolAssignment blob; raises TruncatedError / CorruptError."""
    return _decode(raw, CONSUMER_PROTOCOL_ASSIGNMENT)


def try_decode_subscription(raw: bytes) -> dict[str, object] | bytes:
    """The decoded subscription, or ``raw`` unchanged if it does not parse (never raises)."""
    try:
        return decode_subscription(raw)
    except DecodeError:
        return raw


def try_decode_assignment(raw: bytes) -> dict[str, object] | bytes:
    """The decoded assignment, or ``raw`` unchanged if it does not parse (never raises)."""
    try:
        return decode_assignment(raw)
    except DecodeError:
        return raw
