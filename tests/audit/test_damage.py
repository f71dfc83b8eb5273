"""Damaged bytes in an offsets partition, on real segments: a copy of the 2.3.0 `multi-pass`
log dir (seven segments in __consumer_offsets-1, cleaner never ran) with one spot damaged the
way disks and crashes damage them. Each spot is one finding, saying what it does to the
cleaner (the emulated pass fails there with the exception of the version), the coordinator's
load and log recovery."""

from __future__ import annotations

import json
import shutil
import struct
from pathlib import Path

import pytest

from offsets_auditor.cli.main import main
from tests.support.synthetic_partitions import Entry, Partition, write_partition

FIXTURE = Path(__file__).parent.parent / "fixtures" / "kafka-2.3.0" / "multi-pass"
PARTITION = "__consumer_offsets-1"
#: the third of seven segments: neither the first nor the active one
MIDDLE = "00000000000000039300.log"
ACTIVE = "00000000000000117600.log"


def entry_starts(data: bytes) -> list[int]:
    starts, pos = [], 0
    while pos + 12 <= len(data):
        starts.append(pos)
        pos += 12 + struct.unpack_from(">i", data, pos + 8)[0]
    return starts


@pytest.fixture
def log_dir(tmp_path: Path) -> Path:
    copy = tmp_path / "kafka-logs"
    shutil.copytree(FIXTURE / "kafka-logs", copy)
    return copy


def damage(log_dir: Path, segment: str, change: str) -> int:
    """Damage ``segment`` of the partition; returns the byte position of the damage."""
    path = log_dir / PARTITION / segment
    data = bytearray(path.read_bytes())
    starts = entry_starts(bytes(data))
    if change == "zero-tail":  # a power loss: the last ~4 KiB never reached the disk
        at = next(s for s in reversed(starts) if s <= len(data) - 4096)
        data[at:] = bytes(len(data) - at)
    elif change == "truncated":  # cut in the middle of the last entry
        at = starts[-1]
        del data[at + 40 :]
    elif change == "crc":  # one bit of a commit timestamp flipped: the CRC no longer matches
        middle = len(starts) // 2
        at = starts[middle]
        data[starts[middle + 1] - 2] ^= 0x01  # the last record's value ends 1 byte before
    else:
        raise ValueError(change)
    path.write_bytes(bytes(data))
    return at


def audit(log_dir: Path, capsys: pytest.CaptureFixture[str], *extra: str) -> dict:
    main(["audit", str(log_dir), "--json", *extra])
    return json.loads(capsys.readouterr().out)


def at_spot(report: dict, position: int) -> list[dict]:
    return [
        f
        for f in report["findings"]
        if f["partition"] == PARTITION and f["position"] == position and f["file"]
    ]


def partition(report: dict) -> dict:
    return next(p for p in report["partitions"] if p["name"] == PARTITION)


@pytest.mark.parametrize(
    ("version", "outcome", "message"),
    [
        ("2.3.0", "blocked", "Record size 0 is less than the minimum record overhead (14)"),
        ("2.0.0", "thread-death", "Record size 0 is less than the minimum record overhead (14)"),
        ("1.1.0", "thread-death", "Record size is less than the minimum record overhead (14)"),
        ("0.10.1.0", "thread-death", "Message found with corrupt size (0) in shallow iterator"),
    ],
)
def test_a_zero_filled_tail_stops_the_cleaner_and_the_load(
    log_dir: Path, capsys: pytest.CaptureFixture[str], version: str, outcome: str, message: str
) -> None:
    at = damage(log_dir, MIDDLE, "zero-tail")
    report = audit(log_dir, capsys, "--kafka-version", version)
    [finding] = at_spot(report, at)
    assert finding["kind"] == "corrupt-segment" and finding["severity"] == "critical"
    assert finding["file"].endswith(MIDDLE)
    detail = finding["detail"]
    assert f"pass 1 fails here with '{message}'" in detail
    loaded = (
        "Error in loading offsets from [__consumer_offsets,1]"
        if version < "0.10.2"
        else "Error loading offsets from __consumer_offsets-1"
    )
    assert loaded in detail
    p = partition(report)
    assert p["cleaner"]["outcome"] == outcome
    assert message in p["cleaner"]["reason"]
    assert p["cleaner"]["passes"] == 0


@pytest.mark.parametrize(
    ("version", "message"),
    [
        ("2.3.0", "Batch size {size} < buffer size 1000012, but not processed for log segment"),
        ("1.1.0", "This log contains a message larger than maximum allowable size of 1000012."),
    ],
)
def test_a_partial_entry_mid_log_stops_the_cleaner(
    log_dir: Path, capsys: pytest.CaptureFixture[str], version: str, message: str
) -> None:
    segment = log_dir / PARTITION / MIDDLE
    data = segment.read_bytes()
    size = 12 + struct.unpack_from(">i", data, entry_starts(data)[-1] + 8)[0]
    at = damage(log_dir, MIDDLE, "truncated")
    report = audit(log_dir, capsys, "--kafka-version", version)
    [finding] = at_spot(report, at)
    assert finding["kind"] == "corrupt-segment"
    assert message.format(size=size) in finding["detail"]
    assert message.format(size=size) in partition(report)["cleaner"]["reason"]


def test_a_flipped_bit_is_read_as_the_broker_reads_it(
    log_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """No reader of the broker checks CRCs: the verdict and the recovered groups are those of
    the undamaged log, and the spot is one warning."""
    clean = audit(log_dir, capsys, "--kafka-version", "2.3.0")
    at = damage(log_dir, MIDDLE, "crc")
    report = audit(log_dir, capsys, "--kafka-version", "2.3.0")
    [finding] = at_spot(report, at)
    assert finding["kind"] == "checksum-mismatch" and finding["severity"] == "warning"
    assert "reads it as is (it checks no CRC)" in finding["detail"]
    assert "loads its records as they are" in finding["detail"]
    for key in ("passes", "pass_end_offsets", "retained_records", "outcome"):
        assert partition(report)["cleaner"][key] == partition(clean)["cleaner"][key]
    assert len(report["groups"]) == len(clean["groups"])


def test_a_partial_tail_of_the_active_segment_is_normal(
    log_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    clean = audit(log_dir, capsys, "--kafka-version", "2.3.0")
    at = damage(log_dir, ACTIVE, "truncated")
    report = audit(log_dir, capsys, "--kafka-version", "2.3.0")
    [finding] = at_spot(report, at)
    assert finding["kind"] == "truncated-tail" and finding["severity"] == "info"
    assert partition(report)["cleaner"]["outcome"] == partition(clean)["cleaner"]["outcome"]


def test_recovery_says_what_it_would_truncate(
    log_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Past the recovery point and without the clean-shutdown marker, the next start truncates
    the log at the damage and deletes every later segment."""
    (log_dir / ".kafka_cleanshutdown").unlink()
    (log_dir / "recovery-point-offset-checkpoint").write_text("0\n0\n")
    at = damage(log_dir, MIDDLE, "crc")
    report = audit(log_dir, capsys, "--kafka-version", "2.3.0")
    [finding] = at_spot(report, at)
    assert (
        f"log recovery truncates the log at byte {at} of this segment and deletes the 4 later"
        " segment(s) (offsets 58,950 to" in finding["detail"]
    )


def test_the_groups_command_reports_the_spot_once(
    log_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    at = damage(log_dir, MIDDLE, "zero-tail")
    main(["groups", str(log_dir), "--json", "--kafka-version", "2.3.0"])
    report = json.loads(capsys.readouterr().out)
    spots = [f for f in report["findings"] if f.get("position") == at]
    assert [f["kind"] for f in spots] == ["corrupt-segment"]
    assert "a clean that reaches this segment fails" in spots[0]["detail"]


@pytest.mark.parametrize(
    ("odd", "message"),
    [
        (
            3,
            "Invalid value size found for end control record key. Must have at least 4 bytes,"
            " but found only 1",
        ),
        (5, "Invalid version found for control record: -1. May indicate data corruption"),
    ],
)
def test_a_control_key_kafka_cannot_parse_stops_the_cleaner(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], odd: int, message: str
) -> None:
    """Kafka's onControlBatchRead parses the first record's key of every control batch it
    reads (ControlRecordType.parse): a key it refuses throws, in the cleaner as in the load."""
    spec = Partition(
        (
            (
                Entry("v2", ((1, False), (2, False))),
                Entry("odd-control", odd=odd),
                Entry("v2", ((1, False),)),
            ),
            (Entry("v2", ((3, False),)),),
            (),
        ),
        (0, 0, 0),
    )
    log_dir = write_partition(tmp_path, spec)
    data = (log_dir / "__consumer_offsets-0" / f"{0:020d}.log").read_bytes()
    control_at = entry_starts(data)[1]
    report = audit(log_dir, capsys, "--kafka-version", "2.3.0")
    [finding] = [f for f in report["findings"] if f["position"] == control_at]
    assert finding["kind"] == "corrupt-record" and finding["severity"] == "critical"
    assert f"pass 1 fails here with '{message}'" in finding["detail"]
    cleaner = next(p for p in report["partitions"] if p["name"] == "__consumer_offsets-0")
    assert cleaner["cleaner"]["outcome"] == "blocked"
    assert message in cleaner["cleaner"]["reason"]
