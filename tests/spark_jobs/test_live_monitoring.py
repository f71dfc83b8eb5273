"""The monitoring path on a real, busy Kafka 2.3.0 broker (issue 18), as an operator runs it:
``scan`` on a schedule, ``serve`` started before the first scan, Prometheus with the shipped
rules (written for that schedule); scans made to fail for a while; then ``kill -9`` and a
restart (``scripts/live/monitor_run.sh``, opt-in: OFFSETS_AUDITOR_BROKER_TESTS=1, ~12 min).

What must hold: no scan exits 4 or 5; every scheduled scan publishes; the scans made to fail
exit 3 and ``OffsetsScanFailing`` fires, then clears once a scan publishes again; before the
kill no alert fires that is not true of the broker (a running broker is no unclean shutdown,
its preallocated indexes are not corrupt); after the kill ``OffsetsUncleanShutdown`` fires and
the scan's prediction of the restart is what the restarted broker logs; every group's offsets
served equal the broker's own.
"""

from __future__ import annotations

import json
import os
import subprocess
from itertools import pairwise
from pathlib import Path
from typing import Any

import pytest

from api.alert_rules import Thresholds

ROOT = Path(__file__).resolve().parent.parent.parent
RUN = ROOT / "scripts" / "live" / "monitor_run.sh"

pytestmark = [
    pytest.mark.broker,
    pytest.mark.slow,
    pytest.mark.skipif(
        os.environ.get("OFFSETS_AUDITOR_BROKER_TESTS") != "1",
        reason="drives a real Kafka broker: set OFFSETS_AUDITOR_BROKER_TESTS=1",
    ),
]

#: alerts a run of a few minutes may show that are true of the monitoring itself
TRUE_OF_THE_SCANS = {"OffsetsScanFailing", "OffsetsNoScanYet"}
#: alerts true of the scans when no run was published for three intervals
STALENESS = {"OffsetsScanStale", "OffsetsBrokerStale"}
#: how late Prometheus may see a publish in the run (``monitor_run.sh``: the service polls
#: every 1 s, Prometheus scrapes and evaluates every 2 s)
SEEN_LATE_SECONDS = 5


@pytest.fixture(scope="module")
def summary(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    work = tmp_path_factory.mktemp("monitor")
    out = work / "summary.json"
    done = subprocess.run(
        [str(RUN), "--seconds", "420", "--interval", "45", "--work", str(work), "--out", str(out)],
        capture_output=True,
        text=True,
        timeout=3000,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    result: dict[str, Any] = json.loads(out.read_text())
    return result


def fired(summary: dict[str, Any], name: str) -> list[dict[str, Any]]:
    return [
        a
        for a in summary["alerts"]
        if a["labels"]["alertname"] == name and a["states"].get("firing")
    ]


def test_no_scan_crashes_and_every_scheduled_scan_publishes(summary: dict[str, Any]) -> None:
    scans = summary["scans"]
    assert not [s for s in scans if s["exit"] in (4, 5) or s["traceback"]]
    scheduled = [s for s in scans if s["phase"] in ("load", "after the load")]
    assert len(scheduled) >= 4
    assert all(s["exit"] in (0, 1, 2) for s in scheduled)
    published = [s["latest"] for s in scheduled]
    assert published == sorted(set(published)), "each scan published a run of its own"
    assert all(s["stderr_lines"] == 0 for s in scheduled if s["exit"] in (0, 1, 2))


def test_failing_scans_alert_and_clear(summary: dict[str, Any]) -> None:
    failing = [s for s in summary["scans"] if s["phase"] == "made to fail"]
    assert failing and all(s["exit"] == 3 for s in failing)
    assert all(len(s["stderr_tail"]) == 1 for s in failing)  # one line says why
    _, restored = summary["failing_window"]
    (alert,) = fired(summary, "OffsetsScanFailing")
    assert alert["first_seen"] >= failing[0]["end"]
    assert alert["first_seen"] - failing[0]["end"] < 30  # within a few evaluations
    after = next(s for s in summary["scans"] if s["start"] >= restored and s["exit"] == 0)
    assert alert["last_seen"] <= after["end"] + 30  # cleared once a scan published


def test_no_false_alarm_while_the_broker_runs(summary: dict[str, Any]) -> None:
    killed_at = summary["kill"]["scan"]["start"]
    before = [
        a for a in summary["alerts"] if a["states"].get("firing") and a["first_seen"] < killed_at
    ]
    untrue = [
        a["labels"]
        for a in before
        if a["labels"]["alertname"] not in TRUE_OF_THE_SCANS and not stale_and_true(summary, a)
    ]
    assert untrue == []


def stale_and_true(summary: dict[str, Any], alert: dict[str, Any]) -> bool:
    """A staleness alert (no run published for three scan intervals, the rules written for the
    schedule) that was true: it fired between two publishes three intervals apart or more
    (failing scans in between), give or take how late Prometheus sees a publish, and cleared
    once the second was seen. Two failing scans in a row leave two publishes three intervals
    apart, plus the difference of the scans' own times: on the edge."""
    if alert["labels"]["alertname"] not in STALENESS:
        return False
    published = sorted(s["end"] for s in summary["scans"] if s["exit"] in (0, 1, 2))
    limit = Thresholds(scan_interval_seconds=summary["interval"]).stale_after_seconds
    return any(
        later - earlier >= limit - SEEN_LATE_SECONDS
        and earlier + limit - SEEN_LATE_SECONDS <= alert["first_seen"] <= later + SEEN_LATE_SECONDS
        and alert["last_seen"] <= later + 30
        for earlier, later in pairwise(published)
    )


def test_after_kill_9_the_restart_is_what_the_scan_said(summary: dict[str, Any]) -> None:
    kill = summary["kill"]
    assert kill["scan"]["exit"] in (1, 2)
    assert fired(summary, "OffsetsUncleanShutdown")
    predicted, restart = kill["predicted"], kill["restart"]
    assert predicted["clean_shutdown"] is False
    assert predicted["recovery"]["segments_to_recover"] == restart["segments_recovered"]
    assert predicted["corrupt_index_files"] == restart["index_files_rebuilt"]


def test_every_groups_offsets_are_the_brokers(summary: dict[str, Any]) -> None:
    groups = summary["groups"]
    assert groups["broker"] > 1000
    assert groups["differ"] == [] and groups["equal"] == groups["broker"]
