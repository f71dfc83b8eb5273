"""``__transaction_state`` records: TransactionLogKey v0, TransactionLogValue v0 and v1.

Same envelope as ``__consumer_offsets`` (int16 key version + key struct; int16 value version +
value struct; null value = tombstone). Declared field by field from A:0.11.0.0
``core/src/main/scala/kafka/coordinator/transaction/TransactionLog.scala`` (key/value v0),
A:2.8.0 ``core/src/main/resources/common/message/TransactionLogValue.json`` (v0),
A:3.9 ``transaction-coordinator/src/main/resources/common/message/TransactionLog{Key,Value}.json``
(v1 flexible, no tagged fields), C:v8.0.0 (tags 0 ``PreviousProducerId``, 1 ``NextProducerId``,
2 ``ClientTransactionVersion``) and C:v8.1.0 (tag 3 ``NextProducerEpoch``); unchanged through
C:v8.3.1. In 4.1+ the key declares ``"apiKey": 0`` (same bytes as key version 0).

``decode_transaction_key`` returns a :class:`RecordKey` with ``key_type="transaction_log"``,
``group=None`` and ``fields={"transactional_id": ...}`` (or ``key_type="unknown"``). As for
``__consumer_offsets``, trailing bytes after a key are corrupt and after a value are ignored
(Kafka's readers never check ``remaining()``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

from offsets_auditor.schemas.message import (
    INT8,
    INT16,
    INT32,
    INT64,
    NONE,
    STRING,
    ArrayOf,
    Field,
    Message,
    Struct,
    between,
    only,
    read_message,
    since,
)
from offsets_auditor.schemas.model import RecordKey, RecordValue, UnknownValue
from offsets_auditor.schemas.primitives import Reader

TRANSACTION_LOG_KEY_VERSION: Final = 0

TRANSACTION_LOG_KEY: Final = Message(
    name="TransactionLogKey",
    versions=only(TRANSACTION_LOG_KEY_VERSION),
    flexible=NONE,
    fields=(Field("transactional_id", STRING),),
    source="A:3.9 transaction-coordinator/.../TransactionLogKey.json",
)

_PARTITIONS: Final = Struct(
    "PartitionsSchema", (Field("topic", STRING), Field("partition_ids", ArrayOf(INT32)))
)


def _tagged_from_v1(name: str, kind: str, tag: int) -> Field:
    return Field(name, kind, versions=since(1), tag=tag, tagged=since(1))


TRANSACTION_LOG_VALUE: Final = Message(
    name="TransactionLogValue",
    versions=between(0, 1),
    flexible=since(1),
    fields=(
        Field("producer_id", INT64),
        _tagged_from_v1("previous_producer_id", INT64, 0),  # C:v8.0.0
        _tagged_from_v1("next_producer_id", INT64, 1),  # C:v8.0.0
        Field("producer_epoch", INT16),
        _tagged_from_v1("next_producer_epoch", INT16, 3),  # C:v8.1.0
        Field("transaction_timeout_ms", INT32),
        Field("transaction_status", INT8),
        Field("transaction_partitions", ArrayOf(_PARTITIONS), nullable=since(0)),
        Field("transaction_last_update_timestamp_ms", INT64),
        Field("transaction_start_timestamp_ms", INT64),
        _tagged_from_v1("client_transaction_version", INT16, 2),  # C:v8.0.0
    ),
    source="A:2.8.0 / A:3.9 / C:v8.1.0 .../TransactionLogValue.json",
)

TRANSACTION_STATUS: Final[Mapping[int, str]] = {
    0: "Empty",
    1: "Ongoing",
    2: "PrepareCommit",
    3: "PrepareAbort",
    4: "CompleteCommit",
    5: "CompleteAbort",
    6: "Dead",
    7: "PrepareEpochFence",
}
"""``transaction_status`` ids (C:v8.1.0 ``transaction-coordinator/.../TransactionState.java``;
A:0.11.0.0 ``TransactionMetadata.scala`` has 0-6)."""


def decode_transaction_key(raw: bytes | memoryview) -> RecordKey:
    """Decode a ``__transaction_state`` key; an unknown version gives ``key_type="unknown"``."""
    reader = Reader(raw)
    version = reader.int16("TransactionLogKey.version")
    if version != TRANSACTION_LOG_KEY_VERSION:
        return RecordKey(key_type="unknown", version=version, group=None)
    fields, _ = read_message(reader, TRANSACTION_LOG_KEY, version)
    reader.expect_end(TRANSACTION_LOG_KEY.name)
    return RecordKey("transaction_log", version, None, fields=fields)


def decode_transaction_value(raw: bytes | memoryview) -> RecordValue | UnknownValue:
    """Decode a non-null ``__transaction_state`` value (versions 0 and 1)."""
    reader = Reader(raw)
    version = reader.int16("TransactionLogValue.version")
    if version not in TRANSACTION_LOG_VALUE.versions:
        return UnknownValue(version, f"unknown value version {version} for transaction_log")
    fields, unknown = read_message(reader, TRANSACTION_LOG_VALUE, version)
    return RecordValue(version, fields, unknown)
