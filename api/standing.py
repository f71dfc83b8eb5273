"""How each offsets partition stands, for the status page: a problem (critical or warning,
with the reasons) or one of the quiet kinds the page folds away with a count (healthy, empty,
nothing to clean). Pure: a partitions row, its findings and the never-compacted threshold in,
a :class:`Standing` out."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Any


class Kind(StrEnum):
    CRITICAL = "critical"
    WARNING = "warning"
    HEALTHY = "healthy"
    EMPTY = "empty"
    NOTHING_TO_CLEAN = "nothing-to-clean"

    @property
    def is_problem(self) -> bool:
        return self in (Kind.CRITICAL, Kind.WARNING)


#: verdicts under which the partition does not compact at all (``cleaner.verdict.Outcome``)
STOPPED = frozenset({"thread-death", "blocked"})
#: verdicts under which there is nothing for the cleaner to do now
QUIET = frozenset({"nothing-to-clean", "not-eligible"})
#: the findings that repeat the verdict (``audit.report``): said once, as the verdict
_SAME_AS_VERDICT = {
    "cleaner-thread-death": "thread-death",
    "cleaner-blocked": "blocked",
    "cleaner-multi-pass": "multi-pass",
}
#: what the page heads each problem with
HEADLINES = {
    "thread-death": "its cleaner thread dies on it",
    "blocked": "no cleaner thread is left for it",
    "multi-pass": "it needs more than one pass of the offset map",
    "never compacted": "never compacted",
    "hanging-transaction": "a hanging transaction pins its compaction",
    "corrupt-segment": "a damaged segment",
    "corrupt-record": "a damaged record",
    "checksum-mismatch": "a checksum mismatch",
    "partition-skew": "far larger than the other offsets partitions",
    "corrupt-index": "index files the next start rebuilds (an unclean shutdown)",
    "unclean-shutdown": "the broker stopped without a clean shutdown",
    "cleaner-verdict-depends-on-version": "the verdict depends on the exact Kafka version",
}


def headline(reason: str) -> str:
    """The words a problem is headed with (its kind when it has none)."""
    return HEADLINES.get(reason, reason)


@dataclass(frozen=True, slots=True)
class Standing:
    kind: Kind
    #: why it is a problem, most severe first (empty for the quiet kinds)
    reasons: tuple[str, ...]
    #: whether "never compacted" is worth saying: the partition holds data beyond its active
    #: segment (which the cleaner never touches), or more than the alert's threshold
    never_compacted_matters: bool


def never_compacted_matters(p: dict[str, Any], threshold_bytes: int) -> bool:
    """A partition that was never compacted matters when it holds data beyond its active
    segment, or more than ``threshold_bytes`` (``OffsetsPartitionNeverCompacted``'s): an empty
    partition, or one whose only data is its active segment, has nothing a cleaner could do."""
    if not p.get("never_compacted"):
        return False
    size = p.get("size_bytes") or 0
    active = p.get("active_segment_bytes")
    beyond_active = size > (active if active is not None else size)
    return beyond_active or size > threshold_bytes


def standing(
    p: dict[str, Any], findings: Sequence[dict[str, Any]], threshold_bytes: int
) -> Standing:
    """How the partition ``p`` stands, given its open ``findings``.

    1. Its cleaner thread dies on it, or no thread is left for it (``thread-death``,
       ``blocked``): critical, it never compacts again.
    2. A critical finding about it (a hanging transaction, damage that stops the cleaner or
       the coordinator's load): critical.
    3. It needs more than one pass of the offset map (``multi-pass``): a warning.
    4. Never compacted, where that matters (:func:`never_compacted_matters`): a warning.
    5. A warning finding about it: a warning.
    6. Otherwise: empty (0 bytes), nothing to clean (``nothing-to-clean``, ``not-eligible``),
       or healthy.
    """
    matters = never_compacted_matters(p, threshold_bytes)
    critical: list[str] = []
    warning: list[str] = []
    outcome = p.get("outcome") or ""
    if outcome in STOPPED:
        critical.append(outcome)
    critical += [_kind(f) for f in findings if f.get("severity") == "critical"]
    if outcome == "multi-pass":
        warning.append(outcome)
    if matters:
        warning.append("never compacted")
    warning += [_kind(f) for f in findings if f.get("severity") == "warning"]
    if critical:
        return Standing(Kind.CRITICAL, _once(critical + warning), matters)
    if warning:
        return Standing(Kind.WARNING, _once(warning), matters)
    if not p.get("size_bytes"):
        return Standing(Kind.EMPTY, (), matters)
    if outcome in QUIET:
        return Standing(Kind.NOTHING_TO_CLEAN, (), matters)
    return Standing(Kind.HEALTHY, (), matters)


def _kind(finding: dict[str, Any]) -> str:
    kind = str(finding["kind"])
    return _SAME_AS_VERDICT.get(kind, kind)


def _once(reasons: list[str]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(reasons))
