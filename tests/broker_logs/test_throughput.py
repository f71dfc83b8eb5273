"""The cleaner's measured pace against the commit rate its segments show, on real brokers:
``falling-behind`` (one thread throttled to 8 KiB/s of I/O under ~20 KiB/s of commits) falls
behind; ``uncleanable`` (an unthrottled thread, ~40 KiB/s of commits) keeps up."""

from __future__ import annotations

from pathlib import Path

from offsets_auditor.broker_logs.throughput import (
    CleanerPace,
    CommitRate,
    KeepingUp,
    SegmentWrite,
    all_writes,
    bytes_per_offset,
    cleaner_pace,
    commit_rate,
    falling_behind_findings,
    keeping_up,
)
from offsets_auditor.versions import KafkaVersion
from tests.broker_logs.support import FIXTURES, emulate, history


def measured(fixture: Path, log_dir: str) -> KeepingUp:
    audit = emulate(fixture / log_dir, fixture / "broker-server.properties", "2.3.0")
    writes = all_writes((p.scan, p.emulated.first_dirty) for p in audit.partitions)
    commits = commit_rate(writes)
    run = history(fixture / "log-cleaner.log").last_run
    assert commits is not None and run is not None
    checkpoint = audit.log_dir.cleaner_checkpoint
    offsets = checkpoint.offsets() if checkpoint is not None else {}
    pace = cleaner_pace(
        run,
        KafkaVersion.parse("2.3.0"),
        offset_bytes=bytes_per_offset(writes),
        checkpoints={f"{topic}-{n}": offset for (topic, n), offset in offsets.items()},
    )
    assert pace is not None
    return keeping_up(pace, commits)


def test_a_throttled_cleaner_falls_behind_a_heavy_committer() -> None:
    fixture = FIXTURES / "kafka-2.3.0/falling-behind"
    result = measured(fixture, "kafka-logs")
    assert not result.keeps_up
    # the broker's own numbers: its banners' indexed MB over their seconds, below the commits
    assert result.pace.alive == 1
    assert result.capacity_bytes_per_second < result.commit.bytes_per_second
    # the throttle is what it was set to: log.cleaner.io.max.bytes.per.second=8192, and the
    # dirty bytes a second of cleaning consumes cannot exceed what it reads
    assert 0.5 * 8192 < result.pace.consumed_bytes_per_second < 1.5 * 8192
    (finding,) = falling_behind_findings(result)
    assert finding.kind == "cleaner-falling-behind"
    assert "falls behind" in finding.detail


def test_an_unthrottled_cleaner_keeps_up() -> None:
    fixture = FIXTURES / "kafka-2.3.0/uncleanable"
    result = measured(fixture, "kafka-logs-after")
    assert result.keeps_up, result.detail
    assert result.capacity_bytes_per_second > 2 * result.commit.bytes_per_second
    assert result.pace.busy_fraction < 0.5  # idle most of the time: nothing waits for it
    assert falling_behind_findings(result) == []


def test_no_live_thread_falls_behind_any_commit() -> None:
    pace = CleanerPace(1, 1.0e6, 1.0, 1.0, 10.0, threads=1, alive=0)
    assert not keeping_up(pace, CommitRate(1.0, 1.0, 0, 1000)).keeps_up


def test_commit_rate_sums_the_partitions_own_spans() -> None:
    """Two partitions written at 1 KB/s each over different stretches: 2 KB/s, each segment's
    bytes spread over its span."""
    writes = [
        SegmentWrite("p-0", 10_000, 0, 10_000),
        SegmentWrite("p-1", 5_000, 20_000, 25_000),
    ]
    rate = commit_rate(writes)
    assert rate is not None and round(rate.bytes_per_second) == 2000
    # the last 2.5 s only: p-1's last half
    recent = commit_rate(writes, window_ms=2_500)
    assert recent is not None and round(recent.bytes_per_second) == 1000
