"""What one broker's scan knows about the offsets topic.

A broker holds the partitions it is a replica of, not the topic: with replication factor R
and B brokers each holds about ``partitions * R / B`` of them, so the partition dirs one broker
has say nothing of the count. Its ``offsets.topic.num.partitions`` is the count the topic was
created with only if it has not changed since (Kafka reads it once, when it creates the topic:
A:0.9.0.1 and A:2.3.0 ``KafkaApis.scala`` ``createTopic(topic, config.offsetsTopicPartitions,
...)``; A:3.9 ``AutoTopicCreationManager.scala``), and the broker's default is 50 when
``server.properties`` does not set it (A:0.9.0.1 ``coordinator/OffsetConfig.scala``
``DefaultOffsetsTopicNumPartitions = 50``; A:3.9 ``GroupCoordinatorConfig.java``
``OFFSETS_TOPIC_PARTITIONS_DEFAULT = 50``, ``atLeast(1)``).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from enum import StrEnum
from typing import Final

#: The broker default of ``offsets.topic.num.partitions`` in every release from 0.8.2 to 4.x.
DEFAULT_OFFSETS_TOPIC_PARTITIONS: Final = 50


class ConfigOrigin(StrEnum):
    """Where a broker's ``offsets.topic.num.partitions`` came from."""

    SET = "set"  # in its server.properties (or given on the command line)
    DEFAULT = "default"  # its server.properties was read and does not set it: the broker uses 50
    UNKNOWN = "unknown"  # no config was given for this broker


@dataclass(frozen=True, slots=True)
class BrokerEvidence:
    """One broker's contribution (from its log dirs and its config).

    ``label`` names it in reasons (a host, a log dir). ``partitions_held`` are the live
    ``__consumer_offsets-N`` dirs found in its log dirs (``-delete``, ``-future`` and
    ``-stray`` dirs excluded). ``offsets_topic_partitions`` is ``None`` exactly when
    ``config_origin`` is ``UNKNOWN``."""

    label: str
    broker_id: int | None
    cluster_id: str | None
    partitions_held: frozenset[int]
    offsets_topic_partitions: int | None
    config_origin: ConfigOrigin = ConfigOrigin.SET

    @classmethod
    def from_scan(
        cls,
        label: str,
        *,
        broker_id: int | None,
        cluster_id: str | None,
        partitions_held: Iterable[int],
        config: dict[str, str] | None,
    ) -> BrokerEvidence:
        """Evidence from a scan: ``config`` is the broker's properties as read (``None``
        when none was given); a config without ``offsets.topic.num.partitions`` means the
        default, 50. A value that is not a positive integer is kept out (the broker refuses to
        start with it: A:3.9 ``atLeast(1)``) and the origin is ``UNKNOWN``."""
        held = frozenset(partitions_held)
        if config is None:
            return cls(label, broker_id, cluster_id, held, None, ConfigOrigin.UNKNOWN)
        raw = config.get("offsets.topic.num.partitions")
        if raw is None:
            return cls(
                label,
                broker_id,
                cluster_id,
                held,
                DEFAULT_OFFSETS_TOPIC_PARTITIONS,
                ConfigOrigin.DEFAULT,
            )
        try:
            value = int(raw.strip())
        except ValueError:
            value = 0
        if value < 1:
            return cls(label, broker_id, cluster_id, held, None, ConfigOrigin.UNKNOWN)
        return cls(label, broker_id, cluster_id, held, value, ConfigOrigin.SET)

    @property
    def name(self) -> str:
        return self.label if self.broker_id is None else f"broker {self.broker_id} ({self.label})"
