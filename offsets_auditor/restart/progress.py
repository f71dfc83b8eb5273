"""Restart progress: the fold of a ``server.log``'s events into one :class:`RestartProgress`.

Only the LAST startup counts: every :class:`~.log_lines.BrokerStarting` starts the fold afresh
(``startups_seen`` says how many there were). The log may end anywhere: a fold of a prefix of
the log is the progress as of that prefix's last line.

What is counted, per the broker's own lines:

- log loading (``LogManager.loadLogs``): partitions loaded (failed ones too, 3.3+), segments
  whose recovery began ("Recovering unflushed segment"), index files rebuilt. Only lines between
  the startup and "Logs loading complete"/"Loaded N logs" count: "Completed load of log" is also
  printed for partitions created later, which are not part of the restart.
- group coordinator loading of ``__consumer_offsets`` partitions, with the milliseconds the
  broker printed. A partition can load more than once in one run (leadership moving back and
  forth); each load is kept.

ETAs are rates of what the log shows so far, extrapolated; each :class:`Estimate` says its
basis in words. Times are those of the log's lines (the broker's local clock): "now" is the
last line's timestamp (``as_of``), never this machine's clock.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace
from datetime import datetime

from offsets_auditor.restart.coordinator_loads import (
    CoordinatorLoad,
    coordinator_estimate,
    latest_done,
)
from offsets_auditor.restart.estimates import Estimate, rate_estimate
from offsets_auditor.restart.fold import IndexRebuild, ProgressFold, iso_time
from offsets_auditor.restart.log_dir_totals import LogDirTotals
from offsets_auditor.restart.log_lines import (
    Event,
    parse_timestamp,
    patterns_for,
)
from offsets_auditor.restart.startup_state import (
    partitions_total_of,
    segments_total_of,
    state_notes,
    stopped_phase,
)
from offsets_auditor.versions import KafkaVersion


@dataclass(frozen=True)
class RestartProgress:
    """How far the last startup in a ``server.log`` has got. ``None`` means unknown."""

    kafka_version: str | None
    kafka_version_seen: str | None
    startups_seen: int
    startup_at: datetime | None
    as_of: datetime | None
    broker_started_at: datetime | None
    shutting_down_at: datetime | None
    phase: str
    loading_started_at: datetime | None
    loading_completed_at: datetime | None
    loading_duration_ms: int | None
    partitions_loaded: int
    partitions_failed: int
    partitions_total: int | None
    partitions_total_source: str | None
    segments_recovered: int
    segments_to_recover: int | None
    segments_to_recover_source: str | None
    index_rebuilds: tuple[IndexRebuild, ...]
    coordinator_loads: tuple[CoordinatorLoad, ...]
    coordinator_partitions_total: int | None
    coordinator_partitions_total_source: str | None
    estimates: tuple[Estimate, ...]
    notes: tuple[str, ...] = ()

    @property
    def loading_elapsed_ms(self) -> int | None:
        """'Loading logs' to its completion by the lines' timestamps (0.9 prints no time)."""
        if self.loading_started_at is None or self.loading_completed_at is None:
            return None
        return round((self.loading_completed_at - self.loading_started_at).total_seconds() * 1000)

    @property
    def index_files_rebuilt(self) -> int:
        return len(self.index_rebuilds)

    @property
    def coordinator_partitions_started(self) -> int:
        return len({load.partition for load in self.coordinator_loads})

    @property
    def coordinator_partitions_loaded(self) -> int:
        return len(latest_done(self.coordinator_loads))

    @property
    def coordinator_in_progress(self) -> tuple[int, ...]:
        latest: dict[int, CoordinatorLoad] = {}
        for load in self.coordinator_loads:
            latest[load.partition] = load
        return tuple(sorted(p for p, load in latest.items() if not load.done))

    def to_dict(self) -> dict[str, object]:
        return {
            "kafka_version": self.kafka_version,
            "kafka_version_seen": self.kafka_version_seen,
            "startups_seen": self.startups_seen,
            "startup_at": iso_time(self.startup_at),
            "as_of": iso_time(self.as_of),
            "broker_started_at": iso_time(self.broker_started_at),
            "shutting_down_at": iso_time(self.shutting_down_at),
            "phase": self.phase,
            "log_loading": {
                "started_at": iso_time(self.loading_started_at),
                "completed_at": iso_time(self.loading_completed_at),
                "duration_ms": self.loading_duration_ms,
                "elapsed_ms_by_timestamps": self.loading_elapsed_ms,
                "partitions_loaded": self.partitions_loaded,
                "partitions_failed": self.partitions_failed,
                "partitions_total": self.partitions_total,
                "partitions_total_source": self.partitions_total_source,
                "segments_recovered": self.segments_recovered,
                "segments_to_recover": self.segments_to_recover,
                "segments_to_recover_source": self.segments_to_recover_source,
                "index_files_rebuilt": self.index_files_rebuilt,
                "index_rebuilds": [r.to_dict() for r in self.index_rebuilds],
            },
            "coordinator_loading": {
                "partitions_started": self.coordinator_partitions_started,
                "partitions_loaded": self.coordinator_partitions_loaded,
                "partitions_total": self.coordinator_partitions_total,
                "partitions_total_source": self.coordinator_partitions_total_source,
                "in_progress": list(self.coordinator_in_progress),
                "loads": [load.to_dict() for load in self.coordinator_loads],
            },
            "estimates": [e.to_dict() for e in self.estimates],
            "notes": list(self.notes),
        }


def snapshot(f: ProgressFold) -> RestartProgress:
    """The progress as of ``f``'s last timestamped line."""
    if f.last_timestamped_line is not None:
        at = parse_timestamp(f.last_timestamped_line)
        if at is not None:
            f.saw_line(at)
    return _snapshot(f)


def fold(
    events: Iterable[Event | None],
    *,
    totals: LogDirTotals | None = None,
    kafka_version: str | None = None,
) -> RestartProgress:
    """The progress of the last startup among ``events`` (``None`` items are skipped)."""
    accumulator = ProgressFold(kafka_version, totals)
    for event in events:
        if event is not None:
            accumulator.apply(event)
    return snapshot(accumulator)


def fold_lines(
    lines: Iterable[str],
    *,
    totals: LogDirTotals | None = None,
    kafka_version: str | None = None,
) -> RestartProgress:
    """Parse and fold ``lines`` of a ``server.log``: ``as_of`` is the last timestamped line."""
    version = None if kafka_version is None else KafkaVersion.parse(kafka_version)
    accumulator = ProgressFold(kafka_version, totals, patterns_for(version))
    for text in lines:
        accumulator.feed_line(text)
    return snapshot(accumulator)


# --- snapshot and estimates -------------------------------------------------------------------


def _with_disk_bytes(f: ProgressFold) -> tuple[CoordinatorLoad, ...]:
    if f.totals is None:
        return tuple(f.loads)
    sizes = f.totals.offsets_partition_bytes()
    return tuple(
        replace(load, bytes=sizes[load.partition], bytes_source="log dir listing")
        if load.bytes is None and load.partition in sizes
        else load
        for load in f.loads
    )


def _phase(f: ProgressFold, coordinator_remaining: int, coordinator_queued: int) -> str:
    """One word for where the startup is. ``loading-coordinator``: a ``__consumer_offsets``
    load is started or queued; ``awaiting-coordinator``: none is, but LOGDIR holds partitions
    not loaded yet (they load once this broker becomes their leader, if it does);
    ``stopped``/``not-running``: the log ends but the log dirs show the broker is gone
    (``startup_state.stopped_phase``). Every other phase is as of the log's last line."""
    if f.shutting_down_at is not None:
        return "shutting-down"
    if f.startups_seen == 0 and f.loading_started_at is None and not f.loads:
        return "no-startup-seen"
    if f.loading_started_at is None and f.loading_completed_at is None and not f.loaded:
        return "starting"
    if f.loading_completed_at is None:
        return "loading-logs"
    stopped = stopped_phase(f)
    if stopped is not None:
        return stopped[0]
    if coordinator_queued > 0:
        return "loading-coordinator"
    if coordinator_remaining > 0:
        return "awaiting-coordinator"
    if f.broker_started_at is not None:
        return "started"
    return "logs-loaded"


def _seconds(start: datetime | None, end: datetime | None) -> float | None:
    if start is None or end is None:
        return None
    return (end - start).total_seconds()


def _snapshot(f: ProgressFold) -> RestartProgress:
    partitions_total, partitions_source = partitions_total_of(f)
    segments_total, segments_source = segments_total_of(f)
    loads = _with_disk_bytes(f)
    sizes = f.totals.offsets_partition_bytes() if f.totals is not None else {}
    for load in loads:
        if load.bytes is not None and load.bytes_source == "broker log":
            sizes.setdefault(load.partition, load.bytes)
    expected = {ld.partition for ld in loads} | set(sizes if f.totals is not None else ())
    started = {ld.partition for ld in loads}
    coordinator_remaining = len(expected - latest_done(loads))
    notes: list[str] = []
    if f.totals is not None:
        coordinator_total: int | None = len(f.totals.offsets_partition_bytes())
        coordinator_source: str | None = (
            "log dir listing (__consumer_offsets partition directories; only those this broker "
            "leads are loaded)"
        )
        notes.extend(f.totals.problems)
    else:
        coordinator_total, coordinator_source = None, None
    if f.startups_seen == 0:
        notes.append("no startup line in the log: counting from its first line")
    notes.extend(state_notes(f))

    estimates: list[Estimate] = []
    loading_open = f.loading_completed_at is None and (
        f.loading_started_at is not None or bool(f.loaded)
    )
    if loading_open and partitions_total is not None and partitions_source is not None:
        since = f.loading_started_at or f.startup_at
        estimates.append(
            rate_estimate(
                "log-loading",
                len(f.loaded),
                partitions_total,
                "partitions",
                _seconds(since, f.as_of),
                "'Loading logs'" if f.loading_started_at is not None else "startup",
                partitions_source,
            )
        )
    # Only a complete total (LOGDIR) gives a segment ETA: the broker's k/n counters (3.3+)
    # cover only the partitions whose recovery has begun.
    if loading_open and segments_total and f.totals is not None and segments_source is not None:
        first = f.recovering[0].at if f.recovering else None
        estimates.append(
            rate_estimate(
                "segment-recovery",
                len(f.recovering),
                segments_total,
                "segments",
                _seconds(first, f.as_of) if len(f.recovering) > 1 else None,
                "the first 'Recovering unflushed segment' (a segment counts once its recovery "
                "has begun)",
                segments_source,
            )
        )
    if f.loading_completed_at is not None or f.loads:
        coordinator = coordinator_estimate(loads, expected, sizes)
        if coordinator is not None:
            estimates.append(coordinator)

    return RestartProgress(
        kafka_version=f.kafka_version,
        kafka_version_seen=f.kafka_version_seen,
        startups_seen=f.startups_seen,
        startup_at=f.startup_at,
        as_of=f.as_of,
        broker_started_at=f.broker_started_at,
        shutting_down_at=f.shutting_down_at,
        phase=_phase(f, coordinator_remaining, len(started - latest_done(loads))),
        loading_started_at=f.loading_started_at,
        loading_completed_at=f.loading_completed_at,
        loading_duration_ms=f.loading_duration_ms,
        partitions_loaded=len(f.loaded),
        partitions_failed=sum(1 for e in f.loaded.values() if e.failed),
        partitions_total=partitions_total,
        partitions_total_source=partitions_source,
        segments_recovered=len(f.recovering),
        segments_to_recover=segments_total,
        segments_to_recover_source=segments_source,
        index_rebuilds=tuple(f.index_rebuilds),
        coordinator_loads=loads,
        coordinator_partitions_total=coordinator_total,
        coordinator_partitions_total_source=coordinator_source,
        estimates=tuple(estimates),
        notes=tuple(notes),
    )
