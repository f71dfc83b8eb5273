"""Acceptance: our decoder agrees with Kafka's own ``DumpLogSegments --offsets-decoder`` on
every segment of every real fixture that ships the broker's dump (``dumps/``, ``dumps-after/``):
0.9.0.1 plain and gzip/snappy/lz4 wrappers (incl. cleaner-rewritten ones), 2.3.0 v2 batches with
transactions, and the damaged segments of ``corrupt-segments`` (an entry whose CRC does not
match is read as Kafka's dump prints it, ``isvalid: false``; where the dump stops at a zero, a
truncated or a garbage size field, we report the damage and stop too). Offsets, positions, keys,
committed offsets and group metadata must all match.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from offsets_auditor.errors import ChecksumError, DecodeError
from offsets_auditor.logdir import fs
from offsets_auditor.reader.decode import DecodedRecord, decode_segment
from tests.support.kafka_dump import DumpedRecord, read_dump

FIXTURES = Path(__file__).parent.parent / "fixtures"
DUMPED = re.compile(r"^Dumping (\S+)$")


def dump_files() -> list[Path]:
    return sorted(
        p
        for p in FIXTURES.glob("kafka-*/*/dumps*/*.txt.gz")
        if not p.name.endswith(".shallow.txt.gz")
    )


def segment_for(dump: Path) -> Path:
    """The segment a dump was made from: its ``Dumping`` line names it under ``kafka-logs``;
    ``dumps-after`` belongs to ``kafka-logs-after``."""
    import gzip

    with gzip.open(dump, "rt") as lines:
        header = next(line for line in lines if line.startswith("Dumping "))
    path = DUMPED.match(header.strip())
    assert path is not None
    relative = path.group(1).split("/kafka-logs/", 1)[1]
    log_dir = "kafka-logs-after" if dump.parent.name == "dumps-after" else "kafka-logs"
    return dump.parent.parent / log_dir / relative


def invalid_positions(dump: Path) -> set[int]:
    """Where Kafka's dump prints an entry with ``isvalid: false`` (a CRC that does not match)."""
    import gzip

    found = set()
    with gzip.open(dump, "rt") as lines:
        for line in lines:
            if "isvalid: false" in line:
                match = re.search(r"\bposition: (\d+)", line)
                assert match is not None, line
                found.add(int(match.group(1)))
    return found


def key_text(record: DecodedRecord, era_json: bool) -> str | None:
    key = record.key
    assert key is not None
    if key.key_type == "offset_commit":
        return f"offset::{key.group}:{key.topic}:{key.partition}"
    if key.key_type == "group_metadata":
        return (
            json.dumps({"metadata": key.group}, separators=(",", ":"))
            if era_json
            else f"metadata::{key.group}"
        )
    return None


def check_payload(record: DecodedRecord, payload: str, era_json: bool) -> None:
    fields = record.value.fields  # type: ignore[union-attr]
    if record.key is not None and record.key.key_type == "offset_commit":
        metadata = fields["metadata"]
        assert payload == f"{fields['offset']}" + (f":{metadata}" if metadata else "")
    elif era_json:
        data = json.loads(payload)
        assert data["protocolType"] == fields["protocol_type"]
        assert data["protocol"] == fields["protocol"]
        assert data["generationId"] == fields["generation"]
    else:
        protocol = "null" if fields["protocol"] is None else fields["protocol"]
        assert payload.startswith(f"{fields['protocol_type']}:{protocol}:{fields['generation']}:")


@pytest.mark.parametrize(
    "dump", dump_files(), ids=lambda p: f"{p.parent.parent.name}/{p.parent.name}/{p.name}"
)
def test_segment_agrees_with_kafkas_dump(dump: Path) -> None:
    segment = segment_for(dump)
    expected: list[DumpedRecord] = read_dump(dump)
    records: list[DecodedRecord] = []
    errors: list[DecodeError] = []
    with fs.ReadOnlyFile(segment) as source:
        for item in decode_segment(source, file=str(segment)):
            (errors if isinstance(item, DecodeError) else records).append(item)
    # damage is where Kafka's own dump flags it: an entry it prints with `isvalid: false` (we
    # read it too, and report its CRC), or past the last entry it could print (it stops there)
    flagged = invalid_positions(dump)
    last = max((k.position or 0 for k in expected), default=-1)
    for error in errors:
        assert error.position in flagged or error.position > last, error
    assert {e.position for e in errors if isinstance(e, ChecksumError)} == flagged
    assert [r.record.offset for r in records] == [k.offset for k in expected]
    era_json = (
        "keysize" in expected[0].fields and "valuesize" in expected[0].fields if expected else False
    )
    for ours, kafka in zip(records, expected, strict=True):
        assert ours.batch.position == kafka.position
        marker = kafka.fields.get("endTxnMarker")
        if marker is not None:
            assert ours.control is not None and ours.control.type == marker.lower()
            continue
        if ours.record.value is None:
            assert kafka.payload is None
            continue
        assert kafka.key == key_text(ours, era_json)
        assert kafka.payload is not None
        check_payload(ours, kafka.payload, era_json)
