"""A broker log and its rotated files read as one stream: log4j's date and ``.N`` suffixes,
logrotate's ``.gz`` and ``-YYYYMMDD``, and a file that rotates while it is read.

The lines are the real brokers' (their ``log-cleaner.log`` files), cut into the files a
rotation would have left; the reading must give back every line once, in order.
"""

from __future__ import annotations

import gzip
import os
import shutil
from pathlib import Path

from offsets_auditor.broker_logs.files import (
    GZIP_STEP,
    LogRead,
    read_lines,
    read_rotated,
    rotated_set,
)
from offsets_auditor.broker_logs.reading import read_history
from tests.broker_logs.support import FIXTURES

REAL = FIXTURES / "kafka-2.3.0/multi-pass/log-cleaner.log"


def real_lines() -> list[str]:
    return REAL.read_text().splitlines()


def write(path: Path, lines: list[str], *, gz: bool = False) -> None:
    data = "".join(line + "\n" for line in lines).encode()
    path.write_bytes(gzip.compress(data, mtime=0) if gz else data)


def texts(lines: object) -> list[str]:
    return [line.text for line in lines]  # type: ignore[attr-defined]


def test_the_set_is_ordered_oldest_first(tmp_path: Path) -> None:
    names = [
        "log-cleaner.log",
        "log-cleaner.log.1",
        "log-cleaner.log.2.gz",
        "log-cleaner.log.10",
        "log-cleaner.log.2026-11-25-19",
        "log-cleaner.log.2026-11-25-18",
        "log-cleaner.log-20261124.gz",
        "log-cleaner.logs",  # not one of them
        "server.log",
    ]
    for name in names:
        (tmp_path / name).write_text("x\n")
    assert [i.name for i in rotated_set(tmp_path / "log-cleaner.log")] == [
        "log-cleaner.log-20261124.gz",
        "log-cleaner.log.2026-11-25-18",
        "log-cleaner.log.2026-11-25-19",
        "log-cleaner.log.10",
        "log-cleaner.log.2.gz",
        "log-cleaner.log.1",
        "log-cleaner.log",
    ]


def test_a_rotated_set_reads_as_the_whole_log(tmp_path: Path) -> None:
    """logrotate ``compress`` + ``delaycompress``: .2.gz, .1, then the live file."""
    lines = real_lines()
    a, b = len(lines) // 3, 2 * len(lines) // 3
    write(tmp_path / "log-cleaner.log.2.gz", lines[:a], gz=True)
    write(tmp_path / "log-cleaner.log.1", lines[a:b])
    write(tmp_path / "log-cleaner.log", lines[b:])
    read = LogRead()
    assert texts(read_rotated(tmp_path / "log-cleaner.log", read)) == lines
    assert read.files == [
        str(tmp_path / name)
        for name in ("log-cleaner.log.2.gz", "log-cleaner.log.1", "log-cleaner.log")
    ]
    assert not read.problems
    # and the cleaner's history is the same as from the one file
    whole, _ = read_history([REAL])
    split, _ = read_history([tmp_path / "log-cleaner.log"])
    assert [(c.partition, c.map_start, c.end) for c in split.cleanings] == [
        (c.partition, c.map_start, c.end) for c in whole.cleanings
    ]


def test_dated_files_read_in_date_order(tmp_path: Path) -> None:
    lines = real_lines()
    half = len(lines) // 2
    write(tmp_path / "log-cleaner.log.2026-11-21-09", lines[:half])
    write(tmp_path / "log-cleaner.log", lines[half:])
    assert texts(read_rotated(tmp_path / "log-cleaner.log")) == lines


def test_explicit_files_read_as_given_each_whole(tmp_path: Path) -> None:
    lines = real_lines()
    write(tmp_path / "a.log.gz", lines, gz=True)
    found = list(read_lines([tmp_path / "a.log.gz"]))
    assert texts(found) == lines
    # positions are byte positions in the decompressed file
    data = REAL.read_bytes()
    for line in found[:50]:
        assert data[line.position :].startswith(line.text.encode())


def test_a_rename_while_reading_loses_and_repeats_nothing(tmp_path: Path) -> None:
    """log4j's DailyRollingFileAppender mid-read: the live file is renamed, the broker's last
    lines land in it just before, and a new live file starts."""
    lines = real_lines()
    a, b = len(lines) // 3, 2 * len(lines) // 3
    live = tmp_path / "log-cleaner.log"
    write(live, lines[:a])
    reader = read_rotated(live, chunk_bytes=256)
    got = [next(reader).text for _ in range(5)]
    # rotation: more lines appended to the file held open, then renamed; a new file created
    with live.open("a") as f:
        f.write("".join(line + "\n" for line in lines[a:b]))
    live.rename(tmp_path / "log-cleaner.log.2026-11-21-09")
    write(live, lines[b:])
    got += [line.text for line in reader]
    assert got == lines


def test_copytruncate_while_reading_loses_and_repeats_nothing(tmp_path: Path) -> None:
    """logrotate ``copytruncate``: the live file is copied to .1, then cut to 0 in place."""
    lines = real_lines()
    a, b = len(lines) // 3, 2 * len(lines) // 3
    live = tmp_path / "log-cleaner.log"
    write(live, lines[:a])
    reader = read_rotated(live, chunk_bytes=256)
    got = [next(reader).text for _ in range(3)]
    with live.open("a") as f:
        f.write("".join(line + "\n" for line in lines[a:b]))
    shutil.copyfile(live, tmp_path / "log-cleaner.log.1")
    os.truncate(live, 0)
    with live.open("a") as f:
        f.write("".join(line + "\n" for line in lines[b : b + 3]))
    # the rest is read as the cut file is written again
    got += [next(reader).text for _ in range(len(lines[: b + 3]) - 3)]
    assert got == lines[: b + 3]


def test_a_damaged_gzip_is_a_problem_with_its_position(tmp_path: Path) -> None:
    lines = real_lines()
    data = gzip.compress("".join(x + "\n" for x in lines).encode(), mtime=0)
    (tmp_path / "log-cleaner.log.1.gz").write_bytes(data[: len(data) // 2] + b"garbage" * 100)
    write(tmp_path / "log-cleaner.log", lines[:10])
    read = LogRead()
    got = texts(read_rotated(tmp_path / "log-cleaner.log", read))
    assert got[-10:] == lines[:10]  # the live file is read whole after the damaged one
    assert [p.kind for p in read.problems] == ["unreadable-log"]
    assert read.problems[0].file is not None and read.problems[0].file.endswith(".1.gz")
    # placed to within the GZIP_STEP bytes from the position it names
    position = read.problems[0].position
    assert position is not None and position <= len(data) // 2 < position + GZIP_STEP
