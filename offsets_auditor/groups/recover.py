"""Recover every group of a broker log dir: each ``__consumer_offsets`` partition replayed.

Reads segments read-only through :mod:`offsets_auditor.fs`, decodes them with
:func:`offsets_auditor.decode.decode_segment` (streamed, batch by batch) and folds the records
with :class:`offsets_auditor.groups.replay.PartitionReplay`. Where the load starts follows the
broker version (rules 1 in :mod:`offsets_auditor.groups.rules`): from 0.11 batches wholly
below the partition's log start offset (``log-start-offset-checkpoint``) are not replayed.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from offsets_auditor.decode import DecodedRecord, RowDecoder
from offsets_auditor.errors import DecodeError
from offsets_auditor.findings import Finding, Severity
from offsets_auditor.groups.model import GroupState, PartitionGroups
from offsets_auditor.groups.replay import PartitionReplay
from offsets_auditor.groups.rules import LoaderRules, LoadStart, loader_rules
from offsets_auditor.logdir import (
    OFFSETS_TOPIC,
    LogDir,
    PartitionDir,
    offsets_partitions,
    read_log_dir,
)
from offsets_auditor.reading import DEFAULT_READ, ReadOptions
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


def partition_records(
    partition: PartitionDir, start_offset: int | None = None, read: ReadOptions = DEFAULT_READ
) -> Iterator[DecodedRecord | DecodeError]:
    """The decoded records of a partition's segments in offset order, skipping batches that
    end below ``start_offset``. A segment that cannot be opened is a ``DecodeError``."""
    for segment in partition.segments:
        name = f"{partition.name}/{segment.log.name}"
        rows = RowDecoder(name)
        for item in read.segment(partition, segment):
            if isinstance(item, DecodeError):
                yield item
                continue
            for record in rows.rows(item):
                if (
                    start_offset is not None
                    and isinstance(record, DecodedRecord)
                    and record.batch.next_offset <= start_offset
                ):
                    continue
                yield record


def replay_partition(
    partition: PartitionDir,
    rules: LoaderRules,
    partitions_count: int,
    *,
    log_start_offset: int | None = None,
    end_offset: int | None = None,
) -> PartitionGroups:
    """One offsets partition replayed with ``rules``; ``end_offset`` bounds the replay to the
    records below it (the state as of that offset)."""
    start = log_start_offset if rules.start is LoadStart.LOG_START_OFFSET else None
    replay = PartitionReplay(rules, partition.partition, partitions_count, end_offset=end_offset)
    replay.feed(partition_records(partition, start))
    return replay.result()


def recover(
    logdir: Path | LogDir,
    version: KafkaVersion | str,
    partitions_count: int | None = None,
    *,
    new_coordinator: bool | None = None,
) -> GroupsRecovery:
    """Replay every live ``__consumer_offsets-N`` partition of ``logdir``.

    ``partitions_count`` is the topic's partition count (``expected_partition`` of each group);
    ``None`` takes the highest partition number found plus one, which is right when the log
    dir holds every partition (one broker) and is said in a finding otherwise."""
    rules = loader_rules(version, new_coordinator)
    model = logdir if isinstance(logdir, LogDir) else read_log_dir(logdir, rules.version)
    found = offsets_partitions(model)
    findings = list(model.findings)
    if partitions_count is None:
        partitions_count = max((p.partition for p in found), default=-1) + 1
        if found and len(found) != partitions_count:
            findings.append(
                Finding(
                    "partition-count-guessed",
                    Severity.INFO,
                    f"{len(found)} offsets partitions here, numbered up to"
                    f" {partitions_count - 1}: assuming {partitions_count} partitions for"
                    " partitionFor; pass the topic's real partition count",
                )
            )
    if partitions_count <= 0:
        return GroupsRecovery(rules, (), tuple(findings))
    log_starts = (
        model.log_start_checkpoint.offsets() if model.log_start_checkpoint is not None else {}
    )
    replayed = tuple(
        replay_partition(
            partition,
            rules,
            partitions_count,
            log_start_offset=log_starts.get((OFFSETS_TOPIC, partition.partition)),
        )
        for partition in found
    )
    for result in replayed:
        findings.extend(result.findings)
        for group in result.groups:
            if group.expected_partition != group.coordinator_partition:
                findings.append(
                    Finding(
                        "misplaced-group",
                        Severity.WARNING,
                        f"group {group.group!r} has records in __consumer_offsets-"
                        f"{group.coordinator_partition}, but partitionFor sends it to"
                        f" __consumer_offsets-{group.expected_partition} with"
                        f" {partitions_count} partitions: its coordinator never reads these",
                        partition=f"{OFFSETS_TOPIC}-{group.coordinator_partition}",
                        group=group.group,
                    )
                )
    return GroupsRecovery(rules, replayed, tuple(findings))


def recover_groups(
    logdir: Path | LogDir, version: KafkaVersion | str, partitions_count: int | None = None
) -> list[GroupState]:
    """Every group found in the offsets partitions of ``logdir``, as ``version``'s coordinator
    would load it (see :func:`recover`)."""
    return list(recover(logdir, version, partitions_count).groups)
