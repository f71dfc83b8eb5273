"""The audit across a detected version range: the verdicts of every stretch of releases in it.

When the broker's version is known only as a range, the audit emulates the range's lowest
version (``version_detection.combine``). The partitions are also emulated at the first release of
every other stretch of the range where the cleaner behaves differently
(``version_detection.spans``; ``audit_stages.audit_partition``, on the same scans); this module
judges those and:

- gives a partition ``alternatives`` (one :class:`VersionVerdict` per stretch, merged where
  they agree) when the stretches do not all give the same verdict, with a
  ``cleaner-verdict-depends-on-version`` finding naming them;
- says of the start-up checks (index files, recovery) only what holds across the range, and
  the rest as depending on the version, with each stretch's answer.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

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
from offsets_auditor.findings import Finding, FindingKind, Severity
from offsets_auditor.startup.checks import shutdown_findings, startup_report
from offsets_auditor.startup.indexes import IndexVerdict, Verdict
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
    loaded: Sequence[tuple[str, int]] | None = None,
) -> BrokerAudit:
    """``audit`` (emulated at the first stretch's version) with each partition's verdicts for
    every stretch, where they differ. ``stretches`` are oldest first and cover the range;
    ``emulated`` holds the log dir's partitions emulated at each stretch's config; ``loaded``
    the broker's load order, when known (``audit.partition.pool_rankings``)."""
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
                pool_rankings(audit.log_dir, list(emulated[config]), config, loaded),
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
                kind=FindingKind.CLEANER_VERDICT_DEPENDS_ON_VERSION,
                severity=Severity.WARNING,
                detail="the broker's version is known only as a range and the verdict differs"
                " within it: "
                + "; ".join(f"Kafka {v.versions}: {v.outcome.value} ({v.reason})" for v in merged),
                partition=p.name,
            )
        )
    return replace(audit, partitions=tuple(partitions), findings=tuple(findings))


#: the start-up findings judged per version (``startup.checks``)
STARTUP_KINDS = frozenset(
    {
        FindingKind.CORRUPT_INDEX,
        FindingKind.INDEX_LOAD_FAILURE,
        FindingKind.MISSING_INDEX,
        FindingKind.UNCLEAN_SHUTDOWN,
        FindingKind.BROKER_RUNNING,
    }
)
_SHUTDOWN_KINDS = frozenset({FindingKind.UNCLEAN_SHUTDOWN, FindingKind.BROKER_RUNNING})


def with_startup_alternatives(audit: BrokerAudit, stretches: Sequence[Span]) -> BrokerAudit:
    """``audit`` (its start-up checks judged at the first stretch's version) saying only what
    holds across every stretch of the detected range, and the rest as depending on the version:

    - an index file whose verdict differs gets the verdict ``depends-on-version``, its reason
      each stretch's verdict (so no count of corrupt files includes it);
    - a start-up finding that only some stretches make becomes one ``startup-depends-on-version``
      finding (info: nothing about it holds across the range) naming each stretch's answer;
    - the recovery's ``segments_to_recover`` and ``bytes_to_read`` (and ``if_crashed``'s) are
      what every stretch re-reads, with each stretch's totals in ``depends_on_version``, and
      the ``unclean-shutdown``/``broker-running`` findings say both.
    """
    if len(stretches) < 2:
        return audit
    runs = [(span, *startup_report(audit.log_dir, span.first)) for span in stretches]
    indexes = _merged_indexes(audit, runs)
    recovery = _merged_recovery(audit.recovery or runs[0][2], [(s, r) for s, _, r, _ in runs])
    tables = [
        (span, {_key(f): f for f in found if f.kind in STARTUP_KINDS}) for span, *_, found in runs
    ]
    primary = tables[0][1]
    findings = []
    for f in audit.findings:
        key = _key(f)
        if f.kind not in STARTUP_KINDS or key not in primary:
            findings.append(f)
        elif f.kind in _SHUTDOWN_KINDS:
            findings.extend(shutdown_findings(audit.log_dir, recovery))
        elif all(key in table for _, table in tables):
            differs = [
                (span, table[key].detail) for span, table in tables if table[key].detail != f.detail
            ]
            note = "".join(f" (with Kafka {span}: {detail})" for span, detail in differs)
            findings.append(replace(f, detail=f.detail + note) if note else f)
        else:
            findings.append(_depends_finding(f, tables, indexes))
    return replace(audit, findings=tuple(findings), indexes=tuple(indexes), recovery=recovery)


def _merged_indexes(
    audit: BrokerAudit, runs: Sequence[tuple[Span, list[IndexVerdict], Any, Any]]
) -> list[IndexVerdict]:
    by_file = [(span, {x.file: x for x in indexes}) for span, indexes, _, _ in runs]
    merged = []
    for entry in audit.indexes:
        answers = [(span, table[entry.file]) for span, table in by_file if entry.file in table]
        if len(answers) == len(by_file) and all(
            _kept(x.verdict) == _kept(entry.verdict) for _, x in answers
        ):
            merged.append(entry)
            continue
        merged.append(
            replace(
                entry,
                verdict=Verdict.DEPENDS_ON_VERSION,
                reason=_each(
                    [
                        (span, f"{x.verdict.value} ({x.reason})" if x else "not a file it loads")
                        for span, x in ((span, table.get(entry.file)) for span, table in by_file)
                    ]
                ),
            )
        )
    return merged


def _kept(verdict: Verdict) -> str:
    """A verdict, with those that leave the file as it is (checked and sound, or not checked)
    taken as one: the next start does the same with it."""
    return "kept" if verdict in (Verdict.OK, Verdict.NOT_CHECKED) else verdict.value


def _merged_recovery(
    recovery: dict[str, Any], runs: Sequence[tuple[Span, dict[str, Any]]]
) -> dict[str, Any]:
    """``recovery`` (the first stretch's) with what every stretch re-reads as its totals."""
    merged = dict(recovery)
    if recovery.get("if_crashed") is not None:
        # each stretch re-reads the same unflushed segments and adds its load-time rebuilds:
        # the least is what they all re-read
        crashed = [
            (span, r["if_crashed"]["segments_to_recover"], r["if_crashed"]["bytes_to_read"])
            for span, r in runs
        ]
        if len({(n, b) for _, n, b in crashed}) > 1:
            merged["if_crashed"] = {
                "segments_to_recover": min(n for _, n, _ in crashed),
                "bytes_to_read": min(b for _, _, b in crashed),
                "depends_on_version": _depends(crashed),
            }
    totals = [(span, r["segments_to_recover"], r["bytes_to_read"]) for span, r in runs]
    if len({(n, b) for _, n, b in totals}) < 2:
        return merged
    common = None
    for _, r in runs:
        found = Counter(
            (p["partition"], s["file"], s["bytes"], s["reason"])
            for p in r["by_partition"]
            for s in p["segments"]
        )
        common = found if common is None else common & found
    assert common is not None
    by_partition = []
    for p in recovery["by_partition"]:
        keep = Counter({k: v for k, v in common.items() if k[0] == p["partition"]})
        segments = []
        for s in p["segments"]:
            key = (p["partition"], s["file"], s["bytes"], s["reason"])
            if keep[key] > 0:
                keep[key] -= 1
                segments.append(s)
        if segments:
            by_partition.append({**p, "segments": segments})
    merged.update(
        segments_to_recover=sum(common.values()),
        bytes_to_read=sum(k[2] * v for k, v in common.items()),
        depends_on_version=_depends(totals),
        by_partition=by_partition,
    )
    return merged


def _depends(totals: Sequence[tuple[Span, int, int]]) -> list[dict[str, Any]]:
    """Each stretch's totals, adjacent stretches with the same ones merged."""
    merged: list[tuple[Span, int, int]] = []
    for span, n, b in totals:
        if merged and merged[-1][1:] == (n, b):
            merged[-1] = (Span(merged[-1][0].first, span.last), n, b)
        else:
            merged.append((span, n, b))
    return [
        {
            "kafka_versions": [str(span.first), str(span.last)],
            "segments_to_recover": n,
            "bytes_to_read": b,
        }
        for span, n, b in merged
    ]


def _depends_finding(
    f: Finding,
    tables: Sequence[tuple[Span, dict[tuple[object, ...], Finding]]],
    indexes: Sequence[IndexVerdict],
) -> Finding:
    """A start-up finding that only some stretches make, as what each stretch does."""
    key = _key(f)
    merged_reason = next((x.reason for x in indexes if f.file and x.file == f.file), None)
    answers = [
        (span, f"{table[key].kind} ({table[key].detail})" if key in table else "no finding")
        for span, table in tables
    ]
    detail = merged_reason if merged_reason is not None else _each(answers)
    return Finding(
        kind=FindingKind.STARTUP_DEPENDS_ON_VERSION,
        severity=Severity.INFO,
        detail="the broker's version is known only as a range, and what its next start does"
        f" here differs within it (give --server-log or --kafka-version to narrow it): {detail}",
        file=f.file,
        partition=f.partition,
        position=f.position,
    )


def _each(answers: Sequence[tuple[Span, str]]) -> str:
    """ "Kafka A to B: answer; Kafka C: answer", adjacent stretches with one answer merged."""
    merged: list[tuple[Span, str]] = []
    for span, answer in answers:
        if merged and merged[-1][1] == answer:
            merged[-1] = (Span(merged[-1][0].first, span.last), answer)
        else:
            merged.append((span, answer))
    return "; ".join(f"Kafka {span}: {answer}" for span, answer in merged)


def _key(f: Finding) -> tuple[object, ...]:
    return (f.kind, f.file, f.partition, f.position)
