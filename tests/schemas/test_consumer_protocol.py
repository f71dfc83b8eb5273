"""ConsumerProtocolSubscription / ConsumerProtocolAssignment v0-v3 (A:3.9 clients/src/main/
resources/common/message/ConsumerProtocol{Subscription,Assignment}.json), from golden bytes."""

from __future__ import annotations

import pytest

from offsets_auditor.errors import CorruptError, TruncatedError
from offsets_auditor.schemas.consumer_protocol import (
    decode_assignment,
    decode_subscription,
    try_decode_assignment,
)

from .wire import b, i16, i32, s

TOPICS = i32(2) + s("a") + s("b")
OWNED = i32(1) + s("a") + i32(2) + i32(0) + i32(3)


def test_subscription_v0() -> None:
    assert decode_subscription(i16(0) + TOPICS + b(b"\x01")) == {
        "version": 0,
        "topics": ["a", "b"],
        "user_data": b"\x01",
    }


def test_subscription_v3_all_fields() -> None:
    raw = i16(3) + TOPICS + b(None) + OWNED + i32(12) + s("rack-1")
    assert decode_subscription(raw) == {
        "version": 3,
        "topics": ["a", "b"],
        "user_data": None,
        "owned_partitions": [{"topic": "a", "partitions": [0, 3]}],
        "generation_id": 12,
        "rack_id": "rack-1",
    }


def test_subscription_v2_has_generation_but_no_rack() -> None:
    decoded = decode_subscription(i16(2) + TOPICS + b(None) + OWNED + i32(-1))
    assert decoded["generation_id"] == -1
    assert "rack_id" not in decoded


def test_newer_subscription_version_reads_with_v3_layout_ignoring_the_rest() -> None:
    # ConsumerProtocol.checkSubscriptionVersion: versions above the highest known use it.
    raw = i16(9) + TOPICS + b(None) + OWNED + i32(1) + s(None) + b"future fields"
    decoded = decode_subscription(raw)
    assert decoded["version"] == 9
    assert decoded["rack_id"] is None


def test_negative_version_is_rejected() -> None:
    with pytest.raises(CorruptError):
        decode_subscription(i16(-1) + TOPICS + b(None))


def test_assignment_v0_to_v3_same_layout() -> None:
    body = i32(1) + s("t") + i32(1) + i32(5) + b(b"")
    for version in range(4):
        assert decode_assignment(i16(version) + body) == {
            "version": version,
            "assigned_partitions": [{"topic": "t", "partitions": [5]}],
            "user_data": b"",
        }


def test_truncated_assignment() -> None:
    with pytest.raises(TruncatedError):
        decode_assignment(i16(0) + i32(1) + s("t") + i32(3) + i32(5))


def test_try_decode_returns_raw_on_failure() -> None:
    assert try_decode_assignment(b"\x00") == b"\x00"
