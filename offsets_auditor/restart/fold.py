"""The fold's accumulator: a ``server.log``'s events applied one at a time, in log order
(:class:`ProgressFold`); ``restart.progress`` reads a :class:`~.progress.RestartProgress` off
it whenever wanted."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from datetime import datetime

from offsets_auditor.restart.coordinator_loads import CoordinatorLoad
from offsets_auditor.restart.log_dir_totals import LogDirTotals
from offsets_auditor.restart.log_lines import (
    PATTERNS,
    BrokerShuttingDown,
    BrokerStarted,
    BrokerStarting,
    CoordinatorLoadFailed,
    CoordinatorLoadFinished,
    CoordinatorLoadStarted,
    Event,
    IndexRebuilt,
    KafkaVersionSeen,
    LinePattern,
    LogDirAnnounced,
    LogLoaded,
    LogsLoadingComplete,
    LogsLoadingStarted,
    SegmentRecovering,
    event_of,
    looks_timestamped,
    might_be_event,
    parse_header,
)


def iso_time(at: datetime | None) -> str | None:
    """A log line's time as the reports show it (milliseconds, local as the broker logged)."""
    return None if at is None else at.isoformat(sep=" ", timespec="milliseconds")


@dataclass(frozen=True, slots=True)
class IndexRebuild:
    at: datetime
    partition: str
    file: str
    reason: str

    def to_dict(self) -> dict[str, object]:
        return {
            "at": iso_time(self.at),
            "partition": self.partition,
            "file": self.file,
            "reason": self.reason,
        }


@dataclass
class ProgressFold:
    """The accumulator of the fold. ``apply`` one event at a time (in log order), read a
    :class:`RestartProgress` with ``snapshot`` whenever wanted; :func:`fold` does both."""

    kafka_version: str | None = None
    totals: LogDirTotals | None = None
    patterns: tuple[LinePattern, ...] = PATTERNS
    #: when the server log was last modified (epoch ms, the caller's clock), for telling a
    #: broker that stopped without a line (``startup_state.stopped_phase``); ``None``: not known
    log_mtime_ms: int | None = None
    last_timestamped_line: str | None = None
    startups_seen: int = 0
    kafka_version_seen: str | None = None
    startup_at: datetime | None = None
    as_of: datetime | None = None
    broker_started_at: datetime | None = None
    shutting_down_at: datetime | None = None
    loading_started_at: datetime | None = None
    loading_completed_at: datetime | None = None
    loading_duration_ms: int | None = None
    loaded: dict[str, LogLoaded] = field(default_factory=dict)
    announced_by_dir: dict[str, int] = field(default_factory=dict)
    clean_by_dir: dict[str, bool] = field(default_factory=dict)
    announced_logs: int | None = None
    recovering: list[SegmentRecovering] = field(default_factory=list)
    unflushed_by_partition: dict[str, int] = field(default_factory=dict)
    index_rebuilds: list[IndexRebuild] = field(default_factory=list)
    loads: list[CoordinatorLoad] = field(default_factory=list)

    @property
    def _in_loading_window(self) -> bool:
        return self.loading_completed_at is None

    def feed_line(self, text: str) -> None:
        """One line of the log, in order: parsed only if it may be an event."""
        if looks_timestamped(text):
            self.last_timestamped_line = text
        if not might_be_event(text):
            return
        line = parse_header(text)
        if line is not None:
            event = event_of(line, self.patterns)
            if event is not None:
                self.apply(event)

    def saw_line(self, at: datetime) -> None:
        """Any timestamped line, event or not: moves ``as_of`` (the fold's "now")."""
        if self.as_of is None or at > self.as_of:
            self.as_of = at

    def apply(self, event: Event) -> None:
        self.saw_line(event.at)
        if isinstance(event, BrokerStarting):
            startups = self.startups_seen
            fresh = ProgressFold(self.kafka_version, self.totals, self.patterns, self.log_mtime_ms)
            fresh.last_timestamped_line = self.last_timestamped_line
            self.__dict__.update(fresh.__dict__)
            self.startups_seen = startups + 1
            self.startup_at = event.at
            self.as_of = event.at
        elif isinstance(event, BrokerStarted):
            self.broker_started_at = event.at
        elif isinstance(event, BrokerShuttingDown):
            self.shutting_down_at = event.at
        elif isinstance(event, KafkaVersionSeen):
            self.kafka_version_seen = event.version
        elif isinstance(event, LogsLoadingStarted):
            self.loading_started_at = event.at
        elif isinstance(event, LogsLoadingComplete):
            if self.loading_completed_at is None:
                self.loading_completed_at = event.at
                self.loading_duration_ms = event.duration_ms
                if event.logs is not None:
                    self.announced_logs = event.logs
        elif isinstance(event, LogDirAnnounced):
            if self._in_loading_window:
                if event.logs is not None:
                    self.announced_by_dir[event.log_dir] = event.logs
                if event.clean_shutdown is not None:
                    self.clean_by_dir[event.log_dir] = event.clean_shutdown
        elif isinstance(event, LogLoaded):
            if self._in_loading_window:
                self.loaded[event.partition] = event
                if event.log_dir is not None and event.total_in_dir is not None:
                    self.announced_by_dir.setdefault(event.log_dir, event.total_in_dir)
        elif isinstance(event, SegmentRecovering):
            if self._in_loading_window:
                self.recovering.append(event)
                if event.unflushed is not None:
                    self.unflushed_by_partition[event.partition] = event.unflushed
        elif isinstance(event, IndexRebuilt):
            if self._in_loading_window:
                self.index_rebuilds.append(
                    IndexRebuild(event.at, event.partition, event.file, event.reason.value)
                )
        elif isinstance(event, CoordinatorLoadStarted):
            self.loads.append(CoordinatorLoad(event.partition, event.at, event.scheduled))
        elif isinstance(event, CoordinatorLoadFinished | CoordinatorLoadFailed):
            index = self._open_load(event.partition)
            if index is None:
                self.loads.append(CoordinatorLoad(event.partition, None, None))
                index = len(self.loads) - 1
            load = self.loads[index]
            if isinstance(event, CoordinatorLoadFinished):
                load = replace(
                    load,
                    finished_at=event.at,
                    load_ms=event.load_ms,
                    scheduler_ms=event.scheduler_ms,
                    bytes=event.bytes,
                    bytes_source=None if event.bytes is None else "broker log",
                )
            else:
                load = replace(load, finished_at=event.at, failed=True)
            self.loads[index] = load

    def _open_load(self, partition: int) -> int | None:
        for index in range(len(self.loads) - 1, -1, -1):
            load = self.loads[index]
            if load.partition == partition:
                return None if load.done else index
        return None
