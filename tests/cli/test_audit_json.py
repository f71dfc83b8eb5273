"""``audit --json``: the report json would write, indented by two, with each group on one line
(json's C encoder: a broker's millions of groups would take longer to indent than to audit)."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from offsets_auditor.cli.audit import write_json
from offsets_auditor.cli.main import main

MULTI_PASS = Path(__file__).parent.parent / "fixtures" / "kafka-2.3.0" / "multi-pass" / "kafka-logs"


def test_audit_json_has_each_group_on_a_line(capsys: pytest.CaptureFixture[str]) -> None:
    main(["audit", str(MULTI_PASS), "--json", "--now", "1790000000000"])
    out = capsys.readouterr().out
    report = json.loads(out)
    assert len(report["groups"]) > 100 and report["partitions"]
    lines = out.splitlines()
    start = lines.index('  "groups": [')
    groups = lines[start + 1 : start + 1 + len(report["groups"])]
    assert [json.loads(line.strip().rstrip(",")) for line in groups] == report["groups"]
    without = json.dumps({**report, "groups": []}, indent=2)
    assert "\n".join([*lines[:start], '  "groups": [],', *lines[start + 2 + len(groups) :]]) == (
        without
    )


@pytest.mark.parametrize(
    "report",
    [{}, {"groups": []}, {"a": [1, {"b": "x\ny"}], "groups": [{"g": "é"}, {"g": 2}], "z": None}],
)
def test_write_json_is_what_json_reads(report: dict[str, object]) -> None:
    out = io.StringIO()
    write_json(report, out)
    assert json.loads(out.getvalue()) == report
