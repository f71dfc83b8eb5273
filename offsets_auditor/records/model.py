"""What the record-format decoders produce: batches and their records.

A *batch* is one top-level entry of a ``.log`` file: a v2 record batch, or a legacy (magic 0/1)
message, which is either a plain message (a batch of one record) or a compressed wrapper whose
value holds an inner message set. Every record of a batch shares the batch's file position.

The three types are ``NamedTuple``s, not frozen dataclasses: the decoder builds one of each per
entry, and a tuple is built in a third of the time (see ``benchmarks/README.md``). They are
immutable values all the same; compare them with other instances of the same type only.
"""

from __future__ import annotations

from typing import ClassVar, NamedTuple

from offsets_auditor.errors import ChecksumError

#: v0 messages carry no timestamp; Kafka reports them as ``NoTimestampType`` with ``-1``.
NO_TIMESTAMP = -1
#: ``RecordBatch.NO_PRODUCER_ID`` and friends (clients/.../record/RecordBatch.java).
NO_PRODUCER_ID = -1
NO_PRODUCER_EPOCH = -1
NO_SEQUENCE = -1
NO_PARTITION_LEADER_EPOCH = -1


class TimestampType:
    """Kafka's ``TimestampType`` ids: -1 none (magic 0), 0 CreateTime, 1 LogAppendTime."""

    NO_TIMESTAMP_TYPE = -1
    CREATE_TIME = 0
    LOG_APPEND_TIME = 1

    NAMES: ClassVar[dict[int, str]] = {-1: "NoTimestampType", 0: "CreateTime", 1: "LogAppendTime"}


class BatchHeader(NamedTuple):
    """The header fields of a top-level entry, in Kafka's names (``DefaultRecordBatch``).

    For a legacy message, ``base_offset`` is the offset of its first (inner) record and
    ``last_offset`` the offset field of the entry; for a plain legacy message both are equal.
    ``record_count`` is the count a v2 batch declares (``None`` for legacy entries).
    ``delete_horizon_ms`` is set when attribute bit 6 is (KIP-534, Kafka 3.1+).
    """

    position: int
    size: int
    magic: int
    base_offset: int
    last_offset: int
    codec: int
    timestamp_type: int
    max_timestamp: int
    crc: int
    is_transactional: bool = False
    is_control: bool = False
    producer_id: int = NO_PRODUCER_ID
    producer_epoch: int = NO_PRODUCER_EPOCH
    base_sequence: int = NO_SEQUENCE
    partition_leader_epoch: int = NO_PARTITION_LEADER_EPOCH
    record_count: int | None = None
    delete_horizon_ms: int | None = None

    @property
    def next_offset(self) -> int:
        return self.last_offset + 1


class Record(NamedTuple):
    """One record (v2) or message (v0/v1). ``key``/``value`` are ``None`` when null; a null
    value is a tombstone. ``magic`` is the record's own magic, which for an inner message of a
    legacy wrapper can differ from the wrapper's (KAFKA-4298)."""

    offset: int
    timestamp: int
    key: bytes | None
    value: bytes | None
    magic: int
    headers: tuple[tuple[str, bytes | None], ...] = ()

    @property
    def is_tombstone(self) -> bool:
        return self.value is None


class Batch(NamedTuple):
    """A decoded top-level entry with all of its records (bounded by the batch size limit).
    ``checksum_error``: its stored CRC (or an inner message's) does not match its bytes; the
    records are as the broker reads them all the same."""

    header: BatchHeader
    records: tuple[Record, ...]
    checksum_error: ChecksumError | None = None
