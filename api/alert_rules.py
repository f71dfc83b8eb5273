"""Every alert of offsets-auditor, written once. Each :class:`AlertRule` is a PromQL expression
over the metrics of ``docs/metrics.md`` (in the subset of :mod:`api.promql`), a ``for``
duration, and Prometheus templates for its summary and description. From this one source:

- ``scripts/deploy/rules.py`` writes the Prometheus rules (``deploy/prometheus/``, and the
  PrometheusRule resource of ``deploy/k8s/``);
- ``GET /alerts`` (:mod:`api.alerts`) evaluates the same expressions over the samples the
  service exposes, with Prometheus' ``for`` and template semantics
  (``tests/deploy/test_prometheus_rules.py`` checks with ``promtool test rules`` that both
  fire the same alerts with the same annotations).

Thresholds are :class:`Thresholds` (the service's settings; the rules file is written with the
defaults, and ``scripts/deploy/rules.py`` takes the same options). The scan's schedule is one of
them: a run is stale after three scan intervals, and no run at all is an alert after two.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Final

from api.promql import Age, Changes, Expr, Labels, Offset, Sel, sel

P: Final = "offsets_auditor_"


class AlertSeverity(StrEnum):
    CRITICAL = "critical"
    WARNING = "warning"
    INFO = "info"


@dataclass(frozen=True, slots=True)
class Thresholds:
    """The numbers the rules compare with (defaults: docs/metrics.md)."""

    #: OffsetsPartitionNeverCompacted: smaller never-compacted partitions are not worth a page
    never_compacted_bytes: int = 100 * 1024 * 1024
    #: OffsetsCoordinatorLoadSlow: consumers give up on a coordinator after session.timeout.ms
    #: (10 s by default for the Java consumer up to 2.8, 45 s from 3.0): the failover outage
    load_slow_seconds: float = 10.0
    #: how often the scan runs (the CronJob's schedule): a publisher's newest run is stale
    #: after 3 intervals, and a service with no run after 2 alerts
    scan_interval_seconds: float = 3600.0
    #: OffsetsCleanerStuck: the window over which a checkpoint that did not move while the
    #: dirty bytes grew counts as stuck (several scans must fall inside it)
    stuck_window_seconds: float = 6 * 3600.0

    @property
    def stale_after_seconds(self) -> float:
        return 3 * self.scan_interval_seconds


@dataclass(frozen=True, slots=True)
class AlertRule:
    name: str
    severity: AlertSeverity
    expr: Expr
    #: Prometheus' ``for``: how long the condition must hold before the alert fires. 0 where
    #: one scan is the evidence (a verdict, a fact read from disk); longer where one run alone
    #: should not page anyone
    for_seconds: float
    summary: str
    description: str
    #: more labels: an alert with several rules tells them apart by one
    labels: Labels = ()

    @property
    def runbook(self) -> str:
        return f"{self.name}.md"


_PARTITION = "{{ $labels.partition }}"
_WHERE = "broker {{ $labels.broker_id }} ({{ $labels.log_dir }})"


def alert_rules(t: Thresholds = Thresholds()) -> tuple[AlertRule, ...]:
    """The rules, in the order of docs/metrics.md."""
    verdict = P + "partition_cleaner_verdict"
    stuck = t.stuck_window_seconds
    checkpoint = sel(P + "partition_cleaner_checkpoint_offset")
    dirty = sel(P + "partition_dirty_bytes")
    return (
        AlertRule(
            "OffsetsCleanerThreadDeath",
            AlertSeverity.CRITICAL,
            sel(verdict, outcome="thread-death").eq(1),
            0,
            f"__consumer_offsets-{_PARTITION} kills a log cleaner thread on {_WHERE}",
            f"Cleaning __consumer_offsets-{_PARTITION} throws on this broker's Kafka version"
            " (before 2.1 the exception kills the cleaner thread for good: 'offset map can fit"
            " only ...'), so this partition and every partition the thread would have cleaned"
            " after it stop compacting and grow until a coordinator failover takes longer than"
            " consumers wait. The scan's recommendation says which"
            " log.cleaner.dedupe.buffer.size fixes it.",
        ),
        AlertRule(
            "OffsetsCleanerThreadDied",
            AlertSeverity.CRITICAL,
            sel(P + "broker_cleaner_threads_dead") > 0,
            0,
            f"{{{{ $value }}}} log cleaner thread(s) of {_WHERE} died",
            "The broker's own log-cleaner.log shows {{ $value }} cleaner thread(s) that died in"
            " its cleaner's last run ('Error due to', with Kafka's exception: GET /findings"
            "?kind=cleaner-thread-died). A dead thread stays dead until the broker restarts:"
            " every partition it would have cleaned stops compacting and grows, and each"
            " coordinator failover re-reads more. A fact from the broker's log, not a"
            " prediction: one scan is the evidence.",
        ),
        AlertRule(
            "OffsetsPartitionUncleanable",
            AlertSeverity.CRITICAL,
            sel(P + "partition_marked_uncleanable").eq(1),
            0,
            f"__consumer_offsets-{_PARTITION} is marked uncleanable on {_WHERE}",
            f"The broker's log-cleaner.log shows __consumer_offsets-{_PARTITION} marked"
            " uncleanable (2.1+: 'Unexpected exception thrown when cleaning log ... Marking its"
            " partition ... as uncleanable') since the broker last started. The mark lives in"
            " the broker's memory only: the cleaner skips the partition until the broker"
            " restarts, and it grows without bound while nothing on disk says why.",
        ),
        AlertRule(
            "OffsetsPartitionBlocked",
            AlertSeverity.CRITICAL,
            sel(verdict, outcome="blocked").eq(1),
            0,
            f"__consumer_offsets-{_PARTITION} has no cleaner thread left on {_WHERE}",
            f"__consumer_offsets-{_PARTITION} would compact, but every cleaner thread dies on"
            " another partition first (or log.cleaner.enable=false, or 2.1+ marked it"
            " uncleanable): it grows without bound.",
        ),
        AlertRule(
            "OffsetsPartitionNeverCompacted",
            AlertSeverity.WARNING,
            (sel(P + "partition_log_size_bytes") > t.never_compacted_bytes)
            & sel(P + "partition_never_compacted").eq(1),
            3600,
            f"__consumer_offsets-{_PARTITION} on {_WHERE} was never compacted"
            " ({{ $value | humanize1024 }}B)",
            f"__consumer_offsets-{_PARTITION} holds {{{{ $value | humanize1024 }}}}B and has no"
            " cleaner checkpoint: the cleaner never finished a pass over it. Over"
            f" {_mib(t.never_compacted_bytes)} a coordinator failover re-reads all of it.",
        ),
        AlertRule(
            "OffsetsCleanerMultiPass",
            AlertSeverity.WARNING,
            sel(verdict, outcome="multi-pass").eq(1),
            3600,
            f"__consumer_offsets-{_PARTITION} needs several passes of the offset map on {_WHERE}",
            f"The dirty section of __consumer_offsets-{_PARTITION} does not fit one pass of the"
            " cleaner's offset map: records stay uncompacted once the dirty ratio drops below"
            " min.cleanable.dirty.ratio before the last pass. A larger"
            " log.cleaner.dedupe.buffer.size makes it one pass (see the scan's recommendation).",
        ),
        AlertRule(
            "OffsetsHangingTransaction",
            AlertSeverity.CRITICAL,
            sel(P + "partition_hanging_transactions") > 0,
            0,
            f"A hanging transaction pins compaction of __consumer_offsets-{_PARTITION} on {_WHERE}",
            f"{{{{ $value }}}} transaction(s) in __consumer_offsets-{_PARTITION} stayed open past"
            " transaction.max.timeout.ms: the last stable offset stays behind them, and nothing"
            " after it compacts or is loaded by a new coordinator.",
        ),
        AlertRule(
            "OffsetsCorruptIndexes",
            AlertSeverity.WARNING,
            sel(P + "broker_corrupt_index_files") > 0,
            0,
            f"{{{{ $value }}}} index file(s) of {_WHERE} need a rebuild",
            "The next start of this broker rebuilds these offset/time indexes (and re-reads their"
            " segments) before it serves: a longer restart and a longer coordinator failover.",
        ),
        AlertRule(
            "OffsetsUncleanShutdown",
            AlertSeverity.WARNING,
            sel(P + "broker_clean_shutdown").eq(0),
            0,
            f"{_WHERE} stopped without a clean shutdown",
            "The broker is not running and its log dir has no .kafka_cleanshutdown marker: the"
            " next start runs log recovery over every segment after the recovery point and"
            " rebuilds their indexes before it serves (see /indexes and the restart estimate).",
        ),
        AlertRule(
            "OffsetsCoordinatorLoadSlow",
            AlertSeverity.WARNING,
            sel(P + "partition_coordinator_load_seconds") > t.load_slow_seconds,
            1800,
            f"Loading __consumer_offsets-{_PARTITION} on a coordinator failover takes about"
            " {{ $value | humanizeDuration }}",
            f"A new coordinator for the groups of __consumer_offsets-{_PARTITION} re-reads the"
            f" whole partition before it answers; over {_seconds(t.load_slow_seconds)} (the"
            " consumers' session.timeout.ms) the groups fail with 'obsolete coordinator"
            " information'.",
        ),
        AlertRule(
            "OffsetsScanFailing",
            AlertSeverity.WARNING,
            sel(P + "scan_failures") > 0,
            0,
            "The scans of {{ $labels.publisher }} are failing",
            "{{ $value }} scan(s) of {{ $labels.publisher }} failed since its last published run"
            " (GET /runs and RESULTS/publishers/{{ $labels.publisher }}/failures/ give each"
            " reason): every other offsets-auditor alert about its log dirs describes old data.",
        ),
        AlertRule(
            "OffsetsScanStale",
            AlertSeverity.WARNING,
            Age(sel(P + "publisher_run_timestamp_seconds")) > t.stale_after_seconds,
            0,
            "The newest run of {{ $labels.publisher }} finished"
            " {{ $value | humanizeDuration }} ago",
            f"No run of {{{{ $labels.publisher }}}} has been published for three scan intervals"
            f" ({_seconds(t.stale_after_seconds)}): is its scan still scheduled? Every other"
            " offsets-auditor alert about its log dirs describes old data.",
        ),
        AlertRule(
            "OffsetsBrokerStale",
            AlertSeverity.WARNING,
            Age(sel(P + "broker_run_timestamp_seconds")) > t.stale_after_seconds,
            0,
            f"The data of {_WHERE} is {{{{ $value | humanizeDuration }}}} old",
            "The newest run holding this broker's log dir finished over three scan intervals"
            f" ({_seconds(t.stale_after_seconds)}) ago: the scan on its host stopped or fails"
            " (see OffsetsScanFailing and GET /publishers). The cluster view, its coordinator"
            " answers and every other alert about this broker describe old data.",
        ),
        AlertRule(
            "OffsetsBrokerMissing",
            AlertSeverity.WARNING,
            sel(P + "broker_missing").eq(1),
            t.scan_interval_seconds,
            "Broker {{ $labels.broker_id }} of cluster '{{ $labels.cluster_id }}' is not scanned",
            "The cluster has broker {{ $labels.broker_id }} (its live metadata, its KRaft"
            " metadata log or earlier runs say so), but no served run holds any of its log dirs:"
            " its replicas of __consumer_offsets are missing from the cluster view (GET"
            " /clusters), and a group it coordinates is answered without its health.",
        ),
        AlertRule(
            "OffsetsNoScanYet",
            AlertSeverity.WARNING,
            sel(P + "results_loaded").eq(0),
            2 * t.scan_interval_seconds,
            "offsets-auditor has served no run since it started",
            f"No readable run has been published to the results dir for two scan intervals"
            f" ({_seconds(2 * t.scan_interval_seconds)}): is the scan scheduled, and does it"
            " write where the service reads (GET /readyz)?",
        ),
        AlertRule(
            "OffsetsResultsUnreadable",
            AlertSeverity.WARNING,
            sel(P + "results_unreadable_run").eq(1),
            0,
            "Run {{ $labels.run_id }} of {{ $labels.publisher }} cannot be read",
            "The service keeps serving the publisher's previous run; its newest one failed to load"
            " (GET /readyz and GET /runs say why; see also the service's log).",
        ),
        AlertRule(
            "OffsetsReplicaDivergence",
            AlertSeverity.WARNING,
            sel(P + "replica_divergences") > 0,
            0,
            f"Replicas of __consumer_offsets-{_PARTITION} disagree",
            f"{{{{ $value }}}} divergence(s) between the log dirs holding"
            f" __consumer_offsets-{_PARTITION} below both log ends: the replicas hold different"
            " records at the same offsets.",
        ),
        AlertRule(
            "OffsetsCleanerStuck",
            AlertSeverity.WARNING,
            (
                (dirty > Offset(dirty, stuck))
                & checkpoint.eq(Offset(checkpoint, stuck))
                & Changes(checkpoint, stuck).eq(0)
            ).unless_outcome("not-eligible", "nothing-to-clean"),
            0,
            f"The cleaner has not moved on __consumer_offsets-{_PARTITION} ({_WHERE}) for"
            f" {_duration_words(stuck)}",
            f"Across scans the cleaner checkpoint of __consumer_offsets-{_PARTITION} stayed put"
            f" for {_duration_words(stuck)} while its dirty bytes grew to"
            " {{ $value | humanize1024 }}B: the partition is uncleanable until the cleaner (or"
            " the broker) restarts.",
        ),
        AlertRule(
            "OffsetsUnknownRecordTypes",
            AlertSeverity.INFO,
            sel(P + "unknown_record_types") > 0,
            0,
            f"{{{{ $value }}}} __consumer_offsets record(s) of unknown type on {_WHERE}",
            "The decoder met record key types the coordinator's loader of this Kafka version"
            " does not know (counted, never dropped): a newer broker wrote them, or the version"
            " is wrong.",
        ),
    )


def _mib(size: int) -> str:
    return f"{size / 1048576:g} MiB"


def _seconds(seconds: float) -> str:
    return _duration_words(seconds)


def _duration_words(seconds: float) -> str:
    for unit, size in (("h", 3600), ("min", 60)):
        if seconds >= size and seconds % size == 0:
            return f"{int(seconds // size)} {unit}"
    return f"{seconds:g} s"


# --- Prometheus' templates, as far as the rules use them ------------------------------------

_TEMPLATE = re.compile(r"\{\{\s*\$(labels\.(\w+)|value)\s*(?:\|\s*(\w+)\s*)?\}\}")


def render(template: str, labels: Mapping[str, str], value: float) -> str:
    """``template`` with ``{{ $labels.x }}``, ``{{ $value }}`` and the ``humanize``,
    ``humanize1024`` and ``humanizeDuration`` pipes filled in as Prometheus fills them
    (``template/template.go``; a missing label renders empty)."""

    def fill(m: re.Match[str]) -> str:
        if m.group(2) is not None:
            text = labels.get(m.group(2), "")
            if m.group(3):
                raise ValueError(f"no pipe on labels in these rules: {m.group(0)}")
            return text
        pipe = m.group(3)
        if pipe is None:
            return go_float(value)
        return _PIPES[pipe](value)

    return _TEMPLATE.sub(fill, template)


def go_float(v: float) -> str:
    """A float64 as Go's ``%v`` prints it: the shortest repr, exponent form from 1e21 up and
    below 1e-4 (``strconv.FormatFloat(v, 'g', -1, 64)`` with Go's shortest rule: exponent when
    it is < -4 or >= 21)."""
    if math.isnan(v):
        return "NaN"
    if math.isinf(v):
        return "+Inf" if v > 0 else "-Inf"
    if v == 0:
        return "0"
    digits, exponent = _shortest(v)
    if exponent < -4 or exponent >= 21:
        mantissa = digits[0] + ("." + digits[1:] if len(digits) > 1 else "")
        sign = "-" if v < 0 else ""
        return f"{sign}{mantissa}e{'+' if exponent >= 0 else '-'}{abs(exponent):02d}"
    return _plain(v)


def _shortest(v: float) -> tuple[str, int]:
    """The shortest digits that round-trip, and the decimal exponent of the first one."""
    text = f"{abs(v):.17e}"
    for precision in range(17):
        candidate = f"{abs(v):.{precision}e}"
        if float(candidate) == abs(v):
            text = candidate
            break
    mantissa, exponent = text.split("e")
    return mantissa.replace(".", "").rstrip("0") or "0", int(exponent)


def _plain(v: float) -> str:
    text = repr(v)
    if "e" in text or "E" in text:
        text = f"{v:f}".rstrip("0").rstrip(".")
    if text.endswith(".0"):
        text = text[:-2]
    return text


def _go_g4(v: float) -> str:
    """Go's ``%.4g``."""
    if v == 0:
        return "0"
    exponent = math.floor(math.log10(abs(v)))
    rounded = float(f"{v:.3e}")
    exponent = math.floor(math.log10(abs(rounded))) if rounded else 0
    if exponent < -4 or exponent >= 4:
        mantissa, exp = f"{v:.3e}".split("e")
        mantissa = mantissa.rstrip("0").rstrip(".")
        e = int(exp)
        return f"{mantissa}e{'+' if e >= 0 else '-'}{abs(e):02d}"
    text = f"{v:.{max(3 - exponent, 0)}f}"
    if "." in text:
        text = text.rstrip("0").rstrip(".")
    return text


def humanize1024(v: float) -> str:
    if abs(v) <= 1 or math.isnan(v) or math.isinf(v):
        return _go_g4(v)
    prefix = ""
    for p in ("ki", "Mi", "Gi", "Ti", "Pi", "Ei", "Zi", "Yi"):
        if abs(v) < 1024:
            break
        prefix = p
        v /= 1024
    return f"{_go_g4(v)}{prefix}"


def humanize(v: float) -> str:
    if v == 0 or math.isnan(v) or math.isinf(v):
        return _go_g4(v)
    if abs(v) >= 1:
        prefix = ""
        for p in ("k", "M", "G", "T", "P", "E", "Z", "Y"):
            if abs(v) < 1000:
                break
            prefix = p
            v /= 1000
        return f"{_go_g4(v)}{prefix}"
    prefix = ""
    for p in ("m", "u", "n", "p", "f", "a", "z", "y"):
        if abs(v) >= 1:
            break
        prefix = p
        v *= 1000
    return f"{_go_g4(v)}{prefix}"


def humanize_duration(v: float) -> str:
    if math.isnan(v) or math.isinf(v):
        return _go_g4(v)
    if v == 0:
        return f"{_go_g4(v)}s"
    if abs(v) >= 1:
        sign = "-" if v < 0 else ""
        v = abs(v)
        duration = int(v)
        seconds = duration % 60
        minutes = (duration // 60) % 60
        hours = (duration // 3600) % 24
        days = duration // 86400
        if days:
            return f"{sign}{days}d {hours}h {minutes}m {seconds}s"
        if hours:
            return f"{sign}{hours}h {minutes}m {seconds}s"
        if minutes:
            return f"{sign}{minutes}m {seconds}s"
        return f"{sign}{_go_g4(v)}s"
    prefix = ""
    for p in ("m", "u", "n", "p", "f", "a", "z", "y"):
        if abs(v) >= 1:
            break
        prefix = p
        v *= 1000
    return f"{_go_g4(v)}{prefix}s"


_PIPES: Final = {
    "humanize": humanize,
    "humanize1024": humanize1024,
    "humanizeDuration": humanize_duration,
}


def selectors(rule: AlertRule) -> list[Sel]:
    """Every metric the rule reads (for the docs' check that each is exposed)."""
    found: list[Sel] = []
    stack: list[object] = [rule.expr]
    while stack:
        node = stack.pop()
        if isinstance(node, Sel):
            found.append(node)
        elif hasattr(node, "__dataclass_fields__"):
            stack.extend(getattr(node, f) for f in node.__dataclass_fields__)
    return found
