"""``GET /alerts``: the rules of ``api.alert_rules`` evaluated as Prometheus evaluates them,
over the history of what the service exposed (``api.exposition``), in Alertmanager's shape
(``labels``, ``annotations``, ``startsAt``) so it can be polled, or pushed to Alertmanager's
``/api/v2/alerts`` as it is.

An alert is a rule's series that has held without a break for the rule's ``for``: ``startsAt``
is when it fired (``activeAt`` + ``for``, as Prometheus sends it), so a condition that continues
from one run to the next keeps its start.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from api.alert_rules import AlertRule, AlertSeverity, Thresholds, alert_rules, render
from api.promql import Timeline, active_since, evaluate

_ORDER = {AlertSeverity.CRITICAL: 0, AlertSeverity.WARNING: 1, AlertSeverity.INFO: 2}


@dataclass(frozen=True, slots=True)
class Alert:
    rule: AlertRule
    #: the series' labels (``api.samples``)
    series: tuple[tuple[str, str], ...]
    value: float
    active_at: float

    @property
    def fired_at(self) -> float:
        return self.active_at + self.rule.for_seconds

    @property
    def labels(self) -> dict[str, str]:
        return {
            "alertname": self.rule.name,
            **dict(self.series),
            "severity": str(self.rule.severity),
            **dict(self.rule.labels),
        }

    @property
    def summary(self) -> str:
        return render(self.rule.summary, dict(self.series), self.value)

    @property
    def description(self) -> str:
        return render(self.rule.description, dict(self.series), self.value)

    def to_alertmanager(self, runbook_base_url: str) -> dict[str, Any]:
        return {
            "labels": self.labels,
            "annotations": {
                "summary": self.summary,
                "description": self.description,
                "runbook_url": f"{runbook_base_url}{self.rule.runbook}",
            },
            "startsAt": iso(self.fired_at),
        }


def firing(rules: Sequence[AlertRule], timeline: Timeline, now: float) -> list[Alert]:
    """Every rule's series that fires at ``now``: critical first, then by name and labels."""
    found = []
    for rule in rules:
        for series, value in evaluate(rule.expr, timeline, now).items():
            since = active_since(rule.expr, timeline, series, now)
            if since is not None and now - since >= rule.for_seconds:
                found.append(Alert(rule, series, value, since))
    return sorted(found, key=lambda a: (_ORDER[a.rule.severity], a.rule.name, a.series))


def all_alerts(timeline: Timeline, thresholds: Thresholds, now: float) -> list[Alert]:
    return firing(alert_rules(thresholds), timeline, now)


def iso(seconds: float) -> str:
    return (
        datetime.fromtimestamp(seconds, UTC)
        .isoformat(timespec="milliseconds")
        .replace("+00:00", "Z")
    )
