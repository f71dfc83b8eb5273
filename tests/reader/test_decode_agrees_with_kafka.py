"""Acceptance: our decoder agrees with Kafka's own DumpLogSegments, record for record.

The reference is Kafka 0.9.0.1's ``DumpLogSegments --offsets-decoder --print-data-log`` output
for the real segment the broker wrote (``dump-offsets-decoder-p2-seg0.txt.gz``, 61,680 lines).
"""

from __future__ import annotations

from pathlib import Path

from offsets_auditor.errors import DecodeError
from offsets_auditor.logdir import fs
from offsets_auditor.reader.decode import DecodedRecord, decode_segment
from tests.support.kafka_dump import read_dump


def decoded(path: Path) -> tuple[list[DecodedRecord], list[DecodeError]]:
    records: list[DecodedRecord] = []
    errors: list[DecodeError] = []
    with fs.ReadOnlyFile(path) as source:
        for item in decode_segment(source, file=str(path)):
            (errors if isinstance(item, DecodeError) else records).append(item)
    return records, errors


def test_every_record_of_the_090_segment_matches_kafkas_dump(cleaner_died: Path) -> None:
    segment = cleaner_died / "kafka-logs/__consumer_offsets-2/00000000000000000000.log"
    expected = read_dump(cleaner_died / "dump-offsets-decoder-p2-seg0.txt.gz")
    records, errors = decoded(segment)

    assert errors == []
    assert len(expected) == 61_680
    assert len(records) == len(expected)
    for ours, kafka in zip(records, expected, strict=True):
        assert ours.record.offset == kafka.offset
        assert ours.batch.position == kafka.position
        assert ours.batch.crc == int(kafka.fields["crc"])
        assert ours.record.magic == int(kafka.fields["magic"])
        assert kafka.fields["compresscodec"] == "NoCompressionCodec" and ours.batch.codec == 0
        value_size = -1 if ours.record.value is None else len(ours.record.value)
        assert value_size == int(kafka.fields["payloadsize"])
        assert ours.key is not None
        if ours.record.value is None:  # Kafka prints neither key nor payload for a tombstone
            assert kafka.key is None and kafka.payload is None
            continue
        assert len(ours.record.key or b"") == int(kafka.fields["keysize"])
        assert kafka.key == f"offset::{ours.key.group}:{ours.key.topic}:{ours.key.partition}"
        value = ours.value
        assert value is not None and not hasattr(value, "reason")
        fields = value.fields  # type: ignore[union-attr]
        metadata = fields["metadata"]
        expected_payload = f"{fields['offset']}" + (f":{metadata}" if metadata else "")
        assert kafka.payload == expected_payload


def test_both_shared_fixtures_decode_without_errors(cleaner_died: Path, small_gzip: Path) -> None:
    for log_dir in (cleaner_died / "kafka-logs", small_gzip / "kafka-logs"):
        segments = sorted(log_dir.glob("__consumer_offsets-*/*.log"))
        assert segments
        for segment in segments:
            _, errors = decoded(segment)
            assert errors == [], segment
