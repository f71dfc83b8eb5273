"""Where the emulated behaviour changes inside a version range.

A range of several releases behaves the same between two changes, so emulating the first release
of each stretch covers the whole range. The releases below are those at which a rule of the
emulation changes (the functions named), each a Kafka change cited where the rule lives;
tests/version_detection/test_spans.py checks the lists against the rules themselves.
"""

from __future__ import annotations

from dataclasses import dataclass

from offsets_auditor.cleaner import behaviour
from offsets_auditor.version_detection.model import VersionRange
from offsets_auditor.versions import KafkaVersion, last_release_before

#: Releases at which the cleaner's emulated behaviour changes: the edges of the facts of
#: cleaner/behaviour.py (config defaults included), with why.
CLEANER_CHANGES: tuple[tuple[str, str], ...] = behaviour.changes()

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
