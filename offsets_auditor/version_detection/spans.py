"""Where the emulated behaviour changes inside a version range.

A range of several releases behaves the same between two changes, so emulating the first release
of each stretch covers the whole range. The releases below are those at which a rule of the
emulation changes (the functions named), each a Kafka change cited where the rule lives;
tests/version_detection/test_spans.py checks the lists against the rules themselves.
"""

from __future__ import annotations

from dataclasses import dataclass

from offsets_auditor.version_detection.model import VersionRange
from offsets_auditor.versions import KafkaVersion, last_release_before

#: Releases at which the cleaner's emulated behaviour changes (cleaner/behaviour.py,
#: cleaner/config.py, cleaner/blockers.py).
CLEANER_CHANGES: tuple[tuple[str, str], ...] = (
    ("0.9.0.1", "log.cleaner.enable defaults to true (config.default_cleaner_enabled)"),
    ("0.10.0.0", "the offset map fills per message; the first dirty segment must fit (map_era)"),
    (
        "0.10.1.0",
        "the map may fill mid-segment and the rest waits for the next pass (map_era);"
        " min.compaction.lag.ms; offsets.topic.segment.bytes honoured",
    ),
    ("0.10.2.0", "the delete horizon comes from the last clean segment's mtime again"),
    ("0.11.0.0", "transactions bound cleaning; the stats count records (reads_transactions)"),
    ("2.0.0", "segments spanning more than Int.MaxValue offsets are split (blockers)"),
    ("2.1.0", "a failing clean marks the partition uncleanable instead of killing the thread"),
    ("2.3.0", "max.compaction.lag.ms (has_max_compaction_lag)"),
    ("2.4.1", "the map's latest offset jumps over segment gaps (fast_forwards_segment_gaps)"),
    ("3.0.0", "cleaning starts at logStartOffset (log_start_from_checkpoint)"),
    ("3.1.0", "v2 batches carry their own delete horizon (v2_batch_delete_horizon)"),
)

#: Releases at which what the next start does to index files changes (indexes.py, recovery.py).
STARTUP_CHANGES: tuple[tuple[str, str], ...] = (
    ("0.10.1.0", "time indexes are loaded and checked"),
    ("0.11.0.0", "transaction indexes are loaded and checked"),
    ("1.1.0", "index checks throw CorruptIndexException; a missing .index is recreated empty"),
    ("2.0.0", "the offset index check accepts lastOffset == baseOffset"),
    ("2.3.0", "offset and time index checks are skipped at load"),
    ("3.2.0", "a missing offset index above the recovery point is rebuilt without a log line"),
)


@dataclass(frozen=True, slots=True)
class Span:
    """Releases ``first`` to ``last`` (inclusive) of a range, which behave the same."""

    first: KafkaVersion
    last: KafkaVersion

    def __str__(self) -> str:
        return str(self.first) if self.first == self.last else f"{self.first} to {self.last}"


def spans(
    versions: VersionRange, changes: tuple[tuple[str, str], ...], start: KafkaVersion
) -> list[Span]:
    """``versions`` from ``start`` (its lowest version the emulation models) cut at every
    change inside it: one :class:`Span` per stretch of equal behaviour, oldest first."""
    cuts = [
        v
        for v in (KafkaVersion.parse(text) for text, _ in changes)
        if start < v <= versions.highest
    ]
    firsts = [start, *cuts]
    found = []
    for i, first in enumerate(firsts):
        if i + 1 < len(firsts):
            last = last_release_before(firsts[i + 1]) or first
        else:
            last = versions.highest
        found.append(Span(first, max(first, last)))
    return found
