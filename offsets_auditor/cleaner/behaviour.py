"""How the log cleaner behaves in each Kafka version, resolved once into one frozen object.

Every fact the emulation branches on is a row of :data:`FACTS`: the first release that has it
and, where it went away, the first release that no longer has it (docs/kafka-internals.md
§4.4-4.7, each checked against the tags named). :func:`behaviour_of` resolves the rows for one
version into a :class:`CleanerBehaviour`, which is what the passes, the selection and the
blockers receive; nothing else in the cleaner compares versions.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, fields
from enum import StrEnum
from typing import Final

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


@dataclass(frozen=True, slots=True)
class Fact:
    """A behaviour present from ``since`` up to, not including, ``until`` (None: still).
    ``emulated``: whether a rule of the emulation reads it; one that does not cuts no stretch
    of a version range (emulating there would repeat the stretch before) and the report names
    it as not emulated (:func:`not_emulated`)."""

    name: str
    since: str
    until: str | None
    why: str
    emulated: bool = True

    def holds(self, version: KafkaVersion) -> bool:
        return version.at_least(self.since) and (
            self.until is None or not version.at_least(self.until)
        )


#: Every version-dependent fact of the cleaner (and of the checks next to it), with its source.
FACTS: Final[tuple[Fact, ...]] = (
    Fact(
        "modelled",
        "0.9.0.0",
        None,
        "the group coordinator's offsets topic as it is today exists from 0.9.0.0",
    ),
    Fact(
        "cleaner_enabled_by_default",
        "0.9.0.1",
        None,
        "log.cleaner.enable defaults to true (0.9.0.0 shipped it false; KafkaConfig.Defaults)",
    ),
    Fact(
        "honours_offsets_segment_bytes",
        "0.10.1",
        None,
        "offsets.topic.segment.bytes reaches the topic: before, GroupCoordinator.create never"
        " passed it on and the topic got segment.bytes=104857600 (KAFKA-3718)",
    ),
    Fact(
        "exception_kills_thread",
        "0.0.0",
        "2.1.0",
        "up to 2.0.x an exception ends the cleaner thread for good; from 2.1.0 the partition is"
        " marked uncleanable and the thread goes on (KAFKA-7215)",
    ),
    Fact(
        "buffers_grow_to_topic_max",
        "0.10.1",
        None,
        "the cleaner's read buffer grows up to the larger of the topic's max.message.bytes and"
        " the broker's message.max.bytes (growBuffers(maxLogMessageSize)); before, up to the"
        " broker's (0.10.1.0/0.10.0.1 LogCleaner.scala)",
    ),
    Fact(
        "reads_record_batches",
        "0.10.2",
        None,
        "the cleaner reads segments as MemoryRecords (ByteBufferLogInputStream): a size field"
        " below 14 throws CorruptRecordException 'Record size ... is less than the minimum record"
        " overhead (14)'; before, ByteBufferMessageSet throws InvalidMessageException 'Message"
        " found with corrupt size (N) in shallow iterator' (0.10.1.0/0.10.2.0 LogCleaner.scala)",
    ),
    Fact(
        "names_record_size",
        "2.0.0",
        None,
        "'Record size N is less than the minimum record overhead (14)' names the size"
        " (ByteBufferLogInputStream.java; 1.1.0 leaves it out)",
    ),
    Fact(
        "grows_buffers_or_fails",
        "2.0.0",
        None,
        "an entry that never fits the read buffer fails in growBuffersOrFail with the batch size"
        " and the bytes left ('Log segment may be corrupt, ...'); before, growBuffers throws"
        " 'This log contains a message larger than maximum allowable size of N.'"
        " (2.0.0/1.1.0 LogCleaner.scala)",
    ),
    Fact(
        "retains_from_found_offset",
        "2.3.0",
        None,
        "shouldRetainRecord keeps a keyed record only when record.offset() >= foundOffset (-1"
        " for a key not in the map; apache/kafka#6590); before, it is redundant when foundOffset"
        " >= 0 && offset < foundOffset. They differ only on negative offsets (a damaged base"
        " offset field, outside the CRC)",
    ),
    Fact(
        "reads_transactions",
        "0.11.0",
        None,
        "aborted transactions are dropped, markers handled, the last stable offset bounds"
        " cleaning (0.11.0 LogCleaner.scala, LogCleanerManager.scala)",
    ),
    Fact(
        "fast_forwards_segment_gaps",
        "2.4.1",
        None,
        "after a fully read segment, the map's latest offset jumps to the next segment's base - 1"
        " (absent in 2.4.0)",
    ),
    Fact(
        "horizon_uses_largest_timestamp",
        "0.10.1",
        "0.10.2",
        "0.10.1.x took the delete horizon from the last clean segment's largest timestamp;"
        " 0.10.2.0 went back to its file modification time",
    ),
    Fact(
        "v2_batch_delete_horizon",
        "3.1.0",
        None,
        "tombstones and markers in v2 batches carry their own delete horizon, stamped by the"
        " first clean that sees them (KIP-534); not emulated: the emulation keeps judging them"
        " by the segments' modification time, as before 3.1.0",
        emulated=False,
    ),
    Fact(
        "has_max_compaction_lag",
        "2.3.0",
        None,
        "max.compaction.lag.ms makes a partition cleanable regardless of its dirty ratio (KIP-354)",
    ),
    Fact("has_min_compaction_lag", "0.10.1", None, "min.compaction.lag.ms (KIP-58)"),
    Fact(
        "log_start_from_checkpoint",
        "3.0.0",
        None,
        "the cleaner starts from logStartOffset (log-start-offset checkpoint) rather than the"
        " first segment's base offset, and resets a checkpoint beyond the log end",
    ),
    Fact(
        "stats_count_shallow_entries",
        "0.0.0",
        "0.11.0",
        "up to 0.10.2 the Start/End size banner counts one message per shallow entry (a"
        " compressed wrapper counts once); from 0.11.0 MemoryRecords.filterTo counts records",
    ),
    Fact(
        "splits_offset_overflow",
        "2.0.0",
        None,
        "a segment spanning more than Int.MaxValue offsets is split before cleaning"
        " (KAFKA-6264); before 2.0 the thread dies on it (KAFKA-5413)",
    ),
    Fact(
        "partial_map",
        "0.10.1",
        None,
        "the offset map stops mid-segment when full (KAFKA-3894)",
    ),
    Fact(
        "first_segment_map",
        "0.10.0",
        "0.10.1",
        "per keyed message until the map is full; the first dirty segment must fit (KAFKA-3587)",
    ),
)


@dataclass(frozen=True, slots=True)
class CleanerBehaviour:
    """The cleaner of one Kafka version (see :data:`FACTS` for each field)."""

    version: KafkaVersion
    modelled: bool
    cleaner_enabled_by_default: bool
    honours_offsets_segment_bytes: bool
    exception_kills_thread: bool
    buffers_grow_to_topic_max: bool
    reads_record_batches: bool
    names_record_size: bool
    grows_buffers_or_fails: bool
    retains_from_found_offset: bool
    reads_transactions: bool
    fast_forwards_segment_gaps: bool
    horizon_uses_largest_timestamp: bool
    v2_batch_delete_horizon: bool
    has_max_compaction_lag: bool
    has_min_compaction_lag: bool
    log_start_from_checkpoint: bool
    stats_count_shallow_entries: bool
    splits_offset_overflow: bool
    partial_map: bool
    first_segment_map: bool

    @property
    def map_era(self) -> MapEra:
        if self.partial_map:
            return MapEra.PARTIAL
        if self.first_segment_map:
            return MapEra.FIRST_SEGMENT
        return MapEra.SEGMENT_SPAN

    @property
    def legacy_retention(self) -> bool:
        """``shouldRetainMessage`` before 0.10.1: no ``pastLatestOffset`` rule, no transaction
        handling in the filter (the whole-segment eras)."""
        return not self.partial_map


if {f.name for f in FACTS} != {f.name for f in fields(CleanerBehaviour)} - {"version"}:
    raise TypeError("cleaner.behaviour: FACTS and CleanerBehaviour list different facts")


def behaviour_of(version: KafkaVersion) -> CleanerBehaviour:
    """The cleaner of ``version``: every fact of :data:`FACTS` resolved."""
    return CleanerBehaviour(version=version, **{f.name: f.holds(version) for f in FACTS})


def changes() -> tuple[tuple[str, str], ...]:
    """Every release at which an emulated fact starts or stops holding, with why, in release
    order."""
    return _edges(f for f in FACTS if f.emulated)


def not_emulated(lowest: KafkaVersion, highest: KafkaVersion) -> tuple[Fact, ...]:
    """The facts no rule of the emulation reads that hold at some release from ``lowest`` to
    ``highest``: where the broker's cleaner may differ from what is emulated."""
    return tuple(
        f
        for f in FACTS
        if not f.emulated
        and highest.at_least(f.since)
        and (f.until is None or not lowest.at_least(f.until))
    )


def _edges(facts: Iterable[Fact]) -> tuple[tuple[str, str], ...]:
    found: dict[KafkaVersion, list[str]] = {}
    for fact in facts:
        for edge, verb in ((fact.since, "from"), (fact.until, "until")):
            if edge is not None and edge != "0.0.0" and fact.name != "modelled":
                found.setdefault(KafkaVersion.parse(edge), []).append(
                    f"{fact.name}: {fact.why}" if verb == "from" else f"no longer {fact.name}"
                )
    return tuple((str(v), "; ".join(why)) for v, why in sorted(found.items()))
