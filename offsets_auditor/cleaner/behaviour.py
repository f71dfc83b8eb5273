"""How the log cleaner behaves in each Kafka version: the facts the emulation branches on.

Each function is a pure rule with the Kafka change that introduced it (docs/kafka-internals.md
§4.4-4.7, checked against the tags named).
"""

from __future__ import annotations

from enum import StrEnum

from offsets_auditor.versions import KafkaVersion


class MapEra(StrEnum):
    """How ``Cleaner.buildOffsetMap`` fills the offset map."""

    #: 0.9.0.x: whole segments only; a dirty segment whose OFFSET SPAN exceeds the map's
    #: capacity fails ``require`` and kills the thread (0.9.0.1 ``LogCleaner.scala``).
    SEGMENT_SPAN = "0.9"
    #: 0.10.0.x: per keyed message until the map is full; the first dirty segment must fit
    #: (KAFKA-3587, 0.10.0.0 ``LogCleaner.scala``).
    FIRST_SEGMENT = "0.10.0"
    #: 0.10.1+: stop mid-segment when full; the rest waits for the next pass (KAFKA-3894).
    PARTIAL = "0.10.1"


def map_era(version: KafkaVersion) -> MapEra:
    if version.at_least("0.10.1"):
        return MapEra.PARTIAL
    if version.at_least("0.10.0"):
        return MapEra.FIRST_SEGMENT
    return MapEra.SEGMENT_SPAN


def modelled(version: KafkaVersion) -> bool:
    """The emulation covers 0.9.0.0 onward (the first release with the group coordinator's
    offsets topic as it is today)."""
    return version.at_least("0.9.0.0")


def exception_kills_thread(version: KafkaVersion) -> bool:
    """Up to 2.0.x an unexpected exception ends the cleaner thread for good; from 2.1.0 the
    partition is marked uncleanable and the thread goes on (KAFKA-7215)."""
    return not version.at_least("2.1.0")


def reads_transactions(version: KafkaVersion) -> bool:
    """0.11.0+: aborted transactions are dropped, markers handled, the last stable offset
    bounds cleaning."""
    return version.at_least("0.11.0")


def fast_forwards_segment_gaps(version: KafkaVersion) -> bool:
    """2.4.1 and 2.5.0+: after a fully read segment, the map's latest offset jumps to the next
    segment's base - 1 (absent in 2.4.0)."""
    return version.at_least("2.4.1")


def horizon_uses_largest_timestamp(version: KafkaVersion) -> bool:
    """0.10.1.x took the delete horizon from the last clean segment's largest timestamp;
    0.10.2.0 went back to its file modification time."""
    return version.at_least("0.10.1") and not version.at_least("0.10.2")


def v2_batch_delete_horizon(version: KafkaVersion) -> bool:
    """3.1.0+ (KIP-534): tombstones and markers in v2 batches carry their own delete horizon,
    stamped by the first clean that sees them; legacy records keep the segment rule."""
    return version.at_least("3.1.0")


def has_max_compaction_lag(version: KafkaVersion) -> bool:
    """2.3.0+ (KIP-354): ``max.compaction.lag.ms`` makes a partition cleanable regardless of
    its dirty ratio."""
    return version.at_least("2.3.0")


def has_min_compaction_lag(version: KafkaVersion) -> bool:
    return version.at_least("0.10.1")


def log_start_from_checkpoint(version: KafkaVersion) -> bool:
    """From 3.0 the cleaner starts from ``logStartOffset`` (log-start-offset checkpoint) rather
    than the first segment's base offset; it also resets a checkpoint beyond the log end."""
    return version.at_least("3.0.0")


def stats_count_shallow_entries(version: KafkaVersion) -> bool:
    """Up to 0.10.2 the "Start size"/"End size" banner counts one message per shallow entry (a
    compressed wrapper counts once); from 0.11.0 ``MemoryRecords.filterTo`` counts records."""
    return not version.at_least("0.11.0")
