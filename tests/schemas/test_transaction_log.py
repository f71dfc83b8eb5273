"""__transaction_state keys and values from golden bytes: A:0.11.0.0 TransactionLog.scala (v0),
A:3.9 transaction-coordinator/.../TransactionLog{Key,Value}.json (v1 flexible), tags from
C:v8.0.0 (0 PreviousProducerId, 1 NextProducerId, 2 ClientTransactionVersion) and C:v8.1.0
(3 NextProducerEpoch)."""

from __future__ import annotations

import pytest

from offsets_auditor.errors import CorruptError, TruncatedError
from offsets_auditor.schemas import RecordKey, RecordValue, UnknownValue
from offsets_auditor.schemas.transaction_log import (
    decode_transaction_key,
    decode_transaction_value,
)

from .wire import NO_TAGS, ca, cs, i8, i16, i32, i64, s, tags

# ProducerId int64, ProducerEpoch int16, TransactionTimeoutMs int32, TransactionStatus int8,
# TransactionPartitions nullable []{Topic string, PartitionIds []int32},
# TransactionLastUpdateTimestampMs int64, TransactionStartTimestampMs int64
V0_FIELDS = {
    "producer_id": 1000,
    "producer_epoch": 3,
    "transaction_timeout_ms": 60_000,
    "transaction_status": 1,
    "transaction_partitions": [{"topic": "orders", "partition_ids": [0, 2]}],
    "transaction_last_update_timestamp_ms": 2_000,
    "transaction_start_timestamp_ms": 1_000,
}


def test_key_v0() -> None:
    assert decode_transaction_key(i16(0) + s("payments-tx")) == RecordKey(
        "transaction_log", 0, None, fields={"transactional_id": "payments-tx"}
    )


def test_key_unknown_version_and_trailing_bytes() -> None:
    assert decode_transaction_key(i16(1) + s("x")) == RecordKey("unknown", 1, None)
    with pytest.raises(CorruptError):
        decode_transaction_key(i16(0) + s("x") + b"\x00")


def test_value_v0() -> None:
    raw = (
        i16(0) + i64(1000) + i16(3) + i32(60_000) + i8(1)
        + i32(1) + s("orders") + i32(2) + i32(0) + i32(2)
        + i64(2_000) + i64(1_000)
    )  # fmt: skip
    assert decode_transaction_value(raw) == RecordValue(0, V0_FIELDS)


def test_value_v0_null_partitions() -> None:
    raw = i16(0) + i64(1) + i16(0) + i32(1) + i8(0) + i32(-1) + i64(5) + i64(-1)
    value = decode_transaction_value(raw)
    assert isinstance(value, RecordValue)
    assert value.fields["transaction_partitions"] is None


def test_value_v1_flexible_with_tags() -> None:
    raw = (
        i16(1) + i64(1000) + i16(3) + i32(60_000) + i8(1)
        + ca(1) + cs("orders") + ca(2) + i32(0) + i32(2) + NO_TAGS
        + i64(2_000) + i64(1_000)
        + tags((0, i64(999)), (1, i64(1001)), (2, i16(2)), (3, i16(4)), (9, b"?"))
    )  # fmt: skip
    value = decode_transaction_value(raw)
    assert value == RecordValue(
        1,
        {
            "producer_id": 1000,
            "previous_producer_id": 999,
            "next_producer_id": 1001,
            "producer_epoch": 3,
            "next_producer_epoch": 4,
            "transaction_timeout_ms": 60_000,
            "transaction_status": 1,
            "transaction_partitions": [{"topic": "orders", "partition_ids": [0, 2]}],
            "transaction_last_update_timestamp_ms": 2_000,
            "transaction_start_timestamp_ms": 1_000,
            "client_transaction_version": 2,
        },
        {9: b"?"},
    )


def test_value_unknown_version_and_truncation() -> None:
    assert decode_transaction_value(i16(2) + b"x") == UnknownValue(
        2, "unknown value version 2 for transaction_log"
    )
    with pytest.raises(TruncatedError) as error:
        decode_transaction_value(i16(0) + i64(1) + i16(0))
    assert error.value.field == "TransactionLogValue.transaction_timeout_ms"
