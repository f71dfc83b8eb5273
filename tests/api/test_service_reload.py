"""A new run is picked up without a restart; an unreadable newest run leaves the previous one
served, and says so (/readyz, metrics, /alerts, /runs). Runs published by the real scan."""

from __future__ import annotations

import json
import os
import shutil
import time
from pathlib import Path
from typing import Any

import pytest

from tests.support.service import CLEANER_DIED, LiveServer, Published, scan_options

pytestmark = pytest.mark.slow


def _wait(server: LiveServer, run_id: str, field: str = "run_id") -> dict[str, Any]:
    deadline = time.monotonic() + 15
    while True:
        ready = server.json("/readyz")
        if ready[field] == run_id or time.monotonic() > deadline:
            return ready
        time.sleep(0.1)


def _new_run_id(results: Path, tag: str) -> str:
    time.sleep(1.01)  # run ids sort by their second, then by the tag
    run_id = time.strftime("%Y%m%dT%H%M%S", time.gmtime()) + f"Z-{tag}"
    assert run_id > max(p.name for p in (results / "runs").iterdir())
    return run_id


def _publish_copy(results: Path, source: Path, run_id: str, damage: bool) -> None:
    """Publish ``source`` again as ``run_id`` the way the scan does (staging dir, one rename,
    LATEST replaced), with ``damage``: its partitions table cut in half, as a full disk or a
    broken copy would leave it."""
    staging = results / ".staging" / run_id
    shutil.copytree(source, staging)
    manifest = json.loads((staging / "manifest.json").read_text())
    manifest["run_id"] = run_id
    (staging / "manifest.json").write_text(json.dumps(manifest))
    if damage:
        table = staging / "partitions.parquet"
        os.truncate(table, table.stat().st_size // 2)
    os.rename(staging, results / "runs" / run_id)
    (results / "LATEST.tmp").write_text(run_id + "\n")
    os.replace(results / "LATEST.tmp", results / "LATEST")


def _metric(server: LiveServer, name: str) -> float:
    from prometheus_client.parser import text_string_to_metric_families

    _, _, body = server.get("/metrics")
    for family in text_string_to_metric_families(body.decode()):
        for sample in family.samples:
            if sample.name == name:
                return sample.value
    raise AssertionError(f"no {name}")


def test_new_run_picked_up_and_unreadable_run_kept_out(
    spark: Any, published_run: Published, tmp_path: Path
) -> None:
    from spark_jobs.job import run_scan

    results = tmp_path / "results"
    (results / "runs").mkdir(parents=True)
    shutil.copytree(published_run.run_dir, results / "runs" / published_run.run_id)
    (results / "LATEST").write_text(published_run.run_id + "\n")
    with LiveServer(results, poll_seconds=0.1) as server:
        assert server.json("/readyz")["run_id"] == published_run.run_id
        assert len(server.json("/brokers")) == 5
        # 1. the real scan publishes a new run (one log dir) while the server runs
        second = run_scan(spark, scan_options((CLEANER_DIED / "kafka-logs",), results))
        ready = _wait(server, second.run_id)
        assert ready["run_id"] == second.run_id and ready["newest_run_unreadable"] is False
        assert [b["log_dir"] for b in server.json("/brokers")] == [str(CLEANER_DIED / "kafka-logs")]
        runs = server.json("/runs")["items"]
        assert [r["run_id"] for r in runs] == [published_run.run_id, second.run_id]
        assert [r["served"] for r in runs] == [False, True]
        # same data twice: the cleaner-died checkpoints did not move, neither did dirty bytes
        names = [a["labels"]["alertname"] for a in server.json("/alerts")]
        assert "OffsetsCleanerStuck" not in names and "OffsetsResultsUnreadable" not in names
        # 2. a newest run with a damaged table: the previous run stays served, and it says so
        bad = _new_run_id(results, "damaged")
        _publish_copy(results, second.run_dir, bad, damage=True)
        ready = _wait(server, True, "newest_run_unreadable")
        assert ready["ready"] is True and ready["run_id"] == second.run_id
        assert bad in ready["message"] and "partitions.parquet" in ready["message"]
        assert ready["message"].startswith(f"serving -: {second.run_id}; the newest run")
        assert _metric(server, "offsets_auditor_results_last_load_error") == 1
        assert _metric(server, "offsets_auditor_results_load_errors_total") == 1
        assert _metric(server, "offsets_auditor_results_loaded") == 1
        (alert,) = [
            a
            for a in server.json("/alerts")
            if a["labels"]["alertname"] == "OffsetsResultsUnreadable"
        ]
        assert bad in alert["annotations"]["summary"]
        runs = {r["run_id"]: r for r in server.json("/runs")["items"]}
        assert runs[bad]["readable"] is False and "partitions.parquet" in runs[bad]["error"]
        assert runs[second.run_id]["served"] is True
        time.sleep(0.5)  # polled again: counted once, not per poll
        assert _metric(server, "offsets_auditor_results_load_errors_total") == 1
        page = server.get("/")[2].decode()
        assert f"the newest run, {bad}, is unreadable" in page
        # 3. the next good run clears the error (the counter keeps counting)
        good = _new_run_id(results, "good")
        _publish_copy(results, published_run.run_dir, good, damage=False)
        ready = _wait(server, good)
        assert ready["run_id"] == good and ready["newest_run_unreadable"] is False
        assert _metric(server, "offsets_auditor_results_last_load_error") == 0
        assert _metric(server, "offsets_auditor_results_load_errors_total") == 1


def test_at_start_an_unreadable_newest_run_falls_back_to_the_previous(
    published_run: Published, tmp_path: Path
) -> None:
    results = tmp_path / "results"
    (results / "runs").mkdir(parents=True)
    shutil.copytree(published_run.run_dir, results / "runs" / published_run.run_id)
    bad = _new_run_id(results, "damaged")
    _publish_copy(results, published_run.run_dir, bad, damage=True)
    with LiveServer(results, poll_seconds=0.1) as server:
        ready = server.json("/readyz")
        assert ready["run_id"] == published_run.run_id and ready["newest_run_unreadable"]
        assert server.json("/groups/usercenter/coordinator-partition?cluster=")["partition"] == 0


def test_no_run_yet_is_not_ready(tmp_path: Path) -> None:
    with LiveServer(tmp_path, poll_seconds=0.1) as server:
        code, _, body = server.get("/readyz")
        assert code == 503 and b"waiting for the first scan to publish" in body
        assert server.json("/healthz") == {"status": "ok"}
        code, _, body = server.get("/partitions")
        assert code == 503 and b"waiting for the first scan to publish" in body
        assert _metric(server, "offsets_auditor_results_loaded") == 0
        assert _metric(server, "offsets_auditor_results_load_errors_total") == 0
        assert server.get("/")[0] == 503
