"""The fold: counts equal what the broker's log says (checked with independent greps), at the
end of a log and cut anywhere in the middle of a restart; load times equal the milliseconds the
broker printed; only the last startup counts; garbage is ignored; ETAs follow their basis."""

from __future__ import annotations

import re
from datetime import datetime
from pathlib import Path

import pytest

from offsets_auditor.restart.log_dir_totals import read_log_dir_totals
from offsets_auditor.restart.progress import RestartProgress, fold_lines
from tests.restart.kafka_lines import (
    CLEAN,
    coordinator_finished_ms,
    coordinator_started,
    count_startups,
    grep,
    last_startup,
    loading_window,
    read_lines,
    real_unclean_logs,
    unclean_restart_09,
    unclean_restart_39,
)

PARTITIONS = [
    ("__consumer_offsets-0", [0, 500]),
    ("orders-0", [0]),
    ("__consumer_offsets-1", [0, 480, 960]),
    ("payments-0", [0, 100]),
]
SYNTHETIC = {
    "0.9.0.1": unclean_restart_09(PARTITIONS),
    "3.9.0": unclean_restart_39(PARTITIONS),
}


def _logs() -> list[tuple[str, str, list[str]]]:
    """(id, version, lines) of every log the count checks run on."""
    logs = [(f"real-clean-{v}", v, read_lines(p)) for v, p in CLEAN.items()]
    logs += [(f"real-unclean-{v}", v, read_lines(p)) for v, p, _ in real_unclean_logs()]
    logs += [(f"source-format-{v}", v, lines) for v, lines in SYNTHETIC.items()]
    return logs


LOGS = _logs()


def assert_counts_match_log(progress: RestartProgress, lines: list[str]) -> None:
    """Every count against an independent grep of the same lines."""
    window = loading_window(lines)
    assert progress.startups_seen == count_startups(lines)
    printed = [
        re.search(r"Logs loading complete in (\d+) ms|Loaded \d+ logs in (\d+)ms", line)
        for line in last_startup(lines)
    ]
    took = [int(m.group(1) or m.group(2)) for m in printed if m is not None]
    assert progress.loading_duration_ms == (took[0] if took else None)
    assert progress.partitions_loaded == len(grep(window, "Completed load of"))
    assert progress.segments_recovered == len(grep(window, "Recovering unflushed segment"))
    rebuilt = grep(window, "Found a corrupted index file") + [
        line for line in grep(window, "Could not find ") if "index file" in line
    ]
    assert progress.index_files_rebuilt == len(rebuilt)
    finished = coordinator_finished_ms(lines)
    done = [(ld.partition, ld.load_ms) for ld in progress.coordinator_loads if ld.done]
    assert done == finished, "load times are the milliseconds the broker printed"
    started = coordinator_started(lines)
    assert [ld.partition for ld in progress.coordinator_loads if ld.started_at] == started
    assert progress.coordinator_in_progress == tuple(
        sorted(set(started) - {p for p, _ in finished})
    )


@pytest.mark.parametrize(("name", "version", "lines"), LOGS, ids=[x[0] for x in LOGS])
def test_whole_log(name: str, version: str, lines: list[str]) -> None:
    for kafka_version in (version, None):
        progress = fold_lines(lines, kafka_version=kafka_version)
        assert_counts_match_log(progress, lines)
    assert progress.loading_completed_at is not None
    assert progress.phase in ("started", "shutting-down")


def _cuts(lines: list[str]) -> dict[str, int]:
    """Cut points (number of lines kept) a restart can be caught at."""
    start = len(lines) - len(last_startup(lines))
    cuts = {"just after 'starting'": start + 1}
    loading = [i for i, line in enumerate(lines) if i >= start and "Loading logs" in line]
    if loading:
        cuts["just after 'Loading logs'"] = loading[0] + 1
    recovering = [
        i for i, line in enumerate(lines) if i >= start and "Recovering unflushed segment" in line
    ]
    if recovering:
        cuts["halfway through recovery"] = recovering[len(recovering) // 2] + 1
    finished = [
        i for i, line in enumerate(lines) if i >= start and "Finished loading offsets" in line
    ]
    if finished:
        cuts["before the last coordinator partition finished"] = finished[-1]
        cuts["after the first coordinator partition finished"] = finished[0] + 1
    return cuts


MID = [
    (name, version, lines, cut, n)
    for name, version, lines in LOGS
    for cut, n in _cuts(lines).items()
]


@pytest.mark.parametrize(
    ("name", "version", "lines", "cut", "keep"), MID, ids=[f"{m[0]}: {m[3]}" for m in MID]
)
def test_mid_restart(name: str, version: str, lines: list[str], cut: str, keep: int) -> None:
    prefix = lines[:keep]
    progress = fold_lines(prefix, kafka_version=version)
    assert_counts_match_log(progress, prefix)
    window_open = any("Loading logs" in line for line in last_startup(prefix)) and not any(
        "Logs loading complete" in line or "] INFO Loaded " in line for line in last_startup(prefix)
    )
    if window_open:
        assert progress.phase == "loading-logs"
    if cut == "before the last coordinator partition finished":
        assert progress.coordinator_in_progress, "a coordinator partition is still loading"
        assert progress.phase == "loading-coordinator"


def test_mid_recovery_against_log_dir_totals(tmp_path: Path) -> None:
    """With LOGDIR, totals come from the directory: partitions, and segments from each recovery
    point on; the ETA extrapolates the rate so far and says so."""
    log_dir = tmp_path / "kafka-logs"
    for name, bases in PARTITIONS:
        (log_dir / name).mkdir(parents=True)
        for base in bases:
            (log_dir / name / f"{base:020d}.log").write_bytes(b"x" * 1000)
            (log_dir / name / f"{base:020d}.index").write_bytes(b"")
    # no .kafka_cleanshutdown; no recovery-point checkpoint: every segment is recovered
    totals = read_log_dir_totals([log_dir])
    lines = SYNTHETIC["0.9.0.1"]
    recovering = [i for i, line in enumerate(lines) if "Recovering unflushed segment" in line]
    prefix = lines[: recovering[3] + 1]
    progress = fold_lines(prefix, kafka_version="0.9.0.1", totals=totals)
    assert progress.partitions_total == len(PARTITIONS)
    assert progress.segments_to_recover == sum(len(b) for _, b in PARTITIONS)
    assert progress.segments_recovered == 4
    by_phase = {e.phase: e for e in progress.estimates}
    segments = by_phase["segment-recovery"]
    assert segments.remaining == progress.segments_to_recover - 4
    assert segments.seconds is not None and segments.rate_per_second is not None
    assert segments.seconds == pytest.approx(segments.remaining / segments.rate_per_second)
    assert "segments" in segments.basis and "log dir listing" in segments.basis
    assert by_phase["log-loading"].remaining == len(PARTITIONS) - progress.partitions_loaded


def test_coordinator_eta_per_byte(tmp_path: Path) -> None:
    """Coordinator ETA: ms per byte of the finished loads (broker-printed ms less scheduler
    wait) times the bytes of the partitions left, sizes from LOGDIR."""
    log_dir = tmp_path / "kafka-logs"
    sizes = {"__consumer_offsets-0": 4000, "__consumer_offsets-1": 10000}
    for name, size in sizes.items():
        (log_dir / name).mkdir(parents=True)
        (log_dir / name / f"{0:020d}.log").write_bytes(b"x" * size)
    lines = SYNTHETIC["3.9.0"]
    finished = [i for i, line in enumerate(lines) if "Finished loading offsets" in line]
    prefix = lines[: finished[0] + 1]  # __consumer_offsets-0 done, -1 still loading
    progress = fold_lines(prefix, totals=read_log_dir_totals([log_dir]))
    (first,) = [ld for ld in progress.coordinator_loads if ld.done]
    assert first.bytes == sizes["__consumer_offsets-0"]
    estimate = {e.phase: e for e in progress.estimates}["coordinator-loading"]
    assert estimate.unit == "bytes" and estimate.remaining == sizes["__consumer_offsets-1"]
    ms_per_byte = (first.load_ms or 0) / sizes["__consumer_offsets-0"]
    assert estimate.seconds == pytest.approx(sizes["__consumer_offsets-1"] * ms_per_byte / 1000)
    assert "ms/byte" in estimate.basis
    # log loading is over: what it recovered is the total, whatever LOGDIR says now
    assert progress.segments_to_recover == progress.segments_recovered
    assert progress.segments_recovered == len(grep(prefix, "Recovering unflushed segment"))


def test_coordinator_eta_without_sizes_uses_mean_time() -> None:
    lines = SYNTHETIC["0.9.0.1"]
    finished = [i for i, line in enumerate(lines) if "Finished loading offsets" in line]
    progress = fold_lines(lines[: finished[0] + 2])  # -1 started, not finished
    estimate = {e.phase: e for e in progress.estimates}["coordinator-loading"]
    (done,) = coordinator_finished_ms(lines[: finished[0] + 1])
    assert estimate.unit == "partitions" and estimate.remaining == 1
    assert estimate.seconds == pytest.approx(done[1] / 1000)
    assert "mean" in estimate.basis


def test_unknown_totals_are_unknown() -> None:
    """A 0.9 log announces no totals: while it loads, without LOGDIR, they are unknown."""
    lines = read_lines(CLEAN["0.9.0.1"])
    loading = next(i for i, line in enumerate(lines) if "Loading logs." in line)
    progress = fold_lines(lines[: loading + 1])
    assert progress.phase == "loading-logs"
    assert progress.partitions_total is None and progress.segments_to_recover is None
    assert progress.to_dict()["log_loading"]["partitions_total"] is None  # type: ignore[index]


def test_totals_announced_by_the_broker_3x() -> None:
    lines = SYNTHETIC["3.9.0"]
    loading = [i for i, line in enumerate(lines) if "Completed load of" in line]
    progress = fold_lines(lines[: loading[0] + 1])
    assert progress.partitions_total == len(PARTITIONS)
    assert progress.partitions_total_source is not None
    assert "broker log" in progress.partitions_total_source


def test_last_startup_of_several() -> None:
    first = read_lines(CLEAN["2.3.0"])
    second = SYNTHETIC["0.9.0.1"]
    third = read_lines(CLEAN["0.9.0.1"])
    lines = first + second + third
    progress = fold_lines(lines)
    assert progress.startups_seen == count_startups(lines)
    assert_counts_match_log(progress, lines)
    alone = fold_lines(third)
    assert progress.to_dict() | {"startups_seen": 0} == alone.to_dict() | {"startups_seen": 0}
    # and a restart cut short in the middle of loading after a full run
    cut = lines[: len(first) + 5]
    progress = fold_lines(cut)
    assert progress.phase == "loading-logs"
    assert progress.startup_at == datetime(2026, 11, 21, 10, 0, 0)


def test_garbage_and_non_utf8_lines_are_ignored() -> None:
    raw = CLEAN["2.3.0"].read_bytes().splitlines()
    noisy: list[bytes] = []
    for n, line in enumerate(raw):
        noisy.append(line)
        if n % 7 == 0:
            noisy.append(b"\xff\xfe\x00garbage \xc3( Finished loading offsets")
            noisy.append(b"[2026-11-21 08:36:19,246] INFO \xe9\x80 Loading logs (x.Y)")
    clean = fold_lines(line.decode("utf-8", errors="replace") for line in raw)
    dirty = fold_lines(line.decode("utf-8", errors="replace") for line in noisy)
    assert dirty.to_dict() == clean.to_dict()


UNCLEAN = real_unclean_logs()


@pytest.mark.parametrize(
    ("version", "log", "log_dir"), UNCLEAN, ids=[f"real-unclean-{u[0]}" for u in UNCLEAN]
)
def test_real_unclean_restart_against_its_log_dir(version: str, log: Path, log_dir: Path) -> None:
    """The log dir as it was before the restart predicts what the real broker did: every
    partition directory was loaded, and the segments it recovered are exactly those from each
    partition's recovery point on (the floor segment and later)."""
    lines = read_lines(log)
    progress = fold_lines(lines, kafka_version=version, totals=read_log_dir_totals([log_dir]))
    assert_counts_match_log(progress, lines)
    assert progress.partitions_total == sum(1 for p in log_dir.iterdir() if p.is_dir())
    assert progress.partitions_loaded == progress.partitions_total
    assert progress.segments_to_recover == progress.segments_recovered
    assert progress.segments_recovered == len(
        grep(loading_window(lines), "Recovering unflushed segment")
    )
    for cut, keep in _cuts(lines).items():
        prefix = fold_lines(
            lines[:keep], kafka_version=version, totals=read_log_dir_totals([log_dir])
        )
        assert_counts_match_log(prefix, lines[:keep])
        if cut == "halfway through recovery":
            estimates = {e.phase: e for e in prefix.estimates}
            assert estimates["log-loading"].seconds is not None
            assert estimates["segment-recovery"].remaining == (
                progress.segments_to_recover - prefix.segments_recovered
            )
