"""The audit's data and its per-partition rules: a partition's emulation (:class:`Emulated`,
:func:`emulate_partition`), which passes happen before cleaner threads die
(:func:`passes_before_threads_die`), the verdict (:func:`judge`), and the audit of a log dir
(:class:`BrokerAudit`).

The stages that run them over a log dir live in ``audit_stages``; the plan (config, version)
in ``audit_plan``; the JSON shape in ``audit_report``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from offsets_auditor.audit.broker_history import BrokerHistory
from offsets_auditor.audit.damage import CleanerView
from offsets_auditor.audit.topic_evidence import TopicEvidence
from offsets_auditor.cleaner.arrays import Arrays, in_memory
from offsets_auditor.cleaner.capacity import BufferAdvice
from offsets_auditor.cleaner.config import CleanerConfig
from offsets_auditor.cleaner.cores import ONE_CORE, Cores
from offsets_auditor.cleaner.damage import read_buffers
from offsets_auditor.cleaner.headroom import Headroom, commit_rate, with_headroom
from offsets_auditor.cleaner.partition_scan import PartitionScan, scan_partition
from offsets_auditor.cleaner.passes import CleanerFailure, PartitionCleaner, PassResult
from offsets_auditor.cleaner.pool_order import tie_break_rankings
from offsets_auditor.cleaner.requirements import needed_entries
from offsets_auditor.cleaner.selection import Selection, first_dirty_offset, select
from offsets_auditor.cleaner.threads import Schedule, simulate
from offsets_auditor.cleaner.verdict import Facts, Outcome, VersionVerdict, outcome
from offsets_auditor.cleaner.verdict_facts import emulated_facts
from offsets_auditor.findings import Finding, FindingKind, Severity
from offsets_auditor.groups.model import GroupState
from offsets_auditor.logdir.layout import DirState
from offsets_auditor.logdir.model import LogDir, PartitionDir, held_offsets_partitions
from offsets_auditor.reader.reading import DEFAULT_READ, SegmentReader
from offsets_auditor.startup.indexes import IndexVerdict


@dataclass(frozen=True, slots=True)
class Emulated:
    """Everything the emulation of one partition produced, before thread deaths elsewhere
    are taken into account."""

    partition: PartitionDir
    scan: PartitionScan
    checkpoint: int | None
    first_dirty: int
    initial: Selection
    passes: tuple[PassResult, ...]
    selections: tuple[Selection, ...]
    failure: CleanerFailure | None
    needed_entries: int
    size_after_cleaning: int
    now_ms: int = 0
    #: the facts, of those watched (``audit.shared_emulations.WATCHED``), whose other value
    #: would have changed this emulation: a config differing only in the others shares it
    facts_that_mattered: frozenset[str] = frozenset()

    @property
    def kills_thread(self) -> bool:
        return self.failure is not None and self.failure.kills_thread


@dataclass(frozen=True, slots=True)
class PartitionAudit:
    """The verdict for one partition. ``passes`` are the passes that happen (all of them,
    unless every cleaner thread dies first)."""

    broker_id: int | None
    log_dir: str
    emulated: Emulated
    passes: tuple[PassResult, ...]
    outcome: Outcome
    reason: str
    capacity: int
    advice: BufferAdvice | None
    #: the advice with a day's growth, rounded, and its heap (``cleaner.headroom``)
    headroom: Headroom | None = None
    #: the verdict for each stretch of the detected version range, when they differ
    #: (``offsets_auditor.audit.alternatives``); empty when every version gives this one
    alternatives: tuple[VersionVerdict, ...] = ()

    @property
    def name(self) -> str:
        return self.emulated.partition.name

    @property
    def scan(self) -> PartitionScan:
        return self.emulated.scan

    @property
    def never_compacted(self) -> bool:
        """No clean has ever moved the checkpoint past the log start (an entry equal to the
        start is what a dying 0.9-2.0 thread writes back)."""
        start = self.scan.segments[0].base_offset if self.scan.segments else 0
        checkpoint = self.emulated.checkpoint
        return checkpoint is None or checkpoint <= start

    def size_and_top_writer(self) -> tuple[int, str | None, float]:
        writers = self.scan.writers
        if not len(writers):
            return self.scan.size_bytes, None, 0.0
        total = writers.total_bytes() or 1.0
        ((group, top),) = writers.top(1)
        return self.scan.size_bytes, group, top.bytes / total


@dataclass(frozen=True, slots=True)
class BrokerAudit:
    log_dir: LogDir
    config: CleanerConfig
    partitions: tuple[PartitionAudit, ...]
    findings: tuple[Finding, ...]
    recommendation: BufferAdvice | None
    thread_deaths: int
    indexes: tuple[IndexVerdict, ...] = ()
    recovery: dict[str, Any] | None = None
    groups: tuple[GroupState, ...] = ()
    #: what the log dir tells of the offsets topic as a whole (for the cluster view)
    topic: TopicEvidence | None = None
    #: the recommendation with a day's growth: that of the partition needing the most
    headroom: Headroom | None = None
    #: what the broker's own logs say (``audit.broker_history``); None: none was read
    history: BrokerHistory | None = None


def headroom_of(e: Emulated, config: CleanerConfig) -> Headroom:
    """The dedupe buffer for ``e``'s dirty section with a day's growth at the commit rate its
    segments show (``cleaner.headroom``)."""
    rate = commit_rate(
        [(s.base_offset, s.next_offset, s.largest_timestamp, s.mtime_ms) for s in e.scan.segments]
    )
    return with_headroom(
        e.needed_entries,
        max(e.scan.log_end_offset - e.first_dirty, 0),
        rate,
        config.threads,
        config.load_factor,
        config.io_buffer_size,
    )


def emulate_partition(
    partition: PartitionDir,
    config: CleanerConfig,
    now_ms: int,
    read: SegmentReader = DEFAULT_READ.segment,
    *,
    scan: PartitionScan | None = None,
    arrays: Arrays = in_memory,
    cores: Cores = ONE_CORE,
) -> Emulated | None:
    """Scan one offsets partition with ``read`` (unless ``scan`` is given: the scan does not
    depend on the config or version) and run every pass the cleaner would (its per-record
    state in arrays made by ``arrays``; its independent parts on ``cores``)."""
    scan = scan if scan is not None else scan_partition(partition, read)
    if not scan.segments:
        return None
    checkpoint = partition.cleaner_checkpoint  # read with the partition's snapshot
    modern = config.behaviour.log_start_from_checkpoint
    first_dirty = _first_dirty(partition, scan, modern)
    cleaner = PartitionCleaner(scan, config, now_ms, arrays, cores)
    initial = select(cleaner.state, first_dirty, config, now_ms)
    need = (
        cores.aside(lambda: needed_entries(scan, config, first_dirty, initial.first_uncleanable))
        if initial.eligible
        else lambda: 0
    )
    if config.enabled:
        passes, selections, failure = cleaner.run(first_dirty)
    else:
        passes, selections, failure = [], [initial], None
    mattered = set(cleaner.facts_that_mattered)
    if _first_dirty(partition, scan, not modern) != first_dirty:
        mattered.add("log_start_from_checkpoint")
    return Emulated(
        partition=partition,
        scan=scan,
        checkpoint=checkpoint,
        first_dirty=first_dirty,
        initial=initial,
        passes=tuple(passes),
        selections=tuple(selections),
        failure=failure,
        needed_entries=need(),
        size_after_cleaning=sum(cleaner.state.sizes),
        now_ms=now_ms,
        facts_that_mattered=frozenset(mattered),
    )


def _first_dirty(partition: PartitionDir, scan: PartitionScan, modern: bool) -> int:
    """Where the cleaner starts: from the cleaner checkpoint, else the log start, which is the
    first segment's base or, with ``modern`` (``log_start_from_checkpoint``, 3.0+), the
    log-start-offset checkpoint when beyond it."""
    checkpoint = partition.cleaner_checkpoint  # read with the partition's snapshot
    log_start = scan.segments[0].base_offset
    if modern and partition.log_start_checkpoint is not None:
        log_start = max(log_start, partition.log_start_checkpoint)
    if modern and checkpoint is not None and checkpoint > scan.log_end_offset:
        return log_start  # 3.x: "larger than the log end offset", reset
    return first_dirty_offset(scan, checkpoint, log_start)


def passes_before_threads_die(
    emulated: list[Emulated],
    config: CleanerConfig,
    rankings: tuple[dict[str, int], ...] | None = None,
) -> tuple[dict[str, int], int]:
    """How many passes each partition gets, and how many threads die (up to 2.0.x a failing
    partition kills every thread that picks it). ``rankings``: the orders in which the
    broker's log pool can meet equally dirty partitions (``cleaner.pool_order``; the first is
    used); by partition number when ``None``."""
    outcomes = thread_outcomes(emulated, config, rankings)
    return outcomes[0][0], outcomes[0][1]


def pool_rankings(
    logdir: LogDir,
    emulated: list[Emulated],
    config: CleanerConfig,
    loaded: Sequence[tuple[str, int]] | None = None,
) -> tuple[dict[str, int], ...] | None:
    """The orders in which the broker's log pool can meet the offsets partitions among equally
    dirty ones (``cleaner.pool_order``), from every live partition dir of ``logdir`` and, when
    known, the broker's load order (``loaded``: ``broker_logs.server_log.broker_starts``);
    ``None`` where the order is not emulated (the partition number decides)."""
    live = [(p.topic, p.partition) for p in logdir.partitions if p.state is DirState.LIVE]
    return tie_break_rankings(
        live, [e.partition.name for e in emulated], config.kafka_version, loaded=loaded
    )


def order_findings(outcomes: list[tuple[dict[str, int], int, int]]) -> list[Finding]:
    """When the orders the log pool allows give the threads' race different outcomes: each."""
    if len(outcomes) < 2:
        return []
    total = sum(count for _, _, count in outcomes)
    described = "; ".join(
        f"{count} of {total} orders: "
        + ", ".join(
            f"{name} {done} pass{'es' if done != 1 else ''}" for name, done in sorted(d.items())
        )
        + f", {deaths} thread(s) dead"
        for d, deaths, count in outcomes
    )
    return [
        Finding(
            kind=FindingKind.CLEANER_ORDER_UNCERTAIN,
            severity=Severity.INFO,
            detail="which equally dirty partition a cleaner thread takes first depends on the"
            " order its log pool (a ConcurrentHashMap) met them in, which the log dir alone"
            " does not tell (the broker's load order does: its server.log); the verdicts"
            f" follow the first of these outcomes: {described}",
        )
    ]


def thread_outcomes(
    emulated: list[Emulated],
    config: CleanerConfig,
    rankings: tuple[dict[str, int], ...] | None = None,
) -> list[tuple[dict[str, int], int, int]]:
    """The distinct outcomes of the threads' race over ``rankings`` (passes per partition,
    threads dead, and how many of the rankings give it), the first ranking's first."""
    executed = {e.partition.name: len(e.passes) for e in emulated}
    if not config.enabled or not any(e.kills_thread for e in emulated):
        return [(executed, 0, 1)]
    numbers = {e.partition.name: e.partition.partition for e in emulated}
    found: list[tuple[dict[str, int], int, int]] = []
    for rank in rankings or (numbers,):
        schedules = [
            Schedule(
                name=e.partition.name,
                order=rank.get(e.partition.name, len(rank) + numbers[e.partition.name]),
                ratios=tuple(s.ratio for s in e.selections),
                costs=tuple(p.start_bytes + 1 for p in e.passes),
                fails_at=len(e.passes) if e.kills_thread else None,
            )
            for e in emulated
        ]
        done, deaths = simulate(schedules, config.threads)
        for i, (other, other_deaths, count) in enumerate(found):
            if (other, other_deaths) == (done, deaths):
                found[i] = (other, other_deaths, count + 1)
                break
        else:
            found.append((done, deaths, 1))
    return found


def judge(
    e: Emulated, executed: int, killers: list[str], all_dead: bool, config: CleanerConfig
) -> tuple[Outcome, str]:
    facts = Facts(
        cleaner_enabled=config.enabled,
        failure_message=e.failure.message if e.failure else None,
        failure_kills_thread=e.kills_thread,
        killed_elsewhere=next((k for k in killers if k != e.partition.name), None)
        if e.failure is None and all_dead
        else None,
        passes=len(e.passes),
        eligible=e.initial.eligible,
        cleanable_bytes=e.initial.cleanable_bytes,
        ratio=e.initial.ratio,
        min_ratio=config.min_cleanable_ratio,
        blocked_by=e.initial.blocked_by,
        passes_before_blocked=executed,
        transaction_open_ms=e.scan.transactions.oldest_open_for_ms(e.now_ms),
        transaction_max_timeout_ms=config.transaction_max_timeout_ms,
    )
    return outcome(
        emulated_facts(
            facts, config, e.scan.segments, e.initial, e.passes, e.selections, e.needed_entries
        )
    )


def cleaner_view(e: Emulated, config: CleanerConfig) -> CleanerView:
    """The cleaner as the emulation of ``e`` saw it, for the damage findings."""
    failure = e.failure
    return CleanerView(
        behaviour=config.behaviour,
        buffers=read_buffers(config),
        failure_damage=failure.damage if failure is not None else None,
        failure_pass=failure.pass_number if failure is not None else None,
        emulated=config.enabled,
        failure_message=failure.message if failure is not None else None,
    )


def config_findings(logdir: LogDir, config: CleanerConfig) -> list[Finding]:
    found = []
    if not config.enabled:
        found.append(
            Finding(
                kind=FindingKind.CLEANER_DISABLED,
                severity=Severity.CRITICAL,
                detail="log.cleaner.enable=false: __consumer_offsets is never compacted on"
                " this broker",
            )
        )
    partition_dirs = held_offsets_partitions(logdir)
    if partition_dirs and len(partition_dirs) != config.offsets_topic_partitions:
        found.append(
            Finding(
                kind=FindingKind.OFFSETS_PARTITION_COUNT_MISMATCH,
                severity=Severity.INFO,
                detail=f"{len(partition_dirs)} __consumer_offsets partition dirs here but"
                f" offsets.topic.num.partitions={config.offsets_topic_partitions}: other brokers"
                " may hold the rest; once the topic exists its real partition count decides"
                " coordinators, so a changed setting is ignored",
            )
        )
    return found
