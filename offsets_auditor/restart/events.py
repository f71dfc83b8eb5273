"""The typed events a broker's ``server.log`` reports about a restart.

Each is one line of the log (see :mod:`.log_lines` for the wordings); ``at`` is the line's
timestamp (the broker's local clock, no zone).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum


@dataclass(frozen=True, slots=True)
class BrokerStarting:
    """The broker process begins its startup: everything after belongs to this startup."""

    at: datetime


@dataclass(frozen=True, slots=True)
class BrokerStarted:
    """The broker finished ``startup()`` (it may still be loading coordinator partitions)."""

    at: datetime


@dataclass(frozen=True, slots=True)
class BrokerShuttingDown:
    """The broker began a (controlled) shutdown: this startup is over."""

    at: datetime


@dataclass(frozen=True, slots=True)
class KafkaVersionSeen:
    at: datetime
    version: str


@dataclass(frozen=True, slots=True)
class LogsLoadingStarted:
    """``LogManager.loadLogs`` began. ``log_dirs`` is the list as printed (2.6+), else ``None``."""

    at: datetime
    log_dirs: str | None


@dataclass(frozen=True, slots=True)
class LogDirAnnounced:
    """How one log dir's loading starts: whether it shut down cleanly (so nothing is
    recovered) and, 3.5+, how many partition dirs it holds (``None`` in 2.8-3.4's wording)."""

    at: datetime
    log_dir: str
    logs: int | None
    clean_shutdown: bool | None


@dataclass(frozen=True, slots=True)
class LogLoaded:
    """One partition's log finished loading (``failed``: 3.3+ "Error while loading logs in").

    ``load_ms`` is the time the broker printed for this partition (0.11+). ``done_in_dir`` and
    ``total_in_dir`` are the broker's own "k/n" progress counter for ``log_dir`` (2.6+).
    """

    at: datetime
    partition: str
    load_ms: int | None = None
    segments: int | None = None
    done_in_dir: int | None = None
    total_in_dir: int | None = None
    log_dir: str | None = None
    failed: bool = False


@dataclass(frozen=True, slots=True)
class SegmentRecovering:
    """ "Recovering unflushed segment": recovery of one segment after an unclean shutdown began.

    3.3+ also prints how many of the partition's unflushed segments were recovered before this
    one (``recovered_before``) out of how many (``unflushed``).
    """

    at: datetime
    partition: str
    base_offset: int
    recovered_before: int | None = None
    unflushed: int | None = None


class IndexRebuildReason(StrEnum):
    CORRUPT = "corrupt"  # "Found a corrupted index file ..."
    MISSING = "missing"  # "Could not find (offset) index file ..."


@dataclass(frozen=True, slots=True)
class IndexRebuilt:
    """The broker found an index file corrupt or missing and rebuilds it from the segment.

    ``file`` is the path the broker printed: the index file (0.9-0.10) or the segment's ``.log``
    file (1.1+). ``partition`` is that file's directory name.
    """

    at: datetime
    partition: str
    file: str
    reason: IndexRebuildReason
    detail: str | None = None


@dataclass(frozen=True, slots=True)
class LogsLoadingComplete:
    """``LogManager.loadLogs`` returned. ``duration_ms`` as printed (0.10.1+), ``logs`` (2.6+)."""

    at: datetime
    duration_ms: int | None = None
    logs: int | None = None


@dataclass(frozen=True, slots=True)
class CoordinatorLoadStarted:
    """Loading of ``__consumer_offsets-<partition>`` into the group coordinator.

    ``scheduled`` is False when the line is printed as the load starts (0.9-0.10: "Loading offsets
    and group metadata from") and True when it is printed as the load is queued on the
    coordinator's single loader thread (0.11+: "Scheduling loading of ...").
    """

    at: datetime
    partition: int
    scheduled: bool
    epoch: int | None = None


@dataclass(frozen=True, slots=True)
class CoordinatorLoadFinished:
    """A coordinator partition is loaded. ``load_ms`` is the broker's number; from 2.6 on it
    counts from scheduling and includes ``scheduler_ms`` spent waiting in the queue. 3.8+ (new
    group coordinator) also prints the ``records`` and ``bytes`` read. ``load_ms`` is ``None``
    only for 3.6's runtime, which printed no time."""

    at: datetime
    partition: int
    load_ms: int | None
    scheduler_ms: int | None = None
    epoch: int | None = None
    records: int | None = None
    bytes: int | None = None


@dataclass(frozen=True, slots=True)
class CoordinatorLoadFailed:
    at: datetime
    partition: int


Event = (
    BrokerStarting
    | BrokerStarted
    | BrokerShuttingDown
    | KafkaVersionSeen
    | LogsLoadingStarted
    | LogDirAnnounced
    | LogLoaded
    | SegmentRecovering
    | IndexRebuilt
    | LogsLoadingComplete
    | CoordinatorLoadStarted
    | CoordinatorLoadFinished
    | CoordinatorLoadFailed
)
