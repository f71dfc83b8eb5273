"""How each offsets partition stands, for the status page: a problem (critical or warning,
with the reasons) or one of the quiet kinds the page folds away with a count (healthy, empty,
nothing to clean). Pure: a partitions row, its findings and the never-compacted threshold in,
a :class:`Standing` out."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from offsets_auditor.cleaner.verdict import Outcome
from offsets_auditor.findings import FindingKind


class Kind(StrEnum):
    CRITICAL = "critical"
    WARNING = "warning"
    HEALTHY = "healthy"
    EMPTY = "empty"
    NOTHING_TO_CLEAN = "nothing-to-clean"

    @property
    def is_problem(self) -> bool:
        return self in (Kind.CRITICAL, Kind.WARNING)


#: verdicts under which the partition does not compact at all
STOPPED = frozenset({Outcome.THREAD_DEATH, Outcome.BLOCKED})
#: verdicts under which there is nothing for the cleaner to do now
QUIET = frozenset({Outcome.NOTHING_TO_CLEAN, Outcome.NOT_ELIGIBLE})
#: the findings that repeat the verdict (``audit.report``): said once, as the verdict
_SAME_AS_VERDICT: dict[str, str] = {
    FindingKind.CLEANER_THREAD_DEATH: Outcome.THREAD_DEATH,
    FindingKind.CLEANER_BLOCKED: Outcome.BLOCKED,
    FindingKind.CLEANER_MULTI_PASS: Outcome.MULTI_PASS,
}
NEVER_COMPACTED = "never compacted"
#: what the page heads each problem with (a verdict, never compacted, or a finding's kind)
HEADLINES: dict[str, str] = {
    Outcome.THREAD_DEATH: "its cleaner thread dies on it",
    Outcome.BLOCKED: "no cleaner thread is left for it",
    Outcome.MULTI_PASS: "it needs more than one pass of the offset map",
    NEVER_COMPACTED: "never compacted",
    FindingKind.HANGING_TRANSACTION: "a hanging transaction pins its compaction",
    FindingKind.CORRUPT_SEGMENT: "a damaged segment",
    FindingKind.CORRUPT_RECORD: "a damaged record",
    FindingKind.CHECKSUM_MISMATCH: "a checksum mismatch",
    FindingKind.PARTITION_SKEW: "far larger than the other offsets partitions",
    FindingKind.CORRUPT_INDEX: "index files the next start rebuilds (an unclean shutdown)",
    FindingKind.UNCLEAN_SHUTDOWN: "the broker stopped without a clean shutdown",
    FindingKind.CLEANER_VERDICT_DEPENDS_ON_VERSION: (
        "the verdict depends on the exact Kafka version"
    ),
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
    if outcome == Outcome.MULTI_PASS:
        warning.append(outcome)
    if matters:
        warning.append(NEVER_COMPACTED)
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
