"""The broker's own logs beside the audit of one log dir (issue 22): what its cleaner did
(``log-cleaner.log``), when it last started, in which order it loaded its logs and how long
its coordinator loads took (``server.log``). Read once per log dir, in stage C
(``audit.stages.conclude``), with the rules of ``offsets_auditor.broker_logs``:

- per ``__consumer_offsets`` partition of the log dir: its last real cleaning (the passes of
  one dirty section, :func:`last_clean`), the broker's passes from the emulation's first dirty
  offset set against the emulation's (``reality.compare``), whether it is marked uncleanable
  and since when;
- per broker: the cleaner threads of its last run (alive, dead with Kafka's exception), the
  cleaner's measured pace against the commit rate the segments show (``throughput``), and the
  coordinator load model fitted to its own load times (``load_models``);
- the findings ``cleaner-thread-died``, ``partition-uncleanable``, ``prediction-differs``,
  ``cleaner-falling-behind``, and the logs' own read problems.

A broker's cleaner serves all its log dirs: the thread deaths and the pace are the broker's,
reported with each of its log dirs; the partitions' parts with the log dir holding them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Protocol

from offsets_auditor.audit.load_calibration import LoadCalibration, PartitionSize, calibrate_loads
from offsets_auditor.audit.plan import BrokerLogFiles
from offsets_auditor.broker_logs.history import (
    CleanerHistory,
    CleanerRun,
    Cleaning,
    UncleanableMark,
    uncleanable_since,
)
from offsets_auditor.broker_logs.reading import read_history
from offsets_auditor.broker_logs.reality import (
    Comparison,
    RealPass,
    compare_all,
    prediction_findings,
    prediction_of,
    real_passes,
    thread_death_findings,
    uncleanable_findings,
)
from offsets_auditor.broker_logs.server_log import broker_starts
from offsets_auditor.broker_logs.throughput import (
    CleanerPace,
    CommitRate,
    KeepingUp,
    all_writes,
    bytes_per_offset,
    cleaner_pace,
    commit_rate,
    falling_behind_findings,
    keeping_up,
)
from offsets_auditor.cleaner.partition_scan import PartitionScan
from offsets_auditor.cleaner.passes import CleanerFailure, PassResult
from offsets_auditor.findings import Finding, FindingKind, Severity
from offsets_auditor.logdir import fs
from offsets_auditor.logdir.model import LogDir, PartitionDir
from offsets_auditor.restart.coordinator_loads import CoordinatorLoad
from offsets_auditor.restart.progress import fold_lines
from offsets_auditor.versions import KafkaVersion

#: The newest cleanings of each partition kept in the report (its ``cleanings`` list); the
#: partition's ``cleaner_log.cleanings`` counts them all.
CLEANINGS_KEPT = 50


class Emulated(Protocol):
    """What is read of the audit's ``Emulated`` (``audit.partition``): the partition, its scan,
    where the emulation began, its passes and the failure it ends with."""

    @property
    def partition(self) -> PartitionDir: ...

    @property
    def scan(self) -> PartitionScan: ...

    @property
    def first_dirty(self) -> int: ...

    @property
    def passes(self) -> tuple[PassResult, ...]: ...

    @property
    def failure(self) -> CleanerFailure | None: ...


@dataclass(frozen=True, slots=True)
class BrokerLogs:
    """The broker's logs as read: the cleaner's ``history`` (None without a cleaner log) and
    the files it came from, the broker's starts and its last start's load order and coordinator
    loads (from ``server.log``), and what could not be read (findings)."""

    files: BrokerLogFiles
    history: CleanerHistory | None
    cleaner_files: tuple[str, ...]
    starts: tuple[datetime, ...]
    load_order: tuple[tuple[str, int], ...]
    loads: tuple[CoordinatorLoad, ...]
    problems: tuple[Finding, ...]
    notes: tuple[str, ...]

    @property
    def loaded(self) -> tuple[tuple[str, int], ...] | None:
        """The broker's load order at its last start, when its server log tells one."""
        return self.load_order or None


def threads_in_server_log(version: KafkaVersion) -> bool:
    """3.5-3.9 print the cleaner threads' "Starting", "Stopped" and "Error due to" to
    ``server.log`` (``broker_logs.cleaner_lines``: the Java ``ShutdownableThread``'s logger is
    not under ``kafka.log.LogCleaner``)."""
    return version.at_least("3.5") and not version.at_least("4.0")


def read_broker_logs(files: BrokerLogFiles, version: KafkaVersion) -> BrokerLogs | None:
    """Read what ``files`` names (None when it names nothing). Never raises for a log that
    cannot be read: that is a finding with the file."""
    if files.server_log is None and not files.cleaner_logs:
        return None
    problems: list[Finding] = []
    starts: tuple[datetime, ...] = ()
    order: tuple[tuple[str, int], ...] = ()
    loads: tuple[CoordinatorLoad, ...] = ()
    server = files.server_log
    if server is not None:
        try:
            found = broker_starts(fs.iter_lines(server))
            progress = fold_lines(fs.iter_lines(server), kafka_version=str(version))
            starts, order, loads = found.starts, found.load_order, progress.coordinator_loads
        except OSError as error:
            problems.append(_unreadable(server, error))
            server = None
    history = None
    cleaner_files: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()
    if files.cleaner_logs:
        threads = [server] if server is not None and threads_in_server_log(version) else []
        history, read = read_history(files.cleaner_logs, threads)
        problems.extend(read.problems)
        cleaner_files, notes = tuple(read.files), tuple(read.notes)
    return BrokerLogs(files, history, cleaner_files, starts, order, loads, tuple(problems), notes)


def _unreadable(path: object, error: OSError) -> Finding:
    return Finding(
        kind=FindingKind.UNREADABLE_LOG,
        severity=Severity.WARNING,
        detail=f"{path}: cannot be read ({error.strerror or error}); the audit goes on without it",
        file=str(path),
    )


@dataclass(frozen=True, slots=True)
class LastClean:
    """The broker's last cleaning of a partition: its passes (one per cleaning in 0.10.1+,
    where a dirty section that does not fit the map is cleaned several times in a row; one up
    to 0.10.0) as logged and as read (``passes``: each cleaning's ``[start, upper)`` and end)."""

    cleanings: tuple[Cleaning, ...]
    passes: tuple[RealPass, ...]


def last_clean(cleanings: Sequence[Cleaning], passes: Sequence[RealPass]) -> LastClean | None:
    """The last cleanings of one partition that cleaned one dirty section: going back from the
    last, a cleaning belongs to it when it completed, mapped the same range's upper bound and
    ended where the next began, short of that bound (its map was full)."""
    if not cleanings:
        return None
    first = len(cleanings) - 1
    while first > 0:
        before, after = passes[first - 1], passes[first]
        if (
            before.failure is None
            and before.end is not None
            and before.upper is not None
            and before.upper == after.upper
            and before.end == after.start
            and before.end < before.upper
        ):
            first -= 1
        else:
            break
    return LastClean(tuple(cleanings[first:]), tuple(passes[first:]))


@dataclass(frozen=True, slots=True)
class PartitionHistory:
    """One offsets partition in the broker's log: how many cleanings of it the log holds, the
    newest of them (at most :data:`CLEANINGS_KEPT`, each with its pass as read), the last clean,
    the broker's passes beside the emulation's, and its uncleanable mark if it stands."""

    partition: str
    count: int
    recent: tuple[tuple[Cleaning, RealPass], ...]
    last: LastClean | None
    #: the last cleaning of it that completed (the last time it was compacted), if any
    last_completed: Cleaning | None
    comparison: Comparison
    uncleanable: UncleanableMark | None


@dataclass(frozen=True, slots=True)
class BrokerHistory:
    """What the broker's own logs say beside the audit of one of its log dirs."""

    logs: BrokerLogs
    run: CleanerRun | None
    partitions: dict[str, PartitionHistory]
    uncleanable: dict[str, UncleanableMark]
    pace: CleanerPace | None
    commit: CommitRate | None
    keeping: KeepingUp | None
    #: the load models fitted to the broker's own load times (None: no server log read)
    loads: LoadCalibration | None
    findings: tuple[Finding, ...]


def broker_history(
    logs: BrokerLogs,
    model: LogDir,
    emulated: Sequence[Emulated],
    version: KafkaVersion,
    capacity: int,
) -> BrokerHistory:
    """``logs`` beside the emulation of ``model``'s offsets partitions (``emulated``, at the
    version used, whose offset map holds ``capacity`` entries)."""
    checkpoint = model.cleaner_checkpoint
    checkpoints = {
        f"{topic}-{number}": offset
        for (topic, number), offset in (checkpoint.offsets() if checkpoint else {}).items()
    }
    findings: list[Finding] = list(logs.problems)
    history = logs.history
    partitions: dict[str, PartitionHistory] = {}
    marks: dict[str, UncleanableMark] = {}
    pace = commit = keeping = None
    run = None
    if history is not None:
        names = {e.partition.name for e in emulated}
        marks = {p: m for p, m in uncleanable_since(history, logs.starts).items() if p in names}
        predictions = {e.partition.name: prediction_of(e) for e in emulated}
        comparisons = compare_all(
            history, predictions, version, checkpoints, capacity, model.liveness.running
        )
        for comparison in comparisons:
            name = comparison.partition
            mine = history.cleanings_of(name)
            passes = real_passes(mine, version, checkpoints.get(name))
            recent = tuple(zip(mine, passes, strict=True))[-CLEANINGS_KEPT:]
            partitions[name] = PartitionHistory(
                name,
                len(mine),
                recent,
                last_clean(mine, passes),
                history.last_completed(name),
                comparison,
                marks.get(name),
            )
        run = history.last_run
        # the cleaner never takes a partition marked uncleanable (2.3.0 LogCleanerManager.
        # grabFilthiestCompactedLog: filterNot isUncleanablePartition): its growth is no work
        # the cleaner falls behind on (partition-uncleanable says it)
        writes = all_writes(
            (e.scan, e.first_dirty) for e in emulated if e.partition.name not in marks
        )
        commit = commit_rate(writes)
        if run is not None:
            pace = cleaner_pace(
                run, version, offset_bytes=bytes_per_offset(writes), checkpoints=checkpoints
            )
        keeping = (
            keeping_up(pace, commit, left_out=len(marks))
            if pace is not None and commit is not None
            else None
        )
        findings.extend(thread_death_findings(history))
        findings.extend(
            f
            for f in uncleanable_findings(history, logs.starts)
            if f.partition in marks  # the partitions of this log dir
        )
        findings.extend(prediction_findings(comparisons))
        findings.extend(falling_behind_findings(keeping, run))
    sizes = [
        PartitionSize(e.partition.partition, e.scan.size_bytes, e.scan.records, len(e.scan.writers))
        for e in emulated
    ]
    server = logs.files.server_log
    loads = calibrate_loads(logs.loads, sizes, str(server)) if server is not None else None
    return BrokerHistory(
        logs,
        run,
        partitions,
        marks,
        pace,
        commit,
        keeping,
        loads,
        tuple(findings),
    )
