"""The audit of one broker log dir in three stages, so that they can run apart:

A. :func:`read_segment_result`, per segment, in any order: the segment read once into the
   cleaner's facts (``cleaner.segment_facts``) and the groups' delta (``groups.delta``).
B. :func:`audit_partition`, per partition, in three steps: its segments' results folded in
   offset order with the groups replayed (:func:`fold_segments`), the cleaner emulated at each
   config of the plan, each independent of the others (:func:`emulate_folded`), the
   partition's findings (:func:`finish_partition`). What it returns is light (no per-record
   columns) and picklable.
C. :func:`conclude`, per log dir: the cleaner threads (a failing partition kills them), the
   verdicts and their alternatives over the detected version range, the start-up checks, the
   groups, the recommendation.

:func:`audit_log_dir` runs them one after the other, each partition read as one consistent
snapshot (``logdir.open_partition``): that is ``offsets-auditor audit``. The Spark job
(``spark_jobs``) runs A and B on executors (a big partition's emulations a task each) and C
on the driver, with the same functions.
"""

from __future__ import annotations

import tempfile
from collections.abc import Iterable, Iterator, Sequence
from contextlib import ExitStack
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Protocol

from offsets_auditor.audit.alternatives import with_cleaner_alternatives, with_startup_alternatives
from offsets_auditor.audit.broker_history import broker_history, read_broker_logs
from offsets_auditor.audit.collector import cyclic_gc_paused
from offsets_auditor.audit.damage import damage_findings, place_of
from offsets_auditor.audit.group_recovery import GroupsPlan, collect, plan
from offsets_auditor.audit.partition import (
    BrokerAudit,
    Emulated,
    PartitionAudit,
    cleaner_view,
    config_findings,
    emulate_partition,
    headroom_of,
    judge,
    order_findings,
    pool_rankings,
    thread_outcomes,
)
from offsets_auditor.audit.plan import AuditPlan, AuditSettings, given_plan
from offsets_auditor.audit.shared_emulations import config_groups, emulate_group, in_config_order
from offsets_auditor.audit.topic_evidence import topic_evidence
from offsets_auditor.cleaner.arrays import Arrays, FileArrays, in_memory
from offsets_auditor.cleaner.blockers import (
    hanging_transaction_findings,
    offset_overflow_findings,
    skew_findings,
)
from offsets_auditor.cleaner.capacity import buffer_for, max_desired_map_size
from offsets_auditor.cleaner.config import CleanerConfig
from offsets_auditor.cleaner.cores import ONE_CORE, Cores
from offsets_auditor.cleaner.partition_scan import PartitionScan, fold_partition
from offsets_auditor.cleaner.segment_facts import ColumnSink, SegmentFacts, segment_facts
from offsets_auditor.cleaner.selection import reads_clock
from offsets_auditor.cleaner.spilled_columns import SpilledColumns
from offsets_auditor.cleaner.verdict import Outcome, severity_of
from offsets_auditor.errors import DecodeError
from offsets_auditor.findings import Finding, FindingKind, Severity
from offsets_auditor.groups.delta import GroupsDelta
from offsets_auditor.groups.model import GroupState, PartitionGroups
from offsets_auditor.groups.replay import Listing
from offsets_auditor.groups.rules import loader_rules
from offsets_auditor.logdir.model import (
    LogDir,
    PartitionDir,
    Segment,
    offsets_partitions,
    open_partition,
    read_log_dir,
)
from offsets_auditor.reader.columns import Chunk
from offsets_auditor.reader.reading import (
    DEFAULT_READ,
    ReadOptions,
    SegmentReader,
    last_index_position,
    segment_label,
)
from offsets_auditor.startup.checks import startup_report


@dataclass(frozen=True, slots=True)
class LogDirWork:
    """One log dir as listed once (on the driver), with the groups' plan for it."""

    model: LogDir
    groups_plan: GroupsPlan | None


def log_dir_work(path: Path, audit_plan: AuditPlan) -> LogDirWork:
    config = audit_plan.config
    model = read_log_dir(path, config.kafka_version)
    groups_plan = (
        plan(model, loader_rules(config.kafka_version), audit_plan.settings.partitions_count)
        if audit_plan.settings.with_groups
        else None
    )
    return LogDirWork(model, groups_plan)


# -- A. per segment ----------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class SegmentResult:
    """One segment read once: the cleaner's facts and the groups' delta (None without)."""

    segment: Segment
    facts: SegmentFacts
    delta: GroupsDelta | None


@cyclic_gc_paused()
def read_segment_result(
    partition: PartitionDir,
    segment: Segment,
    groups_plan: GroupsPlan | None,
    read: SegmentReader = DEFAULT_READ.segment,
    columns: ColumnSink | None = None,
) -> SegmentResult:
    """``columns``: where the cleaner's columns go as they are read (by default, memory)."""
    builder = groups_plan.builder(partition, segment) if groups_plan is not None else None

    def items() -> Iterator[Chunk | DecodeError]:
        for item in read(partition, segment):
            if builder is not None:
                builder.add(item)
            yield item

    facts = segment_facts(items(), segment.base_offset, segment_label(partition, segment), columns)
    if facts.damage is not None:  # where Kafka 0.9 looks first (cleaner.damage)
        facts = replace(facts, index_last_position=last_index_position(partition, segment))
    return SegmentResult(segment, facts, builder.result() if builder is not None else None)


# -- B. per partition ---------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class PartitionOutcome:
    """One partition's audit before the log dir's thread simulation: its emulation at each of
    the plan's configs (light: the scan without its columns), the groups replay, findings."""

    partition: PartitionDir
    emulated: tuple[Emulated, ...]
    replay: PartitionGroups | None
    findings: tuple[Finding, ...]
    #: whether the outcome depends on the time of the audit (``now_ms``): a compaction lag
    #: at one of the configs, or an open transaction (its age is reported)
    reads_clock: bool = False


class Emulations(Protocol):
    """``emulations(work, folded, configs, now_ms, arrays)``: the folded partition emulated at
    each config, in order and light (:func:`emulate_folded` at each, here or elsewhere)."""

    def __call__(
        self,
        work: LogDirWork,
        folded: FoldedPartition,
        configs: Sequence[CleanerConfig],
        now_ms: int,
        arrays: Arrays,
    ) -> Sequence[Emulated | None]: ...


#: From this many records on, a partition's emulations at several configs are worth running
#: apart, each on a core of its own (``audit --jobs``, the scan's executors); below, moving
#: them costs more than running them where the partition was folded.
EMULATIONS_APART_RECORDS = 1 << 20


@dataclass(frozen=True, slots=True)
class FoldedPartition:
    """Stage B's first step: a partition's segment results folded in offset order, its scan
    (with the columns and key ids its emulations read) and the groups' replay."""

    partition: PartitionDir
    scan: PartitionScan
    replay: PartitionGroups | None

    def light(self) -> FoldedPartition:
        """Without the per-record columns and key ids (what crosses to the driver)."""
        return replace(self, scan=replace(self.scan, columns=(), key_ids=()))


@cyclic_gc_paused()
def fold_segments(
    work: LogDirWork,
    partition: PartitionDir,
    results: Iterable[SegmentResult],
    arrays: Arrays = in_memory,
    listing: Listing = Listing.OFFSETS,
) -> FoldedPartition:
    """``results`` are the partition's segments' in offset order, taken once each (so they can
    be loaded one at a time: what is kept of each is its columns); ``arrays`` makes the key
    ids; ``listing``: what the replay lists of the groups (``GroupsFold.result``)."""
    groups_plan = work.groups_plan
    fold = groups_plan.fold(partition) if groups_plan is not None else None

    def facts() -> Iterator[tuple[Segment, SegmentFacts]]:
        for result in results:
            if fold is not None and result.delta is not None:
                fold.add(result.delta)
            yield result.segment, result.facts

    scan = fold_partition(partition, facts(), arrays)
    replay = fold.result(listing) if fold is not None else None
    return FoldedPartition(partition, scan, replay)


@cyclic_gc_paused()
def replay_segments(
    work: LogDirWork,
    partition: PartitionDir,
    deltas: Iterable[GroupsDelta | None],
    listing: Listing = Listing.OFFSETS,
) -> PartitionGroups | None:
    """The groups' part of :func:`fold_segments` alone: the deltas of the partition's segments
    (in offset order) replayed. The two parts read nothing of each other, so a big partition's
    may run apart, on two cores (the scan does: ``spark_jobs.tasks``)."""
    groups_plan = work.groups_plan
    if groups_plan is None:
        return None
    fold = groups_plan.fold(partition)
    for delta in deltas:
        if delta is not None:
            fold.add(delta)
    return fold.result(listing)


@cyclic_gc_paused()
def emulate_folded(
    work: LogDirWork,
    folded: FoldedPartition,
    config: CleanerConfig,
    now_ms: int,
    arrays: Arrays = in_memory,
    cores: Cores = ONE_CORE,
) -> Emulated | None:
    """Stage B's second step, once per config and independent of the others (so each may run
    on a core of its own): the folded partition emulated at ``config`` (its independent parts
    on ``cores``), returned light."""
    e = emulate_partition(
        folded.partition, config, now_ms, scan=folded.scan, arrays=arrays, cores=cores
    )
    return None if e is None else replace(e, scan=folded.light().scan)


@cyclic_gc_paused()
def finish_partition(
    work: LogDirWork,
    folded: FoldedPartition,
    configs: Sequence[CleanerConfig],
    now_ms: int,
    emulated: Sequence[Emulated | None],
) -> PartitionOutcome:
    """Stage B's last step: the partition's outcome from its emulation at each config
    (``emulated[i]`` at ``configs[i]``; ``configs[0]`` is the one the verdict is given at).
    Reads no per-record column: ``folded`` may be light."""
    partition, replay = folded.partition, folded.replay
    scan = folded.light().scan
    if not emulated or emulated[0] is None:
        return PartitionOutcome(partition, (), replay, ())
    e = emulated[0]
    config = configs[0]
    groups_plan = work.groups_plan
    rules = groups_plan.rules if groups_plan is not None else loader_rules(config.kafka_version)
    findings = [
        *damage_findings(
            place_of(work.model, partition, scan.log_end_offset),
            scan.errors,
            replay.record_problems if replay is not None else (),
            rules,
            cleaner_view(e, config),
        ),
        *offset_overflow_findings(scan, config),
        *hanging_transaction_findings(
            scan,
            config,
            pinned_by_transaction=e.initial.blocked_by == "open transaction",
            now_ms=now_ms,
        ),
    ]
    return PartitionOutcome(
        partition,
        tuple(replace(x, scan=scan) for x in emulated if x is not None),
        replay,
        tuple(findings),
        reads_clock=bool(scan.transactions.ongoing) or any(reads_clock(c) for c in configs),
    )


def emulate_each(
    work: LogDirWork,
    folded: FoldedPartition,
    configs: Sequence[CleanerConfig],
    now_ms: int,
    arrays: Arrays,
    cores: Cores = ONE_CORE,
) -> list[Emulated | None]:
    """The folded partition emulated at each config, one after the other, once for the
    configs it cannot tell apart (``audit.shared_emulations``); each emulation's independent
    parts on ``cores``."""
    groups = config_groups(configs)
    return in_config_order(
        groups,
        [
            emulate_group(
                lambda c: emulate_folded(work, folded, c, now_ms, arrays, cores), configs, g
            )
            for g in groups
        ],
    )


def audit_partition(
    work: LogDirWork,
    partition: PartitionDir,
    results: Iterable[SegmentResult],
    configs: Sequence[CleanerConfig],
    now_ms: int,
    arrays: Arrays = in_memory,
    emulations: Emulations = emulate_each,
    listing: Listing = Listing.OFFSETS,
) -> PartitionOutcome:
    """Stage B, its three steps one after the other: ``results`` folded
    (:func:`fold_segments`), emulated at each of ``configs`` (``emulations``), finished
    (:func:`finish_partition`)."""
    folded = fold_segments(work, partition, results, arrays, listing)
    emulated = emulations(work, folded, configs, now_ms, arrays)
    return finish_partition(work, folded, configs, now_ms, emulated)


# -- C. per log dir -----------------------------------------------------------------------


@cyclic_gc_paused()
def conclude(
    audit_plan: AuditPlan,
    work: LogDirWork,
    outcomes: Iterable[PartitionOutcome],
    findings_before: Sequence[Finding] = (),
) -> BrokerAudit:
    """Stage C: the log dir's audit from its partitions' outcomes (``findings_before``: what
    reading them found, e.g. files that changed while read), beside what the broker's own logs
    say (``audit.broker_history``: its load order decides ties among equally dirty partitions,
    0.9-0.10.1)."""
    config = audit_plan.config
    logs = read_broker_logs(audit_plan.broker_logs, config.kafka_version)
    loaded = logs.loaded if logs is not None else None
    outcomes = [o for o in outcomes]
    as_read = {o.partition.name: o.partition for o in outcomes}
    model = replace(
        work.model,
        partitions=tuple(as_read.get(p.name, p) for p in work.model.partitions),
    )
    findings: list[Finding] = [*model.findings, *findings_before]
    for outcome in outcomes:
        findings.extend(outcome.findings)
    emulated = [o.emulated[0] for o in outcomes if o.emulated]
    capacity = max_desired_map_size(config.memory_per_thread, config.load_factor)
    races = thread_outcomes(emulated, config, pool_rankings(model, emulated, config, loaded))
    executed, deaths = races[0][0], races[0][1]
    findings.extend(order_findings(races))
    killers = [e.partition.name for e in emulated if e.kills_thread]
    partitions = []
    for e in emulated:
        verdict, reason = judge(
            e, executed[e.partition.name], killers, deaths >= config.threads, config
        )
        partitions.append(
            PartitionAudit(
                broker_id=model.broker_id,
                log_dir=str(model.path),
                emulated=e,
                passes=e.passes[: executed[e.partition.name]],
                outcome=verdict,
                reason=reason,
                capacity=capacity,
                advice=buffer_for(e.needed_entries, config.threads, config.load_factor)
                if e.needed_entries > capacity
                else None,
                headroom=headroom_of(e, config) if e.needed_entries > capacity else None,
            )
        )
        if verdict in (Outcome.THREAD_DEATH, Outcome.BLOCKED, Outcome.MULTI_PASS):
            findings.append(
                Finding(
                    kind=FindingKind(f"cleaner-{verdict.value}"),
                    severity=Severity(severity_of(verdict)),
                    detail=reason,
                    partition=e.partition.name,
                )
            )
    findings.extend(skew_findings(partitions))
    findings.extend(config_findings(model, config))
    topic = topic_evidence(model, audit_plan.settings)
    findings.extend(topic.findings())
    indexes, recovery, startup_findings = startup_report(model, config.kafka_version)
    findings.extend(startup_findings)
    groups: tuple[GroupState, ...] = ()
    groups_plan = work.groups_plan
    if groups_plan is not None and groups_plan.partitions_count > 0:
        replays = tuple(o.replay for o in outcomes if o.replay is not None)
        recovered = collect(model, groups_plan, replays)
        groups = recovered.groups
        # open transactions are the cleaner's findings here (with their age and what they pin)
        findings.extend(
            f
            for f in recovered.findings
            if f not in model.findings and f.kind != FindingKind.OPEN_TRANSACTION
        )
    worst = max((e.needed_entries for e in emulated), default=0)
    roomiest = max(
        (p.headroom for p in partitions if p.headroom is not None),
        key=lambda h: h.dedupe_buffer_size,
        default=None,
    )
    audit = BrokerAudit(
        model,
        config,
        tuple(partitions),
        tuple(findings),
        buffer_for(worst, config.threads, config.load_factor) if worst > capacity else None,
        deaths,
        tuple(indexes),
        recovery,
        groups,
        topic,
        headroom=roomiest,
    )
    by_config = {
        c: [o.emulated[i] for o in outcomes if o.emulated] for i, c in enumerate(audit_plan.configs)
    }
    audit = with_cleaner_alternatives(audit, audit_plan.cleaner_stretches, by_config, loaded)
    audit = with_startup_alternatives(audit, audit_plan.startup_stretches)
    if logs is None:
        return audit
    history = broker_history(logs, model, emulated, config.kafka_version, capacity)
    return replace(audit, findings=(*audit.findings, *history.findings), history=history)


# -- all three, one after the other -------------------------------------------------------


#: A partition listed at this many bytes or more keeps its per-record columns and state in
#: scratch files (``tempfile``'s dir: ``TMPDIR``) rather than in memory, as ``audit --jobs N``
#: always does: the audit's memory stays bounded whatever the partition's size (about 40
#: bytes of scratch per record, removed once the partition is done).
SPILL_BYTES = 256 * 1024 * 1024


def audit_log_dir(
    path: Path, audit_plan: AuditPlan, read: ReadOptions = DEFAULT_READ
) -> BrokerAudit:
    """``offsets-auditor audit`` of one log dir: each partition read as one consistent
    snapshot (on a running broker the cleaner renames and deletes segments all the time)."""
    work = log_dir_work(path, audit_plan)
    config = audit_plan.config
    outcomes: list[PartitionOutcome] = []
    read_findings: list[Finding] = []
    for listed in offsets_partitions(work.model):
        with ExitStack() as stack:
            snapshot = stack.enter_context(open_partition(work.model, listed, config.kafka_version))
            read_findings.extend(snapshot.findings)
            partition = snapshot.partition
            segment_reader = read.from_snapshot(snapshot)
            scratch = (
                Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="offsets-auditor-")))
                if partition.size_bytes >= SPILL_BYTES
                else None
            )
            # read as they are folded: what is kept of each segment is its columns
            results = (
                read_segment_result(
                    partition,
                    segment,
                    work.groups_plan,
                    segment_reader,
                    SpilledColumns(scratch / str(i)) if scratch is not None else None,
                )
                for i, segment in enumerate(partition.segments)
            )
            arrays = FileArrays(scratch) if scratch is not None else in_memory
            outcomes.append(
                audit_partition(
                    work,
                    partition,
                    results,
                    audit_plan.configs,
                    audit_plan.now_ms,
                    arrays,
                    listing=audit_plan.settings.listing,
                )
            )
    return conclude(audit_plan, work, outcomes, read_findings)


def audit_at(
    path: Path,
    config: CleanerConfig,
    now_ms: int,
    *,
    with_groups: bool = True,
    partitions_count: int | None = None,
    read: ReadOptions = DEFAULT_READ,
) -> BrokerAudit:
    """One log dir audited at a config built by the caller (its version taken as given)."""
    settings = AuditSettings(
        kafka_version=config.kafka_version,
        with_groups=with_groups,
        partitions_count=partitions_count,
    )
    return audit_log_dir(path, given_plan(path, config, now_ms, settings), read)
