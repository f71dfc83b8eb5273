"""What a live run showed: the audits' outcomes next to what the broker's cleaner did meanwhile.

The broker's own words decide what it renamed and removed: ``log-cleaner.log`` (A:2.3.0
``LogCleaner.cleanSegments``: "Swapping in cleaned segment LogSegment(baseOffset=N, ...) for
segment(s) List(LogSegment(baseOffset=M, ...), ...) in log Log(<dir>/<partition>)"; the stats
banner "Log cleaner thread T cleaned log <partition>" once per clean) and ``server.log``
(A:2.3.0 ``Log.asyncDeleteSegment`` -> ``deleteSeg``: "[Log partition=<partition>, dir=<dir>]
Deleting segment N"), each with its log4j time, and the directory listing after the run.

A finding names a file the broker renamed or removed when the file it names (``file``, or a
path in ``detail``) has a cleaner suffix (``.cleaned``, ``.swap``, ``.deleted``), or belongs to
a segment swapped or deleted while that audit ran (log4j times, +-2 s), or is gone after the run.
"""

from __future__ import annotations

import re
import time
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

DAMAGE = {
    "corrupt-record",
    "corrupt-segment",
    "checksum-mismatch",
    "oversized-entry",
    "unreadable-file",
    "index-load-failure",
    "corrupt-index",
    "truncated-tail",
}
SLACK_S = 2.0
_TIME = re.compile(r"^\[(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d),(\d{3})\]")
_SWAP = re.compile(
    r"Swapping in cleaned segment (.*) for segment\(s\) (.*) in log Log\(.*/(\S+?)\)"
)
_BASE = re.compile(r"baseOffset=(\d+)")
_BANNER = re.compile(r"Log cleaner thread \d+ cleaned log (\S+)")
_DELETING = re.compile(r"\[Log partition=(\S+), dir=.*\] Deleting segment (\d+)")
_NAMED = re.compile(
    r"(__consumer_offsets-\d+)/(\d{20})\.(log|index|timeindex|txnindex|snapshot)"
    r"(\.(?:cleaned|swap|deleted))?"
)


@dataclass
class BrokerEvents:
    """When the broker touched which segment: ``(time, partition, base offset)``."""

    cleanings: list[tuple[float, str]] = field(default_factory=list)
    swaps: list[tuple[float, str, tuple[int, ...], tuple[int, ...]]] = field(default_factory=list)
    deletes: list[tuple[float, str, int]] = field(default_factory=list)

    def touched(self, partition: str, base: int, start: float, end: float) -> str | None:
        for at, part, new, old in self.swaps:
            if part == partition and base in new + old and start - SLACK_S <= at <= end + SLACK_S:
                return f"segment {base} swapped at {at:.3f}"
        for at, part, seg in self.deletes:
            if part == partition and seg == base and start - SLACK_S <= at <= end + SLACK_S:
                return f"segment {base} deleted at {at:.3f}"
        return None


def log4j_time(line: str) -> float | None:
    """Epoch seconds of a log4j line's ``[yyyy-MM-dd HH:mm:ss,SSS]`` (the broker's local time)."""
    m = _TIME.match(line)
    if m is None:
        return None
    return time.mktime(time.strptime(m.group(1), "%Y-%m-%d %H:%M:%S")) + int(m.group(2)) / 1000


def read_events(log_cleaner: Path, server_log: Path) -> BrokerEvents:
    events = BrokerEvents()
    at = 0.0
    for line in _lines(log_cleaner):  # the stats banner's lines carry no time: the last one holds
        at = log4j_time(line) or at
        if (m := _SWAP.search(line)) is not None:
            new = tuple(int(b) for b in _BASE.findall(m.group(1)))
            old = tuple(int(b) for b in _BASE.findall(m.group(2)))
            events.swaps.append((at, m.group(3), new, old))
        elif (m := _BANNER.search(line)) is not None:
            events.cleanings.append((at, m.group(1)))
    last = 0.0
    for line in _lines(server_log):
        last = log4j_time(line) or last
        if (m := _DELETING.search(line)) is not None:
            events.deletes.append((last, m.group(1), int(m.group(2))))
    return events


def _lines(path: Path) -> Iterable[str]:
    if not path.exists():
        return []
    return path.read_text(errors="replace").splitlines()


def renamed_by_broker(
    finding: dict[str, Any], run: dict[str, Any], events: BrokerEvents, after: set[str]
) -> str | None:
    """Why ``finding`` names a file the broker renamed or removed (None: it does not)."""
    text = f"{finding.get('file') or ''} {finding.get('detail') or ''}"
    for m in _NAMED.finditer(text):
        partition, base, name = m.group(1), int(m.group(2)), m.group(0)
        if m.group(4):
            return f"{name}: a name only the cleaner's swap uses"
        reason = events.touched(partition, base, run["start"], run["end"])
        if reason:
            return f"{name}: {reason}"
        if name not in after:
            return f"{name}: gone after the run"
    return None


def percentiles(values: list[float]) -> dict[str, float | None]:
    ordered = sorted(values)

    def at(q: float) -> float | None:
        if not ordered:
            return None
        return round(ordered[min(int(q * len(ordered)), len(ordered) - 1)], 3)

    return {"p50": at(0.5), "p90": at(0.9), "max": at(1.0), "runs": len(ordered)}


def audit_summary(
    runs: list[dict[str, Any]], events: BrokerEvents, after: set[str]
) -> dict[str, Any]:
    """The audits' side: outcomes, findings caused by renames, wall times."""
    criticals, renamed, damage, warned = Counter(), Counter(), Counter(), Counter()
    hanging: Counter[str] = Counter()
    examples: list[dict[str, Any]] = []
    for run in runs:
        for f in run["findings"]:
            reason = renamed_by_broker(f, run, events, after)
            if f["severity"] == "critical":
                criticals[f["kind"]] += 1
                if reason:
                    renamed[f["kind"]] += 1
            if reason and f["kind"] in DAMAGE:
                damage[f["kind"]] += 1
            if reason and f["severity"] == "warning":
                warned[f["kind"]] += 1
            if f["kind"] == "hanging-transaction":
                hanging[f["severity"]] += 1
            if reason and len(examples) < 8:
                examples.append({"run": run["n"], **f, "because": reason})
    return {
        "runs": len(runs),
        "runs_with_groups": sum(r["with_groups"] for r in runs),
        "tracebacks": sum(r["traceback"] for r in runs),
        "invalid_json": sum(not r["json_ok"] for r in runs),
        "exit_statuses": dict(sorted(Counter(str(r["exit"]) for r in runs).items())),
        "critical_findings": sum(criticals.values()),
        "critical_findings_by_kind": dict(criticals),
        "critical_findings_naming_renamed_files": sum(renamed.values()),
        "critical_findings_naming_renamed_files_by_kind": dict(renamed),
        "damage_findings_naming_renamed_files": sum(damage.values()),
        "damage_findings_naming_renamed_files_by_kind": dict(damage),
        "warning_findings_naming_renamed_files_by_kind": dict(warned),
        "hanging_transaction_findings": dict(hanging),
        "wall_seconds_no_groups": percentiles([r["wall_s"] for r in runs if not r["with_groups"]]),
        "wall_seconds_with_groups": percentiles([r["wall_s"] for r in runs if r["with_groups"]]),
        "traceback_examples": sorted({r["stderr_tail"] for r in runs if r["traceback"]})[:3],
        "renamed_file_examples": examples,
    }


def broker_summary(events: BrokerEvents, start: float, end: float) -> dict[str, Any]:
    """The broker's side, counted from its own logs over the run."""

    def inside(at: float) -> bool:
        return start <= at <= end

    return {
        "cleanings": sum(inside(at) for at, _ in events.cleanings),
        "segment_swaps": sum(inside(at) for at, *_ in events.swaps),
        "segments_merged_away": sum(
            len(set(old) - set(new)) for at, _, new, old in events.swaps if inside(at)
        ),
        "segments_deleted": sum(inside(at) for at, *_ in events.deletes),
    }
