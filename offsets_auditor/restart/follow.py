"""``tail -F`` over a broker's ``server.log``, with the clock injected.

:class:`LineFollower` hands out the complete lines appended to a file since the last
:meth:`~LineFollower.poll`, following it across the two ways log4j's appenders (and logrotate)
replace a log:

- rotation by rename (``DailyRollingFileAppender``, ``RollingFileAppender``, logrotate
  ``create``): the open file is read to its end first (``pread`` on the descriptor we hold still
  reads the renamed file), then the new file at the path is read from its start;
- truncation in place (logrotate ``copytruncate``): the path's file is shorter than our position,
  so it is read again from its start.

The path's file is told from the one held open by its first bytes (a fingerprint, as Vector's
``file`` source does by default), since :mod:`offsets_auditor.logdir.fs` offers no inode: log4j
lines open with a millisecond timestamp, so two logs do not share their first line. All reads go
through :class:`offsets_auditor.logdir.fs.ReadOnlyFile` (``O_RDONLY``, ``pread``).

:func:`follow_progress` is the loop: poll, fold, report, sleep on the injected :class:`Clock`.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from offsets_auditor.logdir import fs
from offsets_auditor.restart.fold import ProgressFold
from offsets_auditor.restart.progress import RestartProgress, snapshot

#: Bytes compared to tell a new file at the path from the one held open.
FINGERPRINT_BYTES = 64
CHUNK_BYTES = 1 << 20


class Clock(Protocol):
    def monotonic(self) -> float: ...

    def sleep(self, seconds: float) -> None: ...


class SystemClock:
    def monotonic(self) -> float:
        return time.monotonic()

    def sleep(self, seconds: float) -> None:
        time.sleep(seconds)


class LineFollower:
    """Complete lines (``bytes``, without the newline) of a growing, rotating file.

    A last line without its newline is held back until the newline arrives; :meth:`flush`
    hands it out (for a one-shot read of a log cut mid-line). ``notes`` records rotations and
    truncations seen.
    """

    def __init__(self, path: Path, *, chunk_bytes: int = CHUNK_BYTES) -> None:
        self.path = path
        self.chunk_bytes = chunk_bytes
        self.notes: list[str] = []
        self._file: fs.ReadOnlyFile | None = None
        self._position = 0
        self._fingerprint = b""
        self._partial = b""

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None

    def __enter__(self) -> LineFollower:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def poll(self) -> Iterator[bytes]:
        """The lines completed since the last poll; a missing file yields nothing."""
        if self._file is None:
            self._file = self._open()
            if self._file is None:
                return
        yield from self._drain(self._file)
        replacement = self._replacement()
        if replacement is not None:
            self.close()
            self._file = replacement
            self._position = 0
            self._fingerprint = b""
            self._partial = b""
            yield from self._drain(replacement)

    def flush(self) -> Iterator[bytes]:
        """The held-back last line, if the file ends without a newline."""
        if self._partial:
            partial, self._partial = self._partial, b""
            yield partial

    def _open(self) -> fs.ReadOnlyFile | None:
        try:
            return fs.ReadOnlyFile(self.path)
        except OSError:
            return None

    def _drain(self, file: fs.ReadOnlyFile) -> Iterator[bytes]:
        while True:
            chunk = file.read_at(self._position, self.chunk_bytes)
            if not chunk:
                return
            if self._position < FINGERPRINT_BYTES:
                self._fingerprint = file.read_at(0, FINGERPRINT_BYTES)
            self._position += len(chunk)
            lines = (self._partial + chunk).split(b"\n")
            self._partial = lines.pop()
            for line in lines:
                yield line[:-1] if line.endswith(b"\r") else line

    def _replacement(self) -> fs.ReadOnlyFile | None:
        """The file now at the path if it is not the one we hold (rotated or truncated)."""
        fresh = self._open()
        if fresh is None:  # renamed away, new one not created yet: keep reading the old one
            return None
        if fresh.size < self._position:
            self.notes.append(f"{self.path}: truncated or replaced by a shorter file; reading anew")
            return fresh
        if self._fingerprint and fresh.read_at(0, len(self._fingerprint)) != self._fingerprint:
            self.notes.append(f"{self.path}: rotated (a new file is at the path); reading it")
            return fresh
        fresh.close()
        return None


@dataclass
class LineFeeder:
    """Decodes raw lines (bytes that are not UTF-8 become U+FFFD and match nothing) and feeds
    them to a :class:`ProgressFold`, counting them."""

    fold: ProgressFold
    lines: int = 0

    def feed(self, raw: bytes) -> None:
        self.lines += 1
        self.fold.feed_line(raw.decode("utf-8", errors="replace"))


@dataclass(frozen=True)
class Update:
    """One report of :func:`follow_progress`: the progress, how many lines were read in all,
    and seconds since the file last grew (by the injected clock)."""

    number: int
    progress: RestartProgress
    lines_read: int
    idle_seconds: float


def follow_progress(
    follower: LineFollower,
    feeder: LineFeeder,
    *,
    clock: Clock,
    interval: float,
    on_update: Callable[[Update], None],
    should_stop: Callable[[Update | None], bool],
) -> int:
    """Poll, fold and report until ``should_stop`` (asked after each poll) says so.

    A report is made after the first poll and after every poll that read lines. Returns the
    number of reports made.
    """
    reports = 0
    last_growth = clock.monotonic()
    last: Update | None = None
    while True:
        before = feeder.lines
        for raw in follower.poll():
            feeder.feed(raw)
        now = clock.monotonic()
        if feeder.lines != before:
            last_growth = now
        if feeder.lines != before or reports == 0:
            reports += 1
            last = Update(reports, snapshot(feeder.fold), feeder.lines, now - last_growth)
            on_update(last)
        if should_stop(last):
            return reports
        clock.sleep(interval)
