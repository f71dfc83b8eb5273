"""The on-call answer for one group: its ``__consumer_offsets`` partition, the broker that
coordinates it (the partition's leader), and how sure that is.

The partition is ``Utils.abs(groupId.hashCode) % count`` (``offsets_auditor.coordinator``) over
the count :mod:`.partition_count` decides; with no supported count there is no partition. The
coordinator is the partition's leader (A:0.9.0.1 ``KafkaApis.handleGroupCoordinatorRequest``,
A:2.3.0 ``KafkaApis.handleFindCoordinatorRequest``: the leader of
``partitionFor(groupId)`` in the metadata cache), taken from the live cluster, else from a KRaft
metadata log; a ZooKeeper cluster's leaders are not on any broker's disk, so without a live
cluster the answer names the brokers holding a replica and says the leader is unknown.

:func:`partition_views` gives every partition with its metadata and the brokers whose scans
hold it, for a cluster page.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from offsets_auditor.cluster.evidence import BrokerEvidence
from offsets_auditor.cluster.metadata import (
    MetadataSource,
    OffsetsTopicMetadata,
    PartitionLeadership,
)
from offsets_auditor.cluster.partition_count import PartitionCount, decide_partition_count
from offsets_auditor.coordinator import coordinator_partition


@dataclass(frozen=True, slots=True)
class PartitionView:
    """One offsets partition across the cluster: ``leadership`` from ``source`` (``None`` when
    no metadata states it), and the brokers whose scans hold its dir (``held_by``: broker ids,
    or labels for evidence without one). ``notes`` are disagreements between the metadata and
    the disks (a replica whose broker's scan lacks the dir, a dir on a broker that is no
    replica)."""

    partition: int
    leadership: PartitionLeadership | None
    source: MetadataSource | None
    held_by: tuple[str, ...]
    notes: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class CoordinatorAnswer:
    """``partition`` is ``None`` when no count is supported (``count.reasons`` say why);
    ``coordinator`` is the leader's broker id, ``None`` when unknown or when the partition has
    no leader (then the group has no coordinator: clients get COORDINATOR_NOT_AVAILABLE)."""

    group_id: str
    partition: int | None
    count: PartitionCount
    coordinator: int | None
    view: PartitionView | None
    uncertain: bool
    reasons: tuple[str, ...]


def coordinator_answer(
    group_id: str,
    brokers: Sequence[BrokerEvidence],
    live: OffsetsTopicMetadata | None = None,
    kraft: OffsetsTopicMetadata | None = None,
    count: PartitionCount | None = None,
) -> CoordinatorAnswer:
    """The answer for ``group_id`` from the brokers' evidence and the metadata given.
    ``count`` may be passed when already decided for the same evidence (many lookups)."""
    decided = count if count is not None else decide_partition_count(brokers, live, kraft)
    if decided.count is None:
        return CoordinatorAnswer(
            group_id,
            None,
            decided,
            None,
            None,
            True,
            ("no partition: " + "; ".join(decided.reasons),),
        )
    partition = coordinator_partition(group_id, decided.count)
    view = partition_view(partition, brokers, live, kraft)
    reasons = [
        f"partition {partition} = Utils.abs(hashCode) % {decided.count} ({decided.source.value})"
    ]
    uncertain = decided.uncertain
    leadership = view.leadership
    coordinator = None
    if leadership is None:
        uncertain = True
        holders = ", ".join(view.held_by) or "no scanned broker"
        reasons.append(
            "the leader is unknown: no live cluster or KRaft metadata states it (a ZooKeeper"
            f" cluster keeps it in ZooKeeper; --bootstrap-server asks); replicas on disk: {holders}"
        )
    elif not leadership.has_leader:
        reasons.append(
            f"partition {partition} has no leader ({view.source}): the group has no coordinator"
            " until one is elected"
        )
    else:
        coordinator = leadership.leader
        epoch = (
            "" if leadership.leader_epoch is None else f", leader epoch {leadership.leader_epoch}"
        )
        reasons.append(f"led by broker {coordinator} ({view.source}{epoch})")
    reasons += list(view.notes)
    return CoordinatorAnswer(
        group_id, partition, decided, coordinator, view, uncertain, tuple(reasons)
    )


def partition_view(
    partition: int,
    brokers: Sequence[BrokerEvidence],
    live: OffsetsTopicMetadata | None = None,
    kraft: OffsetsTopicMetadata | None = None,
) -> PartitionView:
    """One partition: the leadership the live cluster states, else the KRaft log's."""
    leadership, source = None, None
    notes = []
    for meta in (live, kraft):
        if meta is None or not meta.exists:
            continue
        stated = meta.leadership(partition)
        if stated is None:
            continue
        if leadership is None:
            leadership, source = stated, meta.source
        elif stated.leader != leadership.leader:
            notes.append(
                f"the {meta.source.value} says broker {stated.leader} leads; the"
                f" {source} (used) says {leadership.leader}"
            )
    holders = [b for b in brokers if partition in b.partitions_held]
    held_by = tuple(str(b.broker_id) if b.broker_id is not None else b.label for b in holders)
    if leadership is not None:
        scanned = {b.broker_id for b in brokers if b.broker_id is not None}
        holder_ids = {b.broker_id for b in holders}
        lacking = [r for r in leadership.replicas if r in scanned and r not in holder_ids]
        if lacking:
            notes.append(
                f"broker(s) {', '.join(map(str, lacking))} are replicas of partition {partition}"
                " but their scans do not hold its dir"
            )
        extra = [
            b for b in holders if b.broker_id is not None and b.broker_id not in leadership.replicas
        ]
        if extra:
            notes.append(
                f"broker(s) {', '.join(str(b.broker_id) for b in extra)} hold a dir of"
                f" partition {partition} but are not among its replicas"
                f" {list(leadership.replicas)} (a stale copy)"
            )
    return PartitionView(partition, leadership, source, held_by, tuple(notes))


def partition_views(
    brokers: Sequence[BrokerEvidence],
    live: OffsetsTopicMetadata | None = None,
    kraft: OffsetsTopicMetadata | None = None,
    count: PartitionCount | None = None,
) -> tuple[PartitionView, ...]:
    """Every partition 0..count-1 (or every partition known to exist, when no count is
    supported)."""
    decided = count if count is not None else decide_partition_count(brokers, live, kraft)
    n = decided.count if decided.count is not None else decided.at_least
    return tuple(partition_view(p, brokers, live, kraft) for p in range(n))
