"""KRaft metadata records that describe topics and partitions, decoded from a record value.

Every record of ``__cluster_metadata`` has a null key and a value framed by
``AbstractApiMessageSerde`` (A:3.9 ``server-common/src/main/java/org/apache/kafka/server/common/
serialization/AbstractApiMessageSerde.java``)::

    value = frameVersion:uvarint (1; 0 is the 2.8 preview, refused) apiKey:uvarint
            version:uvarint  message            ; no byte may follow the message

The messages read here, declared from Kafka's JSON definitions (A:3.9
``metadata/src/main/resources/common/metadata/``; unchanged in C:v8.1.0 = AK 4.1.0), all
flexible in every version (compact strings and arrays, tagged fields):

- ``TopicRecord`` (apiKey 2, v0): Name, TopicId;
- ``PartitionRecord`` (apiKey 3, v0-2): PartitionId, TopicId, Replicas, Isr, RemovingReplicas,
  AddingReplicas, Leader, LeaderRecoveryState (tag 0), LeaderEpoch, PartitionEpoch,
  Directories (v1+), EligibleLeaderReplicas (v2+, tag 1), LastKnownElr (v2+, tag 2);
- ``PartitionChangeRecord`` (apiKey 5, v0-2): PartitionId, TopicId, then only tagged fields:
  Isr (0), Leader (1; default -2 = "no change"), Replicas (2), RemovingReplicas (3),
  AddingReplicas (4), LeaderRecoveryState (5), EligibleLeaderReplicas (6), LastKnownElr (7),
  Directories (8, v1+);
- ``RemoveTopicRecord`` (apiKey 9, v0): TopicId.

Any other api key is another kind of metadata (brokers, configs, features...): :func:`decode`
returns ``None`` for it. A version outside the declared range is reported, not guessed.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from offsets_auditor.errors import CorruptError, DecodeError
from offsets_auditor.schemas.message import (
    INT8,
    INT32,
    STRING,
    UUID,
    ArrayOf,
    Field,
    Message,
    between,
    only,
    read_message,
    since,
)
from offsets_auditor.schemas.primitives import Reader

_SOURCE: Final = "A:3.9 metadata/src/main/resources/common/metadata/"
FRAME_VERSION: Final = 1

TOPIC_RECORD: Final = 2
PARTITION_RECORD: Final = 3
PARTITION_CHANGE_RECORD: Final = 5
REMOVE_TOPIC_RECORD: Final = 9

#: ``LeaderConstants.NO_LEADER_CHANGE`` (A:3.9 ``metadata/.../LeaderConstants.java``): the
#: default of PartitionChangeRecord's tagged Leader.
NO_LEADER_CHANGE: Final = -2

_INTS: Final = ArrayOf(INT32)


def _tagged_ints(name: str, tag: int, versions: int = 0) -> Field:
    return Field(
        name, _INTS, since(versions), nullable=since(versions), tag=tag, tagged=since(versions)
    )


_MESSAGES: Final[dict[int, Message]] = {
    TOPIC_RECORD: Message(
        name="TopicRecord",
        versions=only(0),
        flexible=since(0),
        fields=(Field("name", STRING), Field("topic_id", UUID)),
        source=_SOURCE + "TopicRecord.json",
    ),
    PARTITION_RECORD: Message(
        name="PartitionRecord",
        versions=between(0, 2),
        flexible=since(0),
        fields=(
            Field("partition_id", INT32),
            Field("topic_id", UUID),
            Field("replicas", _INTS),
            Field("isr", _INTS),
            Field("removing_replicas", _INTS),
            Field("adding_replicas", _INTS),
            Field("leader", INT32),
            Field("leader_recovery_state", INT8, tag=0, tagged=since(0)),
            Field("leader_epoch", INT32),
            Field("partition_epoch", INT32),
            Field("directories", ArrayOf(UUID), since(1)),
            _tagged_ints("eligible_leader_replicas", 1, 2),
            _tagged_ints("last_known_elr", 2, 2),
        ),
        source=_SOURCE + "PartitionRecord.json",
    ),
    PARTITION_CHANGE_RECORD: Message(
        name="PartitionChangeRecord",
        versions=between(0, 2),
        flexible=since(0),
        fields=(
            Field("partition_id", INT32),
            Field("topic_id", UUID),
            _tagged_ints("isr", 0),
            Field("leader", INT32, tag=1, tagged=since(0)),
            _tagged_ints("replicas", 2),
            _tagged_ints("removing_replicas", 3),
            _tagged_ints("adding_replicas", 4),
            Field("leader_recovery_state", INT8, tag=5, tagged=since(0)),
            _tagged_ints("eligible_leader_replicas", 6, 2),
            _tagged_ints("last_known_elr", 7, 2),
            Field(
                "directories", ArrayOf(UUID), since(1), nullable=since(1), tag=8, tagged=since(1)
            ),
        ),
        source=_SOURCE + "PartitionChangeRecord.json",
    ),
    REMOVE_TOPIC_RECORD: Message(
        name="RemoveTopicRecord",
        versions=only(0),
        flexible=since(0),
        fields=(Field("topic_id", UUID),),
        source=_SOURCE + "RemoveTopicRecord.json",
    ),
}


@dataclass(frozen=True, slots=True)
class TopicRecord:
    name: str
    topic_id: str


@dataclass(frozen=True, slots=True)
class PartitionRecord:
    """A partition's full registration (its creation, or a snapshot's copy of it)."""

    topic_id: str
    partition_id: int
    replicas: tuple[int, ...]
    isr: tuple[int, ...]
    leader: int
    leader_epoch: int
    partition_epoch: int


@dataclass(frozen=True, slots=True)
class PartitionChangeRecord:
    """A change to a partition: ``None`` fields did not change; ``leader`` is
    :data:`NO_LEADER_CHANGE` when the leader did not."""

    topic_id: str
    partition_id: int
    isr: tuple[int, ...] | None
    leader: int
    replicas: tuple[int, ...] | None


@dataclass(frozen=True, slots=True)
class RemoveTopicRecord:
    topic_id: str


TopicMetadataRecord = TopicRecord | PartitionRecord | PartitionChangeRecord | RemoveTopicRecord


def decode(value: bytes | memoryview) -> TopicMetadataRecord | None:
    """The record in a ``__cluster_metadata`` value, or ``None`` for an api key that does not
    describe topics or partitions. Raises :class:`DecodeError` (with the field and byte
    position within ``value``) for a frame or message that does not decode."""
    reader = Reader(value)
    frame = reader.unsigned_varint("frameVersion")
    if frame != FRAME_VERSION:
        raise CorruptError(
            f"metadata record frame version {frame} (only {FRAME_VERSION} is read; 0 is the"
            " 2.8 KRaft preview, which Kafka refuses too)",
            field="frameVersion",
            position=0,
        )
    api_key = reader.unsigned_varint("apiKey")
    message = _MESSAGES.get(api_key)
    if message is None:
        return None
    version_at = reader.position
    version = reader.unsigned_varint("version")
    if version not in message.versions:
        raise CorruptError(
            f"{message.name} version {version} is not one of {message.versions.low}-"
            f"{message.versions.high} known here",
            field="version",
            position=version_at,
        )
    fields, _unknown_tags = read_message(reader, message, version)
    reader.expect_end(message.name)
    return _typed(api_key, fields)


def _ints(value: object) -> tuple[int, ...] | None:
    if value is None:
        return None
    assert isinstance(value, list)
    return tuple(int(v) for v in value)


def _int(value: object, default: int) -> int:
    return default if value is None else int(value)  # type: ignore[call-overload]


def _typed(api_key: int, f: dict[str, object]) -> TopicMetadataRecord:
    if api_key == TOPIC_RECORD:
        return TopicRecord(name=str(f["name"]), topic_id=str(f["topic_id"]))
    if api_key == REMOVE_TOPIC_RECORD:
        return RemoveTopicRecord(topic_id=str(f["topic_id"]))
    if api_key == PARTITION_RECORD:
        return PartitionRecord(
            topic_id=str(f["topic_id"]),
            partition_id=_int(f["partition_id"], -1),
            replicas=_ints(f["replicas"]) or (),
            isr=_ints(f["isr"]) or (),
            leader=_int(f["leader"], -1),
            leader_epoch=_int(f["leader_epoch"], -1),
            partition_epoch=_int(f["partition_epoch"], -1),
        )
    return PartitionChangeRecord(
        topic_id=str(f["topic_id"]),
        partition_id=_int(f["partition_id"], -1),
        isr=_ints(f.get("isr")),
        leader=_int(f.get("leader"), NO_LEADER_CHANGE),
        replicas=_ints(f.get("replicas")),
    )


__all__ = [
    "NO_LEADER_CHANGE",
    "DecodeError",
    "PartitionChangeRecord",
    "PartitionRecord",
    "RemoveTopicRecord",
    "TopicMetadataRecord",
    "TopicRecord",
    "decode",
]
