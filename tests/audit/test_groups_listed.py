"""``AuditSettings.groups_listed``: the text report never lists the groups, so ``audit``
without ``--json`` keeps each group's committed offsets as columns. Everything the text report
says must be what it says when the groups are built as objects, on every real log dir."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from offsets_auditor.audit.parallel import audit_log_dir_on
from offsets_auditor.audit.partition import BrokerAudit
from offsets_auditor.audit.plan import AuditSettings, plan_audit
from offsets_auditor.audit.report import report_json
from offsets_auditor.reader.reading import DEFAULT_READ

FIXTURES = Path(__file__).parent.parent / "fixtures"
LOG_DIRS = sorted(FIXTURES.glob("kafka-*/*/kafka-logs"))
NOW_MS = 1_790_000_000_000


def audited(log_dir: Path, listed: bool, jobs: int = 1) -> BrokerAudit:
    plan = plan_audit([log_dir], AuditSettings(groups_listed=listed), NOW_MS)
    return audit_log_dir_on(log_dir, plan, DEFAULT_READ, jobs)


def text_report(audit: BrokerAudit) -> dict[str, Any]:
    """What the text output is printed from."""
    return json.loads(json.dumps(report_json([audit], with_groups=False)))


@pytest.mark.parametrize(
    "log_dir", LOG_DIRS, ids=lambda p: f"{p.parent.parent.name}/{p.parent.name}"
)
def test_the_text_report_is_the_same_with_offsets_as_columns(log_dir: Path) -> None:
    listed = audited(log_dir, True)
    columns = audited(log_dir, False)
    assert text_report(columns) == text_report(listed)
    # the same groups, each whole but for its offsets, which only the listing reads
    assert [replace(g, offsets=()) for g in listed.groups] == list(columns.groups)
    assert not any(g.offsets for g in columns.groups)


def test_the_columns_are_taken_where_offsets_are_committed() -> None:
    """The comparison above can fail: a log dir whose groups have committed offsets."""
    log_dir = FIXTURES / "kafka-2.3.0/multi-pass/kafka-logs"
    listed = audited(log_dir, True)
    assert sum(len(g.offsets) for g in listed.groups) > 100
    for jobs in (1, 2):
        columns = audited(log_dir, False, jobs)
        assert not any(g.offsets for g in columns.groups)
        assert text_report(columns) == text_report(listed)
