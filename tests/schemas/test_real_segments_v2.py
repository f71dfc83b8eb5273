"""Keys and values of real records written by a Kafka 2.3.0 broker
(tests/fixtures/kafka-2.3.0/small-gzip: gzip-compressed v2 batches, walked by a test helper)."""

from __future__ import annotations

from pathlib import Path

import pytest

from offsets_auditor.schemas import RecordValue, decode_key, decode_value
from offsets_auditor.schemas.transaction_log import (
    TRANSACTION_STATUS,
    decode_transaction_key,
    decode_transaction_value,
)

from .v2_batches import records

LOGS = (
    Path(__file__).resolve().parents[1] / "fixtures" / "kafka-2.3.0" / "small-gzip" / "kafka-logs"
)


@pytest.mark.parametrize(
    "segment",
    sorted(LOGS.glob("__consumer_offsets-*/*.log")),
    ids=lambda p: f"{p.parent.name}/{p.name}",
)
def test_every_real_key_and_value_decodes(segment: Path) -> None:
    for record in records(segment):
        if record.control:
            continue
        assert record.key is not None
        key = decode_key(record.key)
        assert key.key_type in ("offset_commit", "group_metadata")
        if record.value is None:
            continue
        value = decode_value(key, record.value)
        assert isinstance(value, RecordValue)
        # 2.3 with IBP >= 2.1-IV1 writes OffsetCommitValue v3 and GroupMetadataValue v3
        assert value.version == 3


def test_empty_group_has_null_protocol_and_leader() -> None:
    segment = LOGS / "__consumer_offsets-1" / "00000000000000000000.log"
    found = [
        decode_value(key, record.value)
        for record in records(segment)
        if record.key is not None
        and record.value is not None
        and (key := decode_key(record.key)).key_type == "group_metadata"
    ]
    assert found == [
        RecordValue(
            3,
            {
                "protocol_type": "consumer",
                "generation": 3,
                "protocol": None,
                "leader": None,
                "current_state_timestamp": 1795250193599,
                "members": [],
            },
        )
    ]


def test_transactional_offset_commits() -> None:
    segment = LOGS / "__consumer_offsets-2" / "00000000000000001448.log"
    commits = []
    for record in records(segment):
        if record.transactional and not record.control and record.value is not None:
            assert record.key is not None
            key = decode_key(record.key)
            value = decode_value(key, record.value)
            assert isinstance(value, RecordValue)
            commits.append((key.group, key.topic, key.partition, value.fields["offset"]))
    # One committed transaction (offset 11), one aborted (offset 15): tests/fixtures/SHARED-README
    assert commits == [("exactly-once-etl", "clicks", 0, 11), ("exactly-once-etl", "clicks", 0, 15)]


def test_transaction_state_history_of_payments_tx() -> None:
    statuses = []
    for segment in sorted(LOGS.glob("__transaction_state-*/*.log")):
        for record in records(segment):
            assert record.key is not None and record.value is not None
            key = decode_transaction_key(record.key)
            assert key.key_type == "transaction_log"
            assert key.fields == {"transactional_id": "payments-tx"}
            value = decode_transaction_value(record.value)
            assert isinstance(value, RecordValue)
            assert value.version == 0
            assert value.fields["producer_id"] == 1
            statuses.append(TRANSACTION_STATUS[value.fields["transaction_status"]])  # type: ignore[index]
    assert statuses == [
        "Empty",
        "Ongoing",
        "Ongoing",
        "PrepareCommit",
        "CompleteCommit",
        "Ongoing",
        "PrepareAbort",
        "CompleteAbort",
    ]
