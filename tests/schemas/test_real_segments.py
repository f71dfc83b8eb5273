"""Keys and values of real records written by a Kafka 0.9.0.1 broker
(tests/fixtures/kafka-0.9.0.1/cleaner-died), checked against Kafka's own DumpLogSegments output."""

from __future__ import annotations

import gzip
import re
from pathlib import Path

import pytest

from offsets_auditor.schemas import RecordValue, decode_key, decode_value

from .legacy_segment import entries

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "kafka-0.9.0.1" / "cleaner-died"
LOGS = FIXTURE / "kafka-logs"
P2_SEG0 = LOGS / "__consumer_offsets-2" / "00000000000000000000.log"

# kafka.tools.DumpLogSegments --offsets-decoder (0.9.0.1 OffsetsMessageParser):
# "key: offset::<group>:<topic>:<partition> payload: <offset>[:<metadata>]"
DUMP_LINE = re.compile(
    r"^offset: (\d+) position: (\d+) .* crc: (\d+) keysize: \d+ "
    r"key: offset::([^:]+):([^:]+):(\d+) payload: (\d+)(?::(.*))?$"
)


def test_first_record_of_partition_2() -> None:
    first = next(entries(P2_SEG0))
    assert first.key is not None and first.value is not None
    key = decode_key(first.key)
    assert (key.key_type, key.version) == ("offset_commit", 1)
    assert (key.group, key.topic, key.partition) == ("expiring-group", "t1", 0)
    value = decode_value(key, first.value)
    assert isinstance(value, RecordValue)
    assert value.version == 1
    assert value.fields["offset"] == 0
    assert value.fields["metadata"] == ""


def test_usercenter_group_metadata_in_partition_0() -> None:
    decoded = []
    for entry in entries(LOGS / "__consumer_offsets-0" / "00000000000000000000.log"):
        assert entry.key is not None
        key = decode_key(entry.key)
        if key.key_type == "group_metadata" and key.group == "usercenter" and entry.value:
            decoded.append(decode_value(key, entry.value))
    assert decoded, "no group metadata record for usercenter"
    for value in decoded:
        assert isinstance(value, RecordValue)
        assert value.version == 0  # 0.9 writes GroupMetadataValue v0
        assert value.fields["protocol_type"] == "consumer"
        assert value.fields["protocol"] == "range"
        members = value.fields["members"]
        assert isinstance(members, list) and members
        assignment = members[0]["assignment"]
        assert isinstance(assignment, dict)
        topics = {tp["topic"]: tp["partitions"] for tp in assignment["assigned_partitions"]}
        assert topics == {"t1": [0]}
        assert members[0]["subscription"]["topics"] == ["t1"]
        assert members[0]["member_id"] == value.fields["leader"]


def test_every_record_of_partition_2_segment_0_matches_kafkas_dump() -> None:
    with gzip.open(FIXTURE / "dump-offsets-decoder-p2-seg0.txt.gz", "rt") as dump:
        lines = [line.rstrip("\n") for line in dump if line.startswith("offset: ")]
    records = list(entries(P2_SEG0))
    assert len(records) == len(lines) == 61_680
    for entry, line in zip(records, lines, strict=True):
        match = DUMP_LINE.match(line)
        assert match, line
        offset, position, crc, group, topic, partition, committed, metadata = match.groups()
        assert (entry.offset, entry.position, entry.crc) == (int(offset), int(position), int(crc))
        assert entry.key is not None and entry.value is not None
        key = decode_key(entry.key)
        assert (key.group, key.topic, key.partition) == (group, topic, int(partition))
        value = decode_value(key, entry.value)
        assert isinstance(value, RecordValue)
        assert value.fields["offset"] == int(committed)
        assert value.fields["metadata"] == (metadata or "")


@pytest.mark.parametrize(
    "segment",
    sorted(LOGS.glob("__consumer_offsets-*/*.log")),
    ids=lambda p: p.parent.name + "/" + p.name,
)
def test_every_real_key_and_value_decodes(segment: Path) -> None:
    for entry in entries(segment):
        assert entry.key is not None
        key = decode_key(entry.key)
        assert key.key_type in ("offset_commit", "group_metadata")
        assert key.version == (1 if key.key_type == "offset_commit" else 2)
        if entry.value is None:
            continue  # tombstone
        value = decode_value(key, entry.value)
        assert isinstance(value, RecordValue)
        if key.key_type == "offset_commit":
            # 0.9 writes OffsetCommitValue v1
            assert value.version == 1
            assert set(value.fields) == {
                "offset",
                "metadata",
                "commit_timestamp",
                "expire_timestamp",
            }
