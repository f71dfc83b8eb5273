"""Recover every group of a broker log dir: each ``__consumer_offsets`` partition replayed.

Each segment is read once (``ReadOptions.segment``) and reduced to a
:class:`~offsets_auditor.groups.delta.GroupsDelta`; the deltas are applied in offset order by
:class:`~offsets_auditor.groups.replay.GroupsFold`. Where the load starts follows the broker
version (rule 1 in :mod:`offsets_auditor.groups.rules`): from 0.11 batches wholly below the
partition's log start offset (``log-start-offset-checkpoint``) are not replayed.
:func:`folding_groups` lets another reader of the same segments (the audit's cleaner scan) fold
the groups on the way, so that every byte is read once.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, replace
from pathlib import Path

from offsets_auditor.audit.damage import damage_findings, place_of
from offsets_auditor.constants import OFFSETS_TOPIC
from offsets_auditor.errors import DecodeError
from offsets_auditor.findings import Finding, FindingKind, Severity
from offsets_auditor.groups.delta import DeltaBuilder
from offsets_auditor.groups.model import GroupState, PartitionGroups
from offsets_auditor.groups.replay import GroupsFold, misplaced_finding
from offsets_auditor.groups.rules import LoaderRules, LoadStart, loader_rules
from offsets_auditor.logdir.model import (
    LogDir,
    PartitionDir,
    Segment,
    held_offsets_partitions,
    offsets_partitions,
    open_partition,
    read_log_dir,
)
from offsets_auditor.reader.columns import Chunk
from offsets_auditor.reader.reading import DEFAULT_READ, ReadOptions, SegmentReader
from offsets_auditor.versions import KafkaVersion


@dataclass(frozen=True, slots=True)
class GroupsRecovery:
    """Every offsets partition of a log dir, replayed. ``groups`` in partition, then group
    order; ``findings`` include the log dir reader's."""

    rules: LoaderRules
    partitions: tuple[PartitionGroups, ...]
    findings: tuple[Finding, ...]

    @property
    def groups(self) -> tuple[GroupState, ...]:
        return tuple(g for p in self.partitions for g in p.groups)

    def group(self, name: str) -> GroupState | None:
        return next((g for g in self.groups if g.group == name), None)


@dataclass(frozen=True, slots=True)
class GroupsPlan:
    """How one log dir's partitions are replayed: the loader's rules, the topic's partition
    count (for ``partitionFor``), each partition's log start offset, and what was assumed."""

    rules: LoaderRules
    partitions_count: int
    log_starts: dict[tuple[str, int], int]
    findings: tuple[Finding, ...]

    def fold(self, partition: PartitionDir) -> GroupsFold:
        return GroupsFold(self.rules, partition.partition, self.partitions_count)

    def builder(
        self, partition: PartitionDir, segment: Segment, end_offset: int | None = None
    ) -> DeltaBuilder:
        start = (
            self.log_starts.get((OFFSETS_TOPIC, partition.partition))
            if self.rules.start is LoadStart.LOG_START_OFFSET
            else None
        )
        return DeltaBuilder(
            self.rules,
            f"{partition.name}/{segment.log.name}",
            start_offset=start,
            end_offset=end_offset,
        )


def plan(model: LogDir, rules: LoaderRules, partitions_count: int | None = None) -> GroupsPlan:
    """``partitions_count`` is the topic's partition count; ``None`` takes the highest partition
    number found plus one, which is right when the log dir holds every partition (one broker)
    and is said in a finding otherwise."""
    found = held_offsets_partitions(model)  # a dir the auditor may not read counts too
    findings = []
    if partitions_count is None:
        partitions_count = max(found, default=-1) + 1
        if found and len(found) != partitions_count:
            findings.append(
                Finding(
                    FindingKind.PARTITION_COUNT_GUESSED,
                    Severity.INFO,
                    f"{len(found)} offsets partitions here, numbered up to"
                    f" {partitions_count - 1}: assuming {partitions_count} partitions for"
                    " partitionFor; pass the topic's real partition count",
                )
            )
    log_starts = (
        model.log_start_checkpoint.offsets() if model.log_start_checkpoint is not None else {}
    )
    return GroupsPlan(rules, partitions_count, log_starts, tuple(findings))


def replay_partition(
    partition: PartitionDir,
    groups_plan: GroupsPlan,
    *,
    end_offset: int | None = None,
    read: SegmentReader = DEFAULT_READ.segment,
) -> PartitionGroups:
    """One offsets partition replayed; ``end_offset`` bounds the replay to the records below
    it (the state as of that offset)."""
    fold = groups_plan.fold(partition)
    for segment in partition.segments:
        builder = groups_plan.builder(partition, segment, end_offset)
        for item in read(partition, segment):
            builder.add(item)
        fold.add(builder.result())
    return fold.result()


class FoldingReader:
    """A segment reader (``ReadOptions.segment``'s shape) that also folds the groups of what
    it reads: read the partition's segments through :meth:`read`, in order, then take
    :meth:`result`."""

    def __init__(
        self, read: SegmentReader, groups_plan: GroupsPlan, partition: PartitionDir
    ) -> None:
        self._read = read
        self._plan = groups_plan
        self._fold = groups_plan.fold(partition)

    def read(self, partition: PartitionDir, segment: Segment) -> Iterator[Chunk | DecodeError]:
        builder = self._plan.builder(partition, segment)
        for item in self._read(partition, segment):
            builder.add(item)
            yield item
        self._fold.add(builder.result())

    def result(self) -> PartitionGroups:
        return self._fold.result()


def collect(
    model: LogDir,
    groups_plan: GroupsPlan,
    replayed: tuple[PartitionGroups, ...],
    damage: tuple[Finding, ...] = (),
) -> GroupsRecovery:
    """The recovery of a log dir from its partitions' replays, with the findings about them
    (``damage``: the partitions' damage findings, when the caller made them)."""
    findings = [*model.findings, *groups_plan.findings, *damage]
    for result in replayed:
        findings.extend(result.findings)
        findings.extend(misplaced_findings(result, groups_plan.partitions_count))
    return GroupsRecovery(groups_plan.rules, replayed, tuple(findings))


def misplaced_findings(replayed: PartitionGroups, partitions_count: int) -> list[Finding]:
    """The groups of ``replayed`` that ``partitionFor`` sends to another partition."""
    return [
        misplaced_finding(
            group.group, group.coordinator_partition, group.expected_partition, partitions_count
        )
        for group in replayed.groups
        if group.expected_partition != group.coordinator_partition
    ]


def without_groups(replayed: PartitionGroups, partitions_count: int) -> PartitionGroups:
    """``replayed`` less its groups, its findings about them kept: what :func:`collect` needs
    when the groups themselves are taken elsewhere (the scan writes them out per partition)."""
    return replace(
        replayed,
        groups=(),
        committed=None,
        findings=(*replayed.findings, *misplaced_findings(replayed, partitions_count)),
    )


def recover(
    logdir: Path | LogDir,
    version: KafkaVersion | str,
    partitions_count: int | None = None,
    *,
    new_coordinator: bool | None = None,
    read: ReadOptions = DEFAULT_READ,
) -> GroupsRecovery:
    """Replay every live ``__consumer_offsets-N`` partition of ``logdir`` (see :func:`plan`
    for ``partitions_count``)."""
    rules = loader_rules(version, new_coordinator)
    model = logdir if isinstance(logdir, LogDir) else read_log_dir(logdir, rules.version)
    groups_plan = plan(model, rules, partitions_count)
    if groups_plan.partitions_count <= 0:
        return GroupsRecovery(rules, (), (*model.findings, *groups_plan.findings))
    replayed = []
    damage: list[Finding] = []
    for partition in offsets_partitions(model):
        with open_partition(model, partition, rules.version) as snapshot:
            result = replay_partition(
                snapshot.partition, groups_plan, read=read.from_snapshot(snapshot)
            )
            replayed.append(result)
            place = place_of(model, snapshot.partition, result.log_end_offset)
            damage.extend(
                damage_findings(place, result.problems, result.record_problems, rules, None)
            )
    return collect(model, groups_plan, tuple(replayed), tuple(damage))


def recover_groups(
    logdir: Path | LogDir, version: KafkaVersion | str, partitions_count: int | None = None
) -> list[GroupState]:
    """Every group found in the offsets partitions of ``logdir``, as ``version``'s coordinator
    would load it (see :func:`recover`)."""
    return list(recover(logdir, version, partitions_count).groups)
