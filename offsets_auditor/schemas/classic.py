"""The classic group coordinator's records: key versions 0-2 and their values.

Grammar (docs/kafka-internals.md §2.2-2.4)::

    key   := int16 keyVersion, OffsetCommitKey (0, 1) | GroupMetadataKey (2)
    value := int16 valueVersion, OffsetCommitValue v0-v4 | GroupMetadataValue v0-v4

Sources, field by field (``A:`` apache/kafka tags, ``C:`` confluentinc/kafka, as in
docs/kafka-internals.md §0; ``gc/`` = ``group-coordinator/src/main/resources/common/message/``):

- OffsetCommitKey v0/v1, GroupMetadataKey v2: A:0.9.0.1
  ``core/src/main/scala/kafka/coordinator/GroupMetadataManager.scala``
  (``OFFSET_COMMIT_KEY_SCHEMA``, ``GROUP_METADATA_KEY_SCHEMA``);
  A:2.8.0 ``core/src/main/resources/common/message/OffsetCommitKey.json``,
  ``GroupMetadataKey.json``;
  C:v8.1.0 ``gc/LegacyOffsetCommitKey.json``, ``gc/OffsetCommitKey.json`` (apiKey 0, 1).
- OffsetCommitValue v0-v1: A:0.9.0.1 (``OFFSET_COMMIT_VALUE_SCHEMA_V0/V1``);
  v0-v3: A:2.8.0 ``OffsetCommitValue.json``; v4 (flexible): A:3.5.0 ``gc/OffsetCommitValue.json``;
  tag 0 ``topicId``: C:v8.1.0 ``gc/OffsetCommitValue.json``.
- GroupMetadataValue v0: A:0.9.0.1 (``GROUP_METADATA_VALUE_SCHEMA_V0``, ``MEMBER_METADATA_V0``);
  v0-v3: A:2.8.0 ``GroupMetadataValue.json``; v4 (flexible): A:3.5.0 / C:v8.1.0.

Rules kept from Kafka:

- ``protocol``/``leader`` are read as nullable in every version: 0.9 declared them ``STRING`` but
  0.10.1+ writes an Empty group with int16 -1 there, and the JSON (2.8.0+) says
  ``nullableVersions 0+``.
- Trailing bytes after a value are ignored, as every Kafka reader does: 0.9's ``Schema.read`` and
  the generated ``OffsetCommitValue(Readable, short)`` (2.8+) read the fields and never look at
  ``remaining()``. Trailing bytes after a KEY are :class:`CorruptError` (our rule: the cleaner
  compares raw key bytes, so such a key is a different key).
- Key version 0 (4.1's ``LegacyOffsetCommitKey``) takes an OffsetCommitValue of any version, as
  0.9-4.0 readers do (they decode the value independently of the key version); 4.1 accepts only
  value v0 there.
- For ``protocol_type == "consumer"`` each member's ``subscription`` / ``assignment`` is replaced
  by its decoded consumer-protocol dict when it parses, else left as bytes (Kafka 3.8+
  ``DumpLogSegments`` does the same).
"""

from __future__ import annotations

from typing import Final, cast

from offsets_auditor.schemas.consumer_protocol import (
    try_decode_assignment,
    try_decode_subscription,
)
from offsets_auditor.schemas.message import (
    ALL,
    BYTES,
    INT32,
    INT64,
    NONE,
    STRING,
    UUID,
    ArrayOf,
    Field,
    Message,
    Struct,
    between,
    only,
    read_message,
    since,
)
from offsets_auditor.schemas.model import RecordKey, RecordValue
from offsets_auditor.schemas.primitives import Reader

OFFSET_COMMIT_KEY_VERSIONS: Final = between(0, 1)
GROUP_METADATA_KEY_VERSION: Final = 2

OFFSET_COMMIT_KEY: Final = Message(
    name="OffsetCommitKey",
    versions=OFFSET_COMMIT_KEY_VERSIONS,
    flexible=NONE,
    fields=(
        Field("group", STRING),
        Field("topic", STRING),
        Field("partition", INT32),
    ),
    source="A:0.9.0.1 GroupMetadataManager.scala OFFSET_COMMIT_KEY_SCHEMA; "
    "C:v8.1.0 group-coordinator/.../OffsetCommitKey.json",
)

GROUP_METADATA_KEY: Final = Message(
    name="GroupMetadataKey",
    versions=only(GROUP_METADATA_KEY_VERSION),
    flexible=NONE,
    fields=(Field("group", STRING),),
    source="A:0.9.0.1 GroupMetadataManager.scala GROUP_METADATA_KEY_SCHEMA; "
    "C:v8.1.0 group-coordinator/.../GroupMetadataKey.json",
)

OFFSET_COMMIT_VALUE: Final = Message(
    name="OffsetCommitValue",
    versions=between(0, 4),
    flexible=since(4),
    fields=(
        Field("offset", INT64),
        Field("leader_epoch", INT32, versions=since(3)),
        Field("metadata", STRING),
        Field("commit_timestamp", INT64),
        Field("expire_timestamp", INT64, versions=only(1)),
        Field("topic_id", UUID, versions=since(4), tag=0, tagged=since(4)),
    ),
    source="A:2.8.0 core/.../OffsetCommitValue.json (0-3); "
    "C:v8.1.0 group-coordinator/.../OffsetCommitValue.json (0-4, tag 0 topicId)",
)

_MEMBER_METADATA: Final = Struct(
    "MemberMetadata",
    (
        Field("member_id", STRING),
        Field("group_instance_id", STRING, versions=since(3), nullable=since(3)),
        Field("client_id", STRING),
        Field("client_host", STRING),
        Field("rebalance_timeout", INT32, versions=since(1)),
        Field("session_timeout", INT32),
        Field("subscription", BYTES),
        Field("assignment", BYTES),
    ),
)

GROUP_METADATA_VALUE: Final = Message(
    name="GroupMetadataValue",
    versions=between(0, 4),
    flexible=since(4),
    fields=(
        Field("protocol_type", STRING),
        Field("generation", INT32),
        Field("protocol", STRING, nullable=ALL),
        Field("leader", STRING, nullable=ALL),
        Field("current_state_timestamp", INT64, versions=since(2)),
        Field("members", ArrayOf(_MEMBER_METADATA)),
    ),
    source="A:2.8.0 core/.../GroupMetadataValue.json (0-3); "
    "C:v8.1.0 group-coordinator/.../GroupMetadataValue.json (0-4)",
)

CONSUMER_PROTOCOL_TYPE: Final = "consumer"


def decode_classic_key(reader: Reader, version: int) -> RecordKey:
    """Decode the key body after its int16 ``version`` (0, 1 or 2); every byte must be used."""
    if version == GROUP_METADATA_KEY_VERSION:
        fields, _ = read_message(reader, GROUP_METADATA_KEY, version)
        reader.expect_end(GROUP_METADATA_KEY.name)
        return RecordKey("group_metadata", version, cast(str, fields["group"]), fields=fields)
    fields, _ = read_message(reader, OFFSET_COMMIT_KEY, version)
    reader.expect_end(OFFSET_COMMIT_KEY.name)
    return RecordKey(
        "offset_commit",
        version,
        cast(str, fields["group"]),
        cast(str, fields["topic"]),
        cast(int, fields["partition"]),
        fields,
    )


def decode_offset_commit_value(reader: Reader, version: int) -> RecordValue:
    """OffsetCommitValue at ``version`` (0-4), read after its int16 prefix."""
    fields, unknown = read_message(reader, OFFSET_COMMIT_VALUE, version)
    return RecordValue(version, fields, unknown)


def decode_group_metadata_value(reader: Reader, version: int) -> RecordValue:
    """GroupMetadataValue at ``version`` (0-4), read after its int16 prefix; consumer-protocol
    blobs decoded where they parse."""
    fields, unknown = read_message(reader, GROUP_METADATA_VALUE, version)
    members = fields["members"]
    if fields["protocol_type"] == CONSUMER_PROTOCOL_TYPE and isinstance(members, list):
        for member in cast(list[dict[str, object]], members):
            subscription, assignment = member["subscription"], member["assignment"]
            if isinstance(subscription, bytes):
                member["subscription"] = try_decode_subscription(subscription)
            if isinstance(assignment, bytes):
                member["assignment"] = try_decode_assignment(assignment)
    return RecordValue(version, fields, unknown)
