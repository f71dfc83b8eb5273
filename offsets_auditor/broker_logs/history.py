"""The cleaner's events folded into what happened: cleanings, thread lives, uncleanable marks.

A *cleaning* is one ``Cleaner.clean`` of one partition by one thread: "Beginning cleaning",
"Building offset map ... in offset range [start, end)", then the statistics banner (it
completed), "Error due to" (the thread died, up to 2.0.x any exception; later an ``Error``),
"Marking its partition ... as uncleanable" (2.1+), an abort, or nothing before the next
start of the cleaner (interrupted) or the end of the log (open). Up to 0.10.0 one cleaning is
one pass of the offset map over the whole dirty section; from 0.10.1 a partition whose dirty
section does not fit the map is cleaned several times in a row, one pass each.

A *run* is the cleaner from one "Starting the log cleaner" to the next: its threads, which
died (with the exception) and which stopped. Uncleanable marks live in the broker's memory
(``LogCleanerManager.uncleanablePartitions``, 2.1+) until the broker restarts; a dynamic change
of the cleaner's config (1.1+ ``LogCleaner.reconfigure``) also prints "Starting the log
cleaner" but keeps them: :func:`uncleanable_since` takes the broker's start times from
``server.log`` when it has them.
"""

from __future__ import annotations

import heapq
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from enum import StrEnum

from offsets_auditor.broker_logs import events as ev
from offsets_auditor.broker_logs.records import Place


class CleaningEnd(StrEnum):
    COMPLETED = "completed"
    THREAD_DIED = "thread-died"
    MARKED_UNCLEANABLE = "marked-uncleanable"
    ABORTED = "aborted"
    LOG_DIR_FAILED = "log-dir-failed"
    #: the cleaner was shut down or started again before this cleaning said how it ended
    INTERRUPTED = "interrupted"
    #: still under way where the log ends
    OPEN = "open"


@dataclass(frozen=True, slots=True)
class Cleaning:
    """One cleaning of ``partition`` by ``thread``. ``map_start``/``map_end`` are the range
    the broker logged for the offset map, ``[start, end)``; ``stats`` the banner (completed
    cleanings only); ``failure`` the exception that ended it."""

    thread: int
    partition: str
    begun_at: datetime
    place: Place
    end: CleaningEnd = CleaningEnd.OPEN
    ended_at: datetime | None = None
    map_segments: int | None = None
    map_start: int | None = None
    map_end: int | None = None
    map_complete_at: datetime | None = None
    buffers_grown_to: int | None = None
    stats: ev.CleaningStats | None = None
    failure: ev.Failure | None = None

    @property
    def elapsed_seconds(self) -> float | None:
        """From "Beginning cleaning" to the line that ended it (milliseconds resolution)."""
        if self.ended_at is None:
            return None
        return (self.ended_at - self.begun_at).total_seconds()


@dataclass(frozen=True, slots=True)
class ThreadLife:
    """One cleaner thread in one run: ``died`` with the exception, or ``stopped_at`` after a
    shutdown; alive when neither."""

    thread: int
    started_at: datetime | None
    place: Place | None
    died_at: datetime | None = None
    died_place: Place | None = None
    died: ev.Failure | None = None
    #: the partition it was cleaning when it died (its last "Beginning cleaning")
    died_cleaning: str | None = None
    stopped_at: datetime | None = None

    @property
    def alive(self) -> bool:
        return self.died is None and self.stopped_at is None


@dataclass(frozen=True, slots=True)
class UncleanableMark:
    partition: str
    at: datetime
    place: Place
    log: str
    failure: ev.Failure | None
    thread: int | None


@dataclass(frozen=True, slots=True)
class CleanerRun:
    """The cleaner from one "Starting the log cleaner" (``started_at`` ``None``: the log
    begins inside a run) to its shutdown (``shut_down_at``) or the next start."""

    started_at: datetime | None
    place: Place | None
    threads: tuple[ThreadLife, ...]
    shut_down_at: datetime | None
    cleanings: tuple[Cleaning, ...]
    uncleanable: tuple[UncleanableMark, ...]

    @property
    def alive(self) -> tuple[int, ...]:
        return tuple(t.thread for t in self.threads if t.alive) if self.shut_down_at is None else ()

    @property
    def dead(self) -> tuple[ThreadLife, ...]:
        return tuple(t for t in self.threads if t.died is not None)


@dataclass(frozen=True, slots=True)
class CleanerHistory:
    runs: tuple[CleanerRun, ...]
    resets: tuple[ev.FirstDirtyReset, ...] = ()
    as_of: datetime | None = None

    @property
    def cleanings(self) -> tuple[Cleaning, ...]:
        return tuple(c for r in self.runs for c in r.cleanings)

    @property
    def last_run(self) -> CleanerRun | None:
        return self.runs[-1] if self.runs else None

    def cleanings_of(self, partition: str) -> tuple[Cleaning, ...]:
        return tuple(c for c in self.cleanings if c.partition == partition)

    def last_completed(self, partition: str) -> Cleaning | None:
        done = [c for c in self.cleanings_of(partition) if c.end is CleaningEnd.COMPLETED]
        return done[-1] if done else None

    def by_thread(self, run: CleanerRun | None = None) -> dict[int, tuple[Cleaning, ...]]:
        """Each thread's cleanings in ``run`` (default: the last), in order."""
        run = run if run is not None else self.last_run
        out: dict[int, list[Cleaning]] = {}
        for cleaning in run.cleanings if run is not None else ():
            out.setdefault(cleaning.thread, []).append(cleaning)
        return {t: tuple(c) for t, c in out.items()}


def merged(*streams: Iterable[ev.CleanerEvent]) -> Iterable[ev.CleanerEvent]:
    """Events of several logs (``log-cleaner.log`` and, 3.5-3.9, ``server.log`` for the
    threads' lines) in time order; each stream must be in time order already."""
    return heapq.merge(*streams, key=lambda e: e.at)


@dataclass
class _RunState:
    started_at: datetime | None
    place: Place | None
    threads: dict[int, ThreadLife] = field(default_factory=dict)
    shut_down_at: datetime | None = None
    cleanings: list[Cleaning] = field(default_factory=list)
    open: dict[int, int] = field(default_factory=dict)  # thread -> index in cleanings
    uncleanable: list[UncleanableMark] = field(default_factory=list)

    def close(self, thread: int, end: CleaningEnd, at: datetime | None, **more: object) -> None:
        index = self.open.pop(thread, None)
        if index is not None:
            self.cleanings[index] = replace(self.cleanings[index], end=end, ended_at=at, **more)  # type: ignore[arg-type]

    def close_partition(
        self, partition: str, end: CleaningEnd, at: datetime, **more: object
    ) -> None:
        for thread, index in list(self.open.items()):
            if self.cleanings[index].partition == partition:
                self.close(thread, end, at, **more)

    def current(self, thread: int) -> Cleaning | None:
        index = self.open.get(thread)
        return self.cleanings[index] if index is not None else None

    def update(self, thread: int, **more: object) -> None:
        index = self.open.get(thread)
        if index is not None:
            self.cleanings[index] = replace(self.cleanings[index], **more)  # type: ignore[arg-type]

    def life(self, thread: int) -> ThreadLife:
        if thread not in self.threads:
            self.threads[thread] = ThreadLife(thread, None, None)
        return self.threads[thread]

    def frozen(self) -> CleanerRun:
        return CleanerRun(
            self.started_at,
            self.place,
            tuple(self.threads[t] for t in sorted(self.threads)),
            self.shut_down_at,
            tuple(self.cleanings),
            tuple(self.uncleanable),
        )


def fold(events: Iterable[ev.CleanerEvent]) -> CleanerHistory:
    """The history ``events`` (in time order) tell."""
    runs: list[CleanerRun] = []
    run = _RunState(None, None)
    resets: list[ev.FirstDirtyReset] = []
    last: datetime | None = None
    for e in events:
        last = e.at
        if isinstance(e, ev.CleanerStarting):
            for thread in list(run.open):
                run.close(thread, CleaningEnd.INTERRUPTED, e.at)
            if run.started_at is not None or run.threads or run.cleanings:
                runs.append(run.frozen())
            run = _RunState(e.at, e.place)
        elif isinstance(e, ev.CleanerShuttingDown):
            run.shut_down_at = e.at
            for thread in list(run.open):
                run.close(thread, CleaningEnd.INTERRUPTED, e.at)
        elif isinstance(e, ev.ThreadStarting):
            run.threads[e.thread] = ThreadLife(e.thread, e.at, e.place)
        elif isinstance(e, ev.ThreadDied):
            cleaning = run.current(e.thread)
            run.threads[e.thread] = replace(
                run.life(e.thread),
                died_at=e.at,
                died_place=e.place,
                died=e.failure,
                died_cleaning=cleaning.partition if cleaning is not None else None,
            )
            run.close(e.thread, CleaningEnd.THREAD_DIED, e.at, failure=e.failure)
        elif isinstance(e, ev.ThreadStopped):
            life = run.life(e.thread)
            if life.died is None:
                run.threads[e.thread] = replace(life, stopped_at=e.at)
        elif isinstance(e, ev.CleaningBegun):
            if e.cleaner in run.open:
                run.close(e.cleaner, CleaningEnd.INTERRUPTED, e.at)
            run.cleanings.append(Cleaning(e.cleaner, e.partition, e.at, e.place))
            run.open[e.cleaner] = len(run.cleanings) - 1
        elif isinstance(e, ev.OffsetMapRange):
            run.update(e.cleaner, map_segments=e.segments, map_start=e.start, map_end=e.end)
        elif isinstance(e, ev.OffsetMapComplete):
            run.update(e.cleaner, map_complete_at=e.at)
        elif isinstance(e, ev.BuffersGrown):
            run.update(e.cleaner, buffers_grown_to=e.to_bytes)
        elif isinstance(e, ev.CleaningStats):
            run.close(e.thread, CleaningEnd.COMPLETED, e.at, stats=e)
        elif isinstance(e, ev.MarkedUncleanable):
            run.uncleanable.append(
                UncleanableMark(e.partition, e.at, e.place, e.log, e.failure, e.thread)
            )
            if e.thread is not None and run.current(e.thread) is not None:
                run.close(e.thread, CleaningEnd.MARKED_UNCLEANABLE, e.at, failure=e.failure)
            else:
                run.close_partition(
                    e.partition, CleaningEnd.MARKED_UNCLEANABLE, e.at, failure=e.failure
                )
        elif isinstance(e, ev.CleaningAborted):
            run.close_partition(e.partition, CleaningEnd.ABORTED, e.at)
        elif isinstance(e, ev.SegmentOverflow):
            run.close(e.cleaner, CleaningEnd.ABORTED, e.at)
        elif isinstance(e, ev.LogDirFailed):
            run.close_partition(e.partition, CleaningEnd.LOG_DIR_FAILED, e.at)
        elif isinstance(e, ev.FirstDirtyReset):
            resets.append(e)
    if run.started_at is not None or run.threads or run.cleanings:
        runs.append(run.frozen())
    return CleanerHistory(tuple(runs), tuple(resets), last)


def uncleanable_since(
    history: CleanerHistory, broker_starts: Sequence[datetime] = ()
) -> dict[str, UncleanableMark]:
    """The partitions marked uncleanable and not forgotten since: each with its FIRST mark
    since the broker's last start (``broker_starts``, from ``server.log``; without them, the
    last "Starting the log cleaner"). A later mark of the same partition (after a restart) is
    the one kept when the earlier one was forgotten. A mark made once the cleaner was shutting
    down is left out: the cleaning the shutdown waited for failed on the broker's own stopping
    (a real 2.3.0 broker: "IllegalStateException: Kafka scheduler is not running." from
    ``Log.asyncDeleteSegment``: 2.3.0 ``KafkaServer.shutdown`` stops ``kafkaScheduler`` before
    ``logManager``, whose shutdown stops the cleaner), and the mark, in memory only, ends with
    the broker a moment later."""
    boundary: datetime | None
    if broker_starts:
        boundary = max(broker_starts)
    else:
        run = history.last_run
        boundary = run.started_at if run is not None else None
    found: dict[str, UncleanableMark] = {}
    for run in history.runs:
        for mark in run.uncleanable:
            if boundary is not None and mark.at < boundary:
                continue
            if run.shut_down_at is not None and mark.at >= run.shut_down_at:
                continue
            found.setdefault(mark.partition, mark)
    return found
