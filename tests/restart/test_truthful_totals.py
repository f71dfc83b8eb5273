"""restart-progress says what is true of the last startup, whatever state the log dirs are in
when they are read (issue 7, from a live-broker trial):

- "segments recovered: 132 of 0" after a start that recovered and then shut down: the log dirs,
  read afterwards, hold the clean-shutdown marker the shutdown wrote;
- "0 of 118" after a clean start: the running broker had deleted the marker;
- "phase: started" for a broker killed with SIGKILL: its log just ends.

Every case is built from real broker lines (the fixtures' server logs, cut where the situation
needs; lines in the formats of Kafka's source from ``kafka_lines``) and log dirs laid out as the
broker leaves them.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from offsets_auditor.cli.main import main
from offsets_auditor.restart.fold import ProgressFold
from offsets_auditor.restart.log_dir_totals import read_log_dir_totals
from offsets_auditor.restart.progress import RestartProgress, snapshot
from offsets_auditor.restart.startup_state import STALE_MS
from tests.restart.kafka_lines import (
    CLEAN,
    FIXTURES,
    grep,
    loading_window,
    read_lines,
    ts,
    unclean_restart_09,
    unclean_restart_39,
)

NOW_MS = 1_800_000_000_000
K23 = FIXTURES / "kafka-2.3.0"


def mirror(source: Path, target: Path, *, marker: bool, checkpoint_age_ms: int | None) -> Path:
    """``target`` laid out like the log dir ``source``: its partition dirs and segment files
    (empty), the clean-shutdown marker or not, and a replication-offset-checkpoint last
    written ``checkpoint_age_ms`` before NOW_MS."""
    target.mkdir()
    for entry in source.iterdir():
        if entry.is_dir():
            (target / entry.name).mkdir()
            for f in entry.glob("*.log"):
                (target / entry.name / f.name).write_bytes(b"")
    if marker:
        (target / ".kafka_cleanshutdown").write_bytes(b"")
    if checkpoint_age_ms is not None:
        checkpoint = target / "replication-offset-checkpoint"
        checkpoint.write_text("0\n0\n")
        when = (NOW_MS - checkpoint_age_ms) / 1000
        os.utime(checkpoint, (when, when))
    return target


def fold(lines: list[str], log_dir: Path | None, log_age_ms: int | None = None) -> RestartProgress:
    totals = read_log_dir_totals([log_dir], read_at_ms=NOW_MS) if log_dir else None
    accumulator = ProgressFold(None, totals)
    accumulator.log_mtime_ms = None if log_age_ms is None else NOW_MS - log_age_ms
    for line in lines:
        accumulator.feed_line(line)
    return snapshot(accumulator)


def until(lines: list[str], needle: str) -> list[str]:
    """The lines before the first one holding ``needle``."""
    return lines[: next(i for i, line in enumerate(lines) if needle in line)]


@pytest.mark.parametrize("version", ["0.9.0.1", "2.3.0"])
def test_recovered_then_shut_down_is_n_of_n(version: str) -> None:
    """The real restarts after kill -9 recovered segments, then shut down cleanly: the log dirs
    read afterwards (kafka-logs-after) hold the marker. The total is what the log recovered."""
    fixture = FIXTURES / f"kafka-{version}" / "unclean-shutdown"
    lines = read_lines(fixture / "server-restart.log")
    progress = fold(lines, fixture / "kafka-logs-after")
    recovered = len(grep(loading_window(lines), "Recovering unflushed segment"))
    assert recovered > 0
    assert (progress.segments_recovered, progress.segments_to_recover) == (recovered, recovered)
    assert progress.segments_to_recover_source is not None
    assert progress.segments_to_recover_source.startswith("broker log (log loading complete")
    assert read_log_dir_totals([fixture / "kafka-logs-after"]).segments_to_recover == 0


def test_shut_down_while_loading_counts_what_was_recovered(tmp_path: Path) -> None:
    """A start that fails during log loading (2.3.0's own shutdown line after the fatal one):
    the shutdown writes no marker for a dir it never finished loading; what counts is what
    the log recovered."""
    fixture = K23 / "unclean-shutdown"
    lines = until(read_lines(fixture / "server-restart.log"), "Recovering unflushed segment 4431")
    lines += [
        f"{ts(0)[:-1]}] FATAL [KafkaServer id=0] Fatal error during KafkaServer startup. Prepare"
        " to shutdown (kafka.server.KafkaServer)",
        f"{ts(0)[:-1]}] INFO [KafkaServer id=0] shutting down (kafka.server.KafkaServer)",
    ]
    log_dir = mirror(fixture / "kafka-logs", tmp_path / "d", marker=True, checkpoint_age_ms=0)
    progress = fold(lines, log_dir)
    recovered = len(grep(lines, "Recovering unflushed segment"))
    assert progress.phase == "shutting-down"
    assert (progress.segments_recovered, progress.segments_to_recover) == (recovered, recovered)
    assert "shut down before log loading completed" in (progress.segments_to_recover_source or "")


def test_a_clean_start_recovers_nothing_whatever_the_running_broker_left(tmp_path: Path) -> None:
    """A real 2.3.0 clean start, the broker still running (the log cut before its shutdown): it
    deleted the marker after loading (2.3.0 LogManager.loadLogs), so the dirs look unclean."""
    lines = until(read_lines(CLEAN["2.3.0"]), "shutting down (kafka.server.KafkaServer)")
    source = K23 / "small-gzip" / "kafka-logs"
    log_dir = mirror(source, tmp_path / "d", marker=False, checkpoint_age_ms=2_000)
    progress = fold(lines, log_dir, log_age_ms=1_000)
    assert (progress.segments_recovered, progress.segments_to_recover) == (0, 0)
    assert progress.phase == "started"
    would = read_log_dir_totals([log_dir]).segments_to_recover
    assert would > 0  # what the old report gave as the total ("0 of 118")
    assert any(f"would re-read {would:,} segments" in note for note in progress.notes)


def test_a_broker_killed_with_sigkill_is_not_running(tmp_path: Path) -> None:
    """The real 2.3.0 log before `kill -9`: it ends after the broker started. The log dirs say
    the broker stopped writing its high-watermark checkpoint."""
    fixture = K23 / "unclean-shutdown"
    lines = read_lines(fixture / "server-before-kill.log")
    assert not grep(lines, "shutting down (kafka.server.KafkaServer)")
    stale = 10 * 60_000
    log_dir = mirror(fixture / "kafka-logs", tmp_path / "d", marker=False, checkpoint_age_ms=stale)
    progress = fold(lines, log_dir, log_age_ms=stale)
    assert progress.phase == "not-running"
    assert any("stopped without shutting down" in note for note in progress.notes)
    # the same log while the broker runs: it rewrites the checkpoint every 5 s
    live = mirror(fixture / "kafka-logs", tmp_path / "live", marker=False, checkpoint_age_ms=3_000)
    assert fold(lines, live, log_age_ms=stale).phase == "started"
    # just started and quiet: the checkpoint is old but the log is fresh
    young = mirror(
        fixture / "kafka-logs", tmp_path / "young", marker=False, checkpoint_age_ms=stale
    )
    assert fold(lines, young, log_age_ms=STALE_MS // 2).phase == "started"
    # without LOGDIR the log alone cannot tell, and says so
    alone = fold(lines, None)
    assert alone.phase == "started"
    assert any("SIGKILL leaves no line" in note for note in alone.notes)


def test_a_clean_shutdown_missing_from_the_log_is_stopped(tmp_path: Path) -> None:
    lines = until(read_lines(CLEAN["2.3.0"]), "shutting down (kafka.server.KafkaServer)")
    log_dir = mirror(K23 / "small-gzip" / "kafka-logs", tmp_path / "d", marker=True,
                     checkpoint_age_ms=0)  # fmt: skip
    assert fold(lines, log_dir).phase == "stopped"


def test_while_loading_the_disk_gives_the_total(tmp_path: Path) -> None:
    """Mid-recovery (0.9.0.1 lines): the marker is still where it was at start (0.9 deletes it
    once loading completes) and the recovery points give the total."""
    partitions = [("__consumer_offsets-0", [0, 10, 20]), ("t-0", [0, 10])]
    lines = unclean_restart_09(partitions)
    cut = until(lines, "Recovering unflushed segment 10 in log t-0")
    log_dir = tmp_path / "d"
    for name, bases in partitions:
        (log_dir / name).mkdir(parents=True)
        for base in bases:
            (log_dir / name / f"{base:020d}.log").write_bytes(b"")
    progress = fold(cut, log_dir)
    assert progress.phase == "loading-logs"
    assert progress.segments_to_recover == 5
    assert progress.segments_recovered == len(grep(cut, "Recovering unflushed segment"))


@pytest.mark.parametrize("clean", [True, False])
def test_from_2_8_the_brokers_line_decides_not_the_marker(tmp_path: Path, clean: bool) -> None:
    """2.8.0+ deletes the marker as loading starts (KAFKA-10471), so mid-loading the dir has
    none either way: the broker's per-dir line (3.9 format) says whether it recovers."""
    partitions = [("__consumer_offsets-0", [0, 10, 20]), ("t-0", [0, 10])]
    lines = unclean_restart_39(partitions)
    cut = until(lines, "Recovering unflushed segment 10. 1/2 recovered for t-0")
    if clean:
        cut = [
            line.replace(
                "Recovering 2 logs from /data/kafka-logs since no clean shutdown file was found",
                "Skipping recovery of 2 logs from /data/kafka-logs since clean shutdown file"
                " was found",
            )
            for line in cut
            if "Recovering unflushed" not in line
        ]
    log_dir = tmp_path / "kafka-logs"
    for name, bases in partitions:
        (log_dir / name).mkdir(parents=True)
        for base in bases:
            (log_dir / name / f"{base:020d}.log").write_bytes(b"")
    progress = fold(cut, log_dir)
    assert progress.phase == "loading-logs"
    assert progress.segments_to_recover == (0 if clean else 5)


def test_the_cli_judges_a_killed_broker(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """End to end, with the file times the CLI reads itself."""
    fixture = K23 / "unclean-shutdown"
    log = tmp_path / "server.log"
    log.write_bytes((fixture / "server-before-kill.log").read_bytes())
    old = time.time() - 3600  # the CLI compares with this machine's clock
    os.utime(log, (old, old))
    log_dir = mirror(fixture / "kafka-logs", tmp_path / "d", marker=False, checkpoint_age_ms=0)
    os.utime(log_dir / "replication-offset-checkpoint", (old, old))
    assert main(["restart-progress", "--server-log", str(log), str(log_dir)]) == 0
    out = capsys.readouterr().out
    assert "phase: not-running" in out
    assert "it stopped without shutting down (kill -9, OOM kill, host loss) or hangs" in out
