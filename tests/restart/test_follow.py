"""--follow: a file appended in steps (by the fake clock's sleep, so no real sleeping),
rotated by rename, truncated in place; a partial last line waits for its newline."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

from offsets_auditor.restart.fold import ProgressFold
from offsets_auditor.restart.follow import LineFeeder, LineFollower, Update, follow_progress
from offsets_auditor.restart.progress import fold_lines
from tests.restart.kafka_lines import CLEAN, read_lines, unclean_restart_39


class StepClock:
    """A clock whose ``sleep`` advances time and runs the next step (e.g. appends a chunk)."""

    def __init__(self, steps: list[Callable[[], None]]) -> None:
        self.now = 0.0
        self.steps = list(steps)
        self.slept: list[float] = []

    def monotonic(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)
        self.now += seconds
        if self.steps:
            self.steps.pop(0)()

    @property
    def done(self) -> bool:
        return not self.steps


def _append(path: Path, data: bytes) -> Callable[[], None]:
    def step() -> None:
        with path.open("ab") as f:
            f.write(data)

    return step


def _chunks(data: bytes, n: int) -> list[bytes]:
    size = len(data) // n + 1
    return [data[i : i + size] for i in range(0, len(data), size)]


def _run(path: Path, clock: StepClock, interval: float = 5.0) -> list[Update]:
    updates: list[Update] = []
    with LineFollower(path, chunk_bytes=4096) as follower:
        follow_progress(
            follower,
            LineFeeder(ProgressFold()),
            clock=clock,
            interval=interval,
            on_update=updates.append,
            should_stop=lambda _u: clock.done,
        )
    return updates


def test_appended_in_steps_matches_one_shot(tmp_path: Path) -> None:
    data = CLEAN["2.3.0"].read_bytes()
    path = tmp_path / "server.log"
    path.write_bytes(b"")
    chunks = _chunks(data, 9)  # cut mid-line on purpose
    clock = StepClock([_append(path, c) for c in chunks])
    updates = _run(path, clock)
    assert clock.slept == [5.0] * len(chunks), "the injected clock did the sleeping"
    final = updates[-1].progress
    expected = fold_lines(read_lines(CLEAN["2.3.0"]))
    assert final.to_dict() == expected.to_dict()
    loaded = [u.progress.coordinator_partitions_loaded for u in updates]
    assert loaded == sorted(loaded), "progress only moves forward while the file grows"
    assert updates[-1].lines_read == data.count(b"\n")


def test_no_growth_means_no_reprint_and_idle_time(tmp_path: Path) -> None:
    path = tmp_path / "server.log"
    lines = unclean_restart_39([("t-0", [0, 1])])
    path.write_text("\n".join(lines[:3]) + "\n")
    clock = StepClock([lambda: None, lambda: None, _append(path, (lines[3] + "\n").encode())])
    updates = _run(path, clock, interval=2.0)
    assert [u.number for u in updates] == [1, 2]
    assert updates[1].idle_seconds == 0.0
    assert updates[1].lines_read == 4


def test_partial_line_waits_for_newline(tmp_path: Path) -> None:
    path = tmp_path / "server.log"
    line = b"[2026-11-21 08:36:19,766] INFO Loading logs. (kafka.log.LogManager)"
    path.write_bytes(line[:20])
    with LineFollower(path) as follower:
        assert list(follower.poll()) == []
        _append(path, line[20:] + b"\r\n")()
        assert list(follower.poll()) == [line]


def test_rotation_by_rename(tmp_path: Path) -> None:
    """log4j rolls server.log to server.log.1 and starts a new one: the rest of the old file
    is read, then the new file from its start."""
    path = tmp_path / "server.log"
    lines = unclean_restart_39([("__consumer_offsets-0", [0]), ("t-0", [0, 5])])
    half = len(lines) // 2
    path.write_text("\n".join(lines[: half - 2]) + "\n")

    def rotate() -> None:
        with path.open("a") as f:  # written to the old file just before it rolls
            f.write("\n".join(lines[half - 2 : half]) + "\n")
        os.rename(path, tmp_path / "server.log.1")
        path.write_text("\n".join(lines[half:]) + "\n")

    clock = StepClock([rotate])
    updates = _run(path, clock)
    assert updates[-1].progress.to_dict() == fold_lines(lines).to_dict()
    assert updates[-1].lines_read == len(lines)


def test_truncation_in_place(tmp_path: Path) -> None:
    """logrotate copytruncate: the file shrinks under us and is read again from its start; a
    new startup in it is the one reported."""
    path = tmp_path / "server.log"
    first = read_lines(CLEAN["2.3.0"])
    second = unclean_restart_39([("t-0", [0])])
    path.write_text("\n".join(first) + "\n")

    def truncate_and_restart() -> None:
        with path.open("r+") as f:
            f.truncate(0)
        path.write_text("\n".join(second[:4]) + "\n")

    clock = StepClock([truncate_and_restart])
    updates = _run(path, clock)
    assert updates[-1].progress.to_dict() == fold_lines(first + second[:4]).to_dict()
    assert updates[-1].progress.phase == "loading-logs"
    assert updates[-1].progress.startups_seen == 2, "one stream: both startups were seen"


def test_missing_file_is_waited_for(tmp_path: Path) -> None:
    path = tmp_path / "server.log"
    lines = unclean_restart_39([("t-0", [0])])
    clock = StepClock([lambda: None, _append(path, ("\n".join(lines) + "\n").encode())])
    updates = _run(path, clock)
    assert updates[0].progress.phase == "no-startup-seen"
    assert updates[-1].progress.to_dict() == fold_lines(lines).to_dict()
