"""Issue 7 part 6 on a REAL broker (opt-in: OFFSETS_AUDITOR_BROKER_TESTS=1): the audit of the log
dir of a running Kafka 2.3.0 whose cleaner swaps ``__consumer_offsets`` segments all the time.

``scripts/live/live_run.sh`` starts the broker (1 MiB offsets segments, 1 MiB dedupe buffer,
min.cleanable.dirty.ratio 0.01), runs 7 committing clients (plain commits over 1,600 groups,
transactional commits with aborts, group deletions) for 60 s and audits the live log dir in a
loop, then summarizes each run against the broker's own ``log-cleaner.log``/``server.log``. What
the issue asks of every run: no traceback, valid JSON, exit status 0/1/2, no critical or damage
finding naming a file the broker renamed or removed, and no transaction open for milliseconds
reported as hanging. Fails on today's core (see the issue); it passes once the core reads each
partition as one consistent snapshot.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent.parent
BROKER = pytest.mark.skipif(
    os.environ.get("OFFSETS_AUDITOR_BROKER_TESTS") != "1",
    reason="drives a real Kafka 2.3.0 broker: set OFFSETS_AUDITOR_BROKER_TESTS=1",
)
SECONDS = 60


@pytest.mark.broker
@BROKER
def test_audits_of_a_live_cleaning_broker_are_whole(tmp_path: Path) -> None:
    summary_file = tmp_path / "summary.json"
    env = {**os.environ, "ZK_PORT": "22582", "KAFKA_PORT": "29592"}
    done = subprocess.run(
        [str(REPO / "scripts" / "live" / "live_run.sh"), "--seconds", str(SECONDS),
         "--work", str(tmp_path / "work"), "--out", str(summary_file)],
        env=env, capture_output=True, text=True, timeout=SECONDS + 900, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    summary = json.loads(summary_file.read_text())
    broker = summary["broker"]
    # the conditions happened while the audits ran, or the run proves nothing
    assert summary["runs"] >= 10
    assert broker["cleanings"] > 0 and broker["segment_swaps"] > 0
    assert broker["segments_deleted"] > 0 and broker["segments_merged_away"] > 0
    assert summary["client_totals"]["aborted"] > 0 and summary["client_totals"]["deleted"] > 0
    keys = ("runs", "tracebacks", "invalid_json", "exit_statuses", "critical_findings_by_kind",
            "critical_findings_naming_renamed_files_by_kind", "hanging_transaction_findings",
            "traceback_examples", "renamed_file_examples")  # fmt: skip
    shown = json.dumps({k: summary[k] for k in keys}, indent=1)[:3000]
    assert summary["tracebacks"] == 0, shown
    assert summary["invalid_json"] == 0, shown
    assert set(summary["exit_statuses"]) <= {"0", "1", "2"}, shown
    assert summary["critical_findings_naming_renamed_files"] == 0, shown
    assert summary["damage_findings_naming_renamed_files"] == 0, shown
    assert summary["hanging_transaction_findings"] == {}, shown
