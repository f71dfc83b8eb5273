"""Atomic publishing under SIGKILL: a scan killed at any point leaves the previous complete run
visible and nothing partial; the next scan succeeds."""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from offsets_auditor import published
from spark_jobs import publish

pytestmark = pytest.mark.slow

LOG_DIR = Path(__file__).parent.parent / "fixtures/kafka-2.3.0/multi-pass/kafka-logs"
PUBLISHER = "killed"


def scan(out: Path) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [
            sys.executable,
            "-m",
            "offsets_auditor.cli.main",
            "scan",
            str(LOG_DIR),
            "--out",
            str(out),
            "--publisher",
            PUBLISHER,
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,  # its JVM and Python workers die with it
    )


def assert_only_complete_runs(results: Path) -> str | None:
    """What a reader sees: LATEST names a complete run; every run under runs/ is complete."""
    out = published.publisher_home(results, PUBLISHER)
    latest = publish.read_latest(out)
    runs = out / published.RUNS
    names = sorted(p.name for p in runs.iterdir()) if runs.is_dir() else []
    if latest is not None:
        assert latest in names
    for name in names:
        run = runs / name
        manifest = json.loads((run / published.MANIFEST).read_text())
        assert manifest["run_id"] == name
        for table in published.TABLES:
            pq.read_table(run / f"{table}.parquet")
        assert len(list((run / published.REPORTS).iterdir())) == len(manifest["inputs"])
    return latest


def test_a_killed_scan_never_shows_a_partial_run(tmp_path: Path) -> None:
    out = tmp_path / "results"
    first = scan(out)
    assert first.wait(timeout=300) in (0, 1, 2)  # a verdict: the scan completed
    good = assert_only_complete_runs(out)
    assert good is not None
    chance = random.Random(20261124)
    # one scan takes ~8-10 s here (Spark start-up ~6 s, then reading, folding, publishing)
    for delay in sorted(chance.uniform(1.0, 12.0) for _ in range(5)):
        killed = scan(out)
        time.sleep(delay)
        if killed.poll() is None:
            os.killpg(killed.pid, signal.SIGKILL)
        killed.wait(timeout=60)
        latest = assert_only_complete_runs(out)
        assert latest is not None  # the previous complete run, or the killed one if it finished
        good = latest
    last = scan(out)
    assert last.wait(timeout=300) in (0, 1, 2)
    assert assert_only_complete_runs(out) not in (None, good)
