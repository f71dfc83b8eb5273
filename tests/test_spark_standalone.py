"""The scan submitted unchanged with ``spark-submit`` to a real Spark standalone cluster (master
and worker JVMs on loopback, executors in their own processes): the same report as ``audit``."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from offsets_auditor.meta_properties import parse_java_properties
from spark_jobs import publish
from tests.test_scan import NOW_MS, audit_report, without_across

pytestmark = pytest.mark.slow

ROOT = Path(__file__).parent.parent
LOG_DIR = ROOT / "tests/fixtures/kafka-0.9.0.1/cleaner-died/kafka-logs"


def test_spark_submit_to_a_standalone_cluster(tmp_path: Path) -> None:
    config = LOG_DIR.parent / "broker-server.properties"
    done = subprocess.run(
        [
            str(ROOT / "scripts/spark/standalone.sh"),
            str(LOG_DIR),
            "--broker-config",
            str(config),
            "--now",
            str(NOW_MS),
            "--out",
            str(tmp_path),
        ],
        capture_output=True,
        text=True,
        timeout=600,
        env={"PYTHON": sys.executable, "PATH": "/usr/bin:/bin", "SPARK_MASTER_PORT": "17177"},
    )
    assert done.returncode == 2, done.stderr[-3000:]  # critical findings: the thread death
    assert "the worker launched 1 executor(s)" in done.stderr
    run = tmp_path / "runs" / str(publish.read_latest(tmp_path))
    report = json.loads((run / "reports/0.json").read_text())
    properties = tuple(parse_java_properties(config.read_text()))
    assert without_across(report) == without_across(audit_report(LOG_DIR, properties))
    assert "published run" in done.stdout
