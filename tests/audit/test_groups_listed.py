"""``AuditSettings.groups_listed``: the text report never lists the groups, so ``audit`` without
``--json`` builds none (``Listing.NONE``), only the findings about them. Everything the text
report says must be what it says when every group is built, on every real log dir; and the
misplaced groups, the one finding made from the groups themselves, must be the same ones,
checked against ``partitionFor`` written again here."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from offsets_auditor.audit.parallel import audit_log_dir_on
from offsets_auditor.audit.partition import BrokerAudit
from offsets_auditor.audit.plan import AuditSettings, plan_audit
from offsets_auditor.audit.report import report_json
from offsets_auditor.findings import FindingKind
from offsets_auditor.reader.reading import DEFAULT_READ

FIXTURES = Path(__file__).parent.parent / "fixtures"
LOG_DIRS = sorted(FIXTURES.glob("kafka-*/*/kafka-logs"))
NOW_MS = 1_790_000_000_000


def audited(
    log_dir: Path, listed: bool, jobs: int = 1, partitions_count: int | None = None
) -> BrokerAudit:
    settings = AuditSettings(groups_listed=listed, partitions_count=partitions_count)
    return audit_log_dir_on(log_dir, plan_audit([log_dir], settings, NOW_MS), DEFAULT_READ, jobs)


def text_report(audit: BrokerAudit) -> dict[str, Any]:
    """What the text output is printed from."""
    return json.loads(json.dumps(report_json([audit], with_groups=False)))


@pytest.mark.parametrize(
    "log_dir", LOG_DIRS, ids=lambda p: f"{p.parent.parent.name}/{p.parent.name}"
)
def test_the_text_report_is_the_same_without_the_groups(log_dir: Path) -> None:
    listed = audited(log_dir, True)
    unlisted = audited(log_dir, False)
    assert text_report(unlisted) == text_report(listed)
    assert unlisted.groups == ()


def java_partition_for(group: str, partitions: int) -> int:
    """``Utils.abs(group.hashCode()) % partitions``, one UTF-16 unit at a time."""
    h = 0
    units = group.encode("utf-16-be", "surrogatepass")
    for i in range(0, len(units), 2):
        h = (31 * h + int.from_bytes(units[i : i + 2], "big")) & 0xFFFFFFFF
    signed = h - (1 << 32) if h >= 1 << 31 else h
    return (0 if signed == -(1 << 31) else abs(signed)) % partitions


def test_misplaced_groups_are_found_without_listing_them() -> None:
    """The real multi-pass log dir told the topic has 7 partitions: most of its groups then
    belong elsewhere. Unlisted, on 1 and 2 cores, the same misplaced groups as listed, and
    exactly those whose ``partitionFor`` differs."""
    log_dir = FIXTURES / "kafka-2.3.0/multi-pass/kafka-logs"
    listed = audited(log_dir, True, partitions_count=7)
    assert len(listed.groups) > 100
    expected = {
        (g.group, f"__consumer_offsets-{g.coordinator_partition}")
        for g in listed.groups
        if java_partition_for(g.group, 7) != g.coordinator_partition
    }
    assert len(expected) > 100
    for jobs in (1, 2):
        unlisted = audited(log_dir, False, jobs, partitions_count=7)
        found = [f for f in unlisted.findings if f.kind == FindingKind.MISPLACED_GROUP]
        assert {(f.group, f.partition) for f in found} == expected
        assert len(found) == len(expected)
        assert text_report(unlisted) == text_report(listed)
