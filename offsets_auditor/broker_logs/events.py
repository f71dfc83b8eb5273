"""What the broker's log cleaner reports, one typed event per log4j record.

``at`` is the record's timestamp (the broker's local clock, no zone), ``place`` where the
record starts. ``thread`` is the N of ``kafka-log-cleaner-thread-N``; ``cleaner`` the N of
"Cleaner N:", the same number (``new Cleaner(id = threadId, ...)``, 0.9.0.1 to 3.9
``LogCleaner.scala``; 4.x ``LogCleaner.java``). Partitions are ``topic-N`` (0.9's
``[topic,N]`` is rewritten so).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from offsets_auditor.broker_logs.records import Place


@dataclass(frozen=True, slots=True)
class Failure:
    """An exception as log4j printed it: its class, its message (``None`` when it has none),
    and the first lines of its stack trace."""

    exception: str
    message: str | None
    stack: tuple[str, ...] = ()

    @property
    def text(self) -> str:
        """``class: message``, as the first line of the trace reads."""
        return self.exception if self.message is None else f"{self.exception}: {self.message}"


@dataclass(frozen=True, slots=True)
class CleanerStarting:
    """``LogCleaner.startup``: "Starting the log cleaner" (broker start, or 1.1+ a dynamic
    change of the cleaner's config, which restarts the threads)."""

    at: datetime
    place: Place


@dataclass(frozen=True, slots=True)
class CleanerShuttingDown:
    """``LogCleaner.shutdown``: "Shutting down the log cleaner."."""

    at: datetime
    place: Place


@dataclass(frozen=True, slots=True)
class ThreadStarting:
    at: datetime
    place: Place
    thread: int


@dataclass(frozen=True, slots=True)
class ThreadShuttingDown:
    """``ShutdownableThread.shutdown``/``initiateShutdown``: "Shutting down"."""

    at: datetime
    place: Place
    thread: int


@dataclass(frozen=True, slots=True)
class ThreadStopped:
    """ "Stopped": printed when the thread's loop ends, after a death as after a shutdown."""

    at: datetime
    place: Place
    thread: int


@dataclass(frozen=True, slots=True)
class ThreadDied:
    """ "Error due to": the thread's loop ended on an exception; the thread is gone until the
    broker restarts (``ShutdownableThread.run``)."""

    at: datetime
    place: Place
    thread: int
    failure: Failure


@dataclass(frozen=True, slots=True)
class CleaningBegun:
    at: datetime
    place: Place
    cleaner: int
    partition: str


@dataclass(frozen=True, slots=True)
class OffsetMapRange:
    """ "Building offset map for log P for N segments in offset range [start, end)."."""

    at: datetime
    place: Place
    cleaner: int
    partition: str
    segments: int
    start: int
    end: int


@dataclass(frozen=True, slots=True)
class OffsetMapComplete:
    at: datetime
    place: Place
    cleaner: int
    partition: str


@dataclass(frozen=True, slots=True)
class BuffersGrown:
    at: datetime
    place: Place
    cleaner: int
    from_bytes: int
    to_bytes: int


@dataclass(frozen=True, slots=True)
class SegmentOverflow:
    """2.0+: "Caught segment overflow error during cleaning": the segment is split and the
    cleaning aborted (``LogCleaningAbortedException``)."""

    at: datetime
    place: Place
    cleaner: int
    message: str


@dataclass(frozen=True, slots=True)
class CleaningStats:
    """The banner ``recordStats`` prints after a cleaning. Sizes in MB (2^20 bytes, printed to
    0.1), times in seconds (to 0.1); ``utilization`` is a fraction. ``dirty_end`` is the
    broker's second number: the first dirty offset again in 0.10.2.0 to 2.5.x, which print
    it before assigning the end (``LogCleaner.scala`` ``cleanOrSleep``/``cleanLog``)."""

    at: datetime
    place: Place
    thread: int
    partition: str
    dirty_start: int
    dirty_end: int
    mb_read: float
    seconds: float
    mb_per_second: float
    indexed_mb: float | None
    index_seconds: float | None
    utilization: float | None
    cleaned_mb: float | None
    clean_seconds: float | None
    start_mb: float | None
    start_messages: int | None
    end_mb: float | None
    end_messages: int | None


@dataclass(frozen=True, slots=True)
class DelayedPartitions:
    """2.3+: "Cleanable partitions: C, Delayed partitions: D, max delay: M"."""

    at: datetime
    place: Place
    cleanable: int
    delayed: int
    max_delay_ms: int


@dataclass(frozen=True, slots=True)
class InvalidMessages:
    """ "Found N invalid messages during compaction."."""

    at: datetime
    place: Place
    count: int


@dataclass(frozen=True, slots=True)
class MarkedUncleanable:
    """2.1+: "Unexpected exception thrown when cleaning log L. Marking its partition (P) as
    uncleanable" with the exception; the partition is skipped until the broker restarts."""

    at: datetime
    place: Place
    thread: int | None
    partition: str
    log: str
    failure: Failure | None


@dataclass(frozen=True, slots=True)
class CleaningAborted:
    """``LogCleanerManager.abortCleaning``/``abortAndPauseCleaning`` (a truncation, a
    deletion, a replica moving): the cleaning in progress is dropped without a banner."""

    at: datetime
    place: Place
    partition: str
    paused: bool


@dataclass(frozen=True, slots=True)
class CleaningResumed:
    at: datetime
    place: Place
    partition: str


@dataclass(frozen=True, slots=True)
class FirstDirtyReset:
    """The checkpoint was below the log start (or, 2.6+, beyond the log end) and the cleaner
    starts over from the log start."""

    at: datetime
    place: Place
    partition: str | None
    log_start: int
    checkpoint: int


@dataclass(frozen=True, slots=True)
class LogDirFailed:
    """1.0+: an ``IOException`` while cleaning took the log dir offline."""

    at: datetime
    place: Place
    partition: str
    log_dir: str


CleanerEvent = (
    CleanerStarting
    | CleanerShuttingDown
    | ThreadStarting
    | ThreadShuttingDown
    | ThreadStopped
    | ThreadDied
    | CleaningBegun
    | OffsetMapRange
    | OffsetMapComplete
    | BuffersGrown
    | SegmentOverflow
    | CleaningStats
    | DelayedPartitions
    | InvalidMessages
    | MarkedUncleanable
    | CleaningAborted
    | CleaningResumed
    | FirstDirtyReset
    | LogDirFailed
)
