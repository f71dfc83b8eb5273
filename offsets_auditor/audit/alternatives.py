"""The audit across a detected version range: the verdicts of every stretch of releases in it.

When the broker's version is known only as a range, the audit emulates the range's lowest
version (``version_detection.combine``). The partitions are also emulated at the first release of
every other stretch of the range where the cleaner behaves differently
(``version_detection.spans``; ``audit_stages.audit_partition``, on the same scans); this module
judges those and:

- gives a partition ``alternatives`` (one :class:`VersionVerdict` per stretch, merged where
  they agree) when the stretches do not all give the same verdict, with a
  ``cleaner-verdict-depends-on-version`` finding naming them;
- marks each start-up finding (index checks, recovery) that holds for only part of the range,
  or says something else elsewhere in it, with the versions it holds for.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace

from offsets_auditor.audit.partition import (
    BrokerAudit,
    Emulated,
    PartitionAudit,
    judge,
    passes_before_threads_die,
    pool_rankings,
)
from offsets_auditor.cleaner.config import CleanerConfig
from offsets_auditor.cleaner.verdict import Outcome, VersionVerdict
from offsets_auditor.findings import Finding, Severity
from offsets_auditor.startup.checks import startup_report
from offsets_auditor.version_detection.spans import Span

#: outcome, reason, passes that happen, their end offsets, Kafka's failure message
_Row = tuple[Outcome, str, int, tuple[int, ...], str | None]


def verdicts_of(
    emulated: Sequence[Emulated],
    config: CleanerConfig,
    rankings: tuple[dict[str, int], ...] | None = None,
) -> dict[str, _Row]:
    """Per partition: (outcome, reason, passes happening, their end offsets, message), from
    the log dir's partitions emulated at ``config`` (another version); ``rankings`` as for
    :func:`~offsets_auditor.audit.passes_before_threads_die`."""
    executed, deaths = passes_before_threads_die(list(emulated), config, rankings)
    killers = [e.partition.name for e in emulated if e.kills_thread]
    found: dict[str, _Row] = {}
    for e in emulated:
        done = executed[e.partition.name]
        verdict, reason = judge(e, done, killers, deaths >= config.threads, config)
        passes = e.passes[:done]
        message = e.failure.message if e.failure else None
        found[e.partition.name] = (
            verdict,
            reason,
            len(passes),
            tuple(x.end_offset for x in passes),
            message,
        )
    return found


def with_cleaner_alternatives(
    audit: BrokerAudit,
    stretches: Sequence[tuple[Span, CleanerConfig]],
    emulated: Mapping[CleanerConfig, Sequence[Emulated]],
) -> BrokerAudit:
    """``audit`` (emulated at the first stretch's version) with each partition's verdicts for
    every stretch, where they differ. ``stretches`` are oldest first and cover the range;
    ``emulated`` holds the log dir's partitions emulated at each stretch's config."""
    if len(stretches) < 2:
        return audit
    per_stretch: list[tuple[Span, dict[str, _Row]]] = []
    for span, config in stretches:
        if config == audit.config:
            table: dict[str, _Row] = {
                p.name: (
                    p.outcome,
                    p.reason,
                    len(p.passes),
                    tuple(x.end_offset for x in p.passes),
                    p.emulated.failure.message if p.emulated.failure else None,
                )
                for p in audit.partitions
            }
        else:
            table = verdicts_of(
                emulated[config],
                config,
                pool_rankings(audit.log_dir, list(emulated[config]), config),
            )
        per_stretch.append((span, table))
    partitions: list[PartitionAudit] = []
    findings = list(audit.findings)
    for p in audit.partitions:
        merged: list[VersionVerdict] = []
        for span, table in per_stretch:
            if p.name not in table:
                continue
            verdict = VersionVerdict(span.first, span.last, *table[p.name])
            if merged and merged[-1].same_verdict(verdict):
                merged[-1] = replace(merged[-1], last=span.last)
            else:
                merged.append(verdict)
        if len(merged) < 2:
            partitions.append(p)
            continue
        partitions.append(replace(p, alternatives=tuple(merged)))
        findings.append(
            Finding(
                kind="cleaner-verdict-depends-on-version",
                severity=Severity.WARNING,
                detail="the broker's version is known only as a range and the verdict differs"
                " within it: "
                + "; ".join(f"Kafka {v.versions}: {v.outcome.value} ({v.reason})" for v in merged),
                partition=p.name,
            )
        )
    return replace(audit, partitions=tuple(partitions), findings=tuple(findings))


def with_startup_alternatives(audit: BrokerAudit, stretches: Sequence[Span]) -> BrokerAudit:
    """``audit`` whose start-up findings (judged at the first stretch's version) say for which
    versions of the range they hold, when that is not all of them."""
    if len(stretches) < 2:
        return audit
    startup_kinds = {"corrupt-index", "index-load-failure", "missing-index", "unclean-shutdown"}
    per_stretch: list[tuple[Span, dict[tuple[object, ...], Finding]]] = []
    for span in stretches:
        _, _, found = startup_report(audit.log_dir, span.first)
        per_stretch.append((span, {_key(f): f for f in found if f.kind in startup_kinds}))
    primary = per_stretch[0][1]
    findings = []
    for f in audit.findings:
        key = _key(f)
        if f.kind not in startup_kinds or key not in primary:
            findings.append(f)
            continue
        holds = [i for i, (_, table) in enumerate(per_stretch) if key in table]
        differs = [
            (span, table[key].detail)
            for span, table in per_stretch
            if key in table and table[key].detail != f.detail
        ]
        note = ""
        if len(holds) < len(per_stretch):
            where = _versions([per_stretch[i][0] for i in holds], holds)
            note = f" (with Kafka {where} only; the rest of the detected range does not)"
        for span, detail in differs:
            note += f" (with Kafka {span}: {detail})"
        findings.append(replace(f, detail=f.detail + note) if note else f)
    return replace(audit, findings=tuple(findings))


def _key(f: Finding) -> tuple[object, ...]:
    return (f.kind, f.file, f.partition, f.position)


def _versions(spans: Sequence[Span], positions: Sequence[int]) -> str:
    """Spans (at these positions of the full list) as version ranges, adjacent ones merged."""
    merged: list[tuple[Span, int]] = []
    for span, position in zip(spans, positions, strict=True):
        if merged and merged[-1][1] == position - 1:
            merged[-1] = (Span(merged[-1][0].first, span.last), position)
        else:
            merged.append((span, position))
    return ", ".join(str(span) for span, _ in merged)
