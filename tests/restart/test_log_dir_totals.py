"""Totals from log dirs: partition dirs, segments from the recovery point on (Kafka's
``logSegments(recoveryPoint, Long.MaxValue)``: floor segment and later), offsets sizes."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from offsets_auditor.restart.log_dir_totals import (
    parse_recovery_points,
    read_log_dir_totals,
    segments_to_recover,
)
from offsets_auditor.versions import KafkaVersion
from tests.restart.kafka_lines import FIXTURES, real_unclean_logs

# (bases, recovery point, segments recovered, why)
FLOOR_CASES = [
    ([], 0, 0, "an empty partition gets a fresh segment and no recovery"),
    ([0], 0, 1, "the active segment holds the recovery point"),
    ([0, 100, 200], 150, 2, "floorKey(150) = 100: segment 100 and 200"),
    ([0, 100, 200], 100, 2, "a recovery point on a base offset: that segment and later"),
    ([0, 100, 200], 0, 3, "recovery point 0 (missing from the checkpoint): everything"),
    ([100, 200], 50, 2, "no segment at or below the point: headMap, every segment"),
    ([0, 100, 200], 10**9, 1, "a point past the end still recovers the active segment"),
]


@pytest.mark.parametrize(("bases", "point", "expected", "why"), FLOOR_CASES)
def test_segments_to_recover(bases: list[int], point: int, expected: int, why: str) -> None:
    assert segments_to_recover(bases, point) == expected, why


def test_parse_recovery_points() -> None:
    text = "0\n2\n__consumer_offsets 3 40000\nt1 0 1\n"
    assert parse_recovery_points(text).points == {"__consumer_offsets-3": 40000, "t1-0": 1}
    assert parse_recovery_points(text).problem is None
    assert parse_recovery_points("").points == {}, "an empty file reads as no entries"


# A checkpoint the broker cannot read: LogManager.loadLogs catches the exception, warns
# "Resetting the recovery checkpoint to 0" and recovers EVERY partition of the dir from 0
# (0.9.0.1 and 2.3.0 core/src/main/scala/kafka/log/LogManager.scala; 3.9.0-rc3 "resetting the
# recovery checkpoint to 0"), even those whose lines were fine.
TORN = [
    # a write torn mid-line: "Malformed line" (0.9.0.1 OffsetCheckpoint.read)
    ("0.9.0.1", "0\n3\n__consumer_offsets 3 40000\nt1 0 1\nt1 1", "Malformed line"),
    # torn after a line: fewer entries than the count says
    ("0.9.0.1", "0\n3\n__consumer_offsets 3 40000\nt1 0 1\n", "Expected 3 entries"),
    ("2.3.0", "0\n3\n__consumer_offsets 3 40000\nt1 0 1\n", "Expected 3 entries in checkpoint"),
    # another version line
    ("2.3.0", "1\n0\n", "Unrecognized version of the checkpoint file"),
]


@pytest.mark.parametrize(("version", "text", "message"), TORN)
def test_a_torn_recovery_checkpoint_recovers_everything_from_0(
    version: str, text: str, message: str
) -> None:
    read = parse_recovery_points(text, version=KafkaVersion.parse(version))
    assert read.points == {}
    assert read.problem is not None and message in read.problem
    assert "recovers every partition from 0" in read.problem


def test_torn_checkpoint_in_a_log_dir(tmp_path: Path) -> None:
    """Three segments each in two partitions; the checkpoint would say t-0 recovers from 100,
    but it is torn, so the broker recovers all six."""
    for name in ("t-0", "t-1"):
        (tmp_path / name).mkdir()
        for base in (0, 100, 200):
            (tmp_path / name / f"{base:020d}.log").write_bytes(b"")
    (tmp_path / "recovery-point-offset-checkpoint").write_text("0\n2\nt 0 150\nt 1")
    totals = read_log_dir_totals([tmp_path], KafkaVersion.parse("2.3.0"))
    assert totals.segments_to_recover == 6
    assert any("Malformed line" in p for p in totals.problems)


def _log_dirs() -> list[Path]:
    dirs = [
        FIXTURES / "kafka-0.9.0.1" / "cleaner-died" / "kafka-logs",
        FIXTURES / "kafka-2.3.0" / "small-gzip" / "kafka-logs",
    ]
    return dirs + [d for _, _, d in real_unclean_logs()]


@pytest.mark.parametrize("log_dir", _log_dirs(), ids=lambda p: str(p.relative_to(FIXTURES)))
def test_real_log_dir_counts(log_dir: Path) -> None:
    """Counts equal a plain os.listdir of the same directory."""
    totals = read_log_dir_totals([log_dir])
    subdirs = [n for n in os.listdir(log_dir) if (log_dir / n).is_dir()]
    assert totals.partition_count == len(subdirs)
    segments = sum(
        1 for d in subdirs for f in os.listdir(log_dir / d) if re.fullmatch(r"\d{20}\.log", f)
    )
    assert totals.segment_count == segments
    offsets = {d for d in subdirs if d.startswith("__consumer_offsets-")}
    assert set(totals.offsets_partition_bytes()) == {int(d.rsplit("-", 1)[1]) for d in offsets}
    for d in offsets:
        size = sum(
            (log_dir / d / f).stat().st_size for f in os.listdir(log_dir / d) if f.endswith(".log")
        )
        assert totals.offsets_partition_bytes()[int(d.rsplit("-", 1)[1])] == size
    clean = (log_dir / ".kafka_cleanshutdown").exists()
    assert totals.clean_shutdown == {str(log_dir): clean}
    if clean:
        assert totals.segments_to_recover == 0


def test_missing_log_dir_is_a_problem_not_an_exception(tmp_path: Path) -> None:
    totals = read_log_dir_totals([tmp_path / "nope"])
    assert totals.partition_count == 0 and totals.problems


def test_unclean_dir_recovers_from_checkpoint(tmp_path: Path) -> None:
    for name, bases in {"t-0": [0, 100, 200], "t-1": [0], "remote-log-index-cache": []}.items():
        (tmp_path / name).mkdir()
        for base in bases:
            (tmp_path / name / f"{base:020d}.log").write_bytes(b"")
    (tmp_path / "recovery-point-offset-checkpoint").write_text("0\n1\nt 0 150\n")
    totals = read_log_dir_totals([tmp_path])
    assert totals.partition_count == 2, "remote-log-index-cache is not a partition (3.x)"
    assert totals.segments_to_recover == 2 + 1  # t-0 from 100 on; t-1 not checkpointed: all
