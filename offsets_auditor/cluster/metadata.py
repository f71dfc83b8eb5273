"""The offsets topic as cluster metadata states it: per partition its leader, replicas, ISR.

Two sources produce it: a live cluster's Metadata response (``offsets_auditor.live_cluster``)
and a KRaft ``__cluster_metadata`` log read from disk (:mod:`.kraft_log`). ZooKeeper-mode
clusters keep leadership in ZooKeeper (``/brokers/topics/__consumer_offsets/partitions/N/state``),
never on a broker's disks, so without a live cluster their leaders are unknown.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

#: ``leader`` of a partition without one (Kafka's ``-1``, ``LeaderConstants.NO_LEADER``).
NO_LEADER = -1


class MetadataSource(StrEnum):
    """Where partition leadership was read."""

    LIVE = "live-cluster"  # a Metadata response from a running broker
    KRAFT_LOG = "kraft-metadata-log"  # __cluster_metadata records on disk


@dataclass(frozen=True, slots=True)
class PartitionLeadership:
    """One offsets partition: ``leader`` is a broker id or :data:`NO_LEADER`; ``leader_epoch``
    is ``None`` where the source does not carry it (Metadata before v7, Kafka 2.1)."""

    partition: int
    leader: int
    replicas: tuple[int, ...]
    isr: tuple[int, ...]
    leader_epoch: int | None = None

    @property
    def has_leader(self) -> bool:
        return self.leader >= 0


@dataclass(frozen=True, slots=True)
class OffsetsTopicMetadata:
    """``__consumer_offsets`` as one source states it. ``partitions`` is sorted by partition;
    ``exists`` is False when the source says the topic does not exist (a cluster where no group
    ever asked for a coordinator). ``detail`` names the source for a reader: a broker's address,
    a metadata log dir and the offset read up to."""

    source: MetadataSource
    exists: bool
    partitions: tuple[PartitionLeadership, ...]
    detail: str
    cluster_id: str | None = None

    @property
    def partition_count(self) -> int:
        """One more than the highest partition stated (0 when none is)."""
        return max((p.partition for p in self.partitions), default=-1) + 1

    @property
    def complete(self) -> bool:
        """Partitions 0..count-1 are each stated once (a metadata log cut short may state
        fewer)."""
        return [p.partition for p in self.partitions] == list(range(self.partition_count))

    def leadership(self, partition: int) -> PartitionLeadership | None:
        return next((p for p in self.partitions if p.partition == partition), None)
