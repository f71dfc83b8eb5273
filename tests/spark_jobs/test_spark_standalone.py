"""The scan submitted unchanged with ``spark-submit`` to a real Spark standalone cluster (a master
and two workers, JVMs on loopback, executors in their own processes): the same run as local
mode, and the same report as ``audit``."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest

from offsets_auditor import published
from offsets_auditor.logdir.meta_properties import parse_java_properties
from spark_jobs import publish
from spark_jobs.job import ScanOptions, run_scan
from tests.spark_jobs.test_scan import NOW_MS, audit_report, without_across

pytestmark = pytest.mark.slow

ROOT = Path(__file__).parent.parent.parent
LOG_DIR = ROOT / "tests/fixtures/kafka-0.9.0.1/cleaner-died/kafka-logs"


def test_spark_submit_to_a_standalone_cluster(spark: Any, tmp_path: Path) -> None:
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
            "--publisher",
            "standalone",
        ],
        capture_output=True,
        text=True,
        timeout=600,
        env={"PYTHON": sys.executable, "PATH": "/usr/bin:/bin", "SPARK_MASTER_PORT": "17177"},
    )
    assert done.returncode == 2, done.stderr[-3000:]  # critical findings: the thread death
    assert "2 workers launched 2 executor(s)" in done.stderr
    home = published.publisher_home(tmp_path, "standalone")
    run = home / "runs" / str(publish.read_latest(home))
    report = json.loads((run / "reports/0.json").read_text())
    properties = tuple(parse_java_properties(config.read_text()))
    assert without_across(report) == without_across(audit_report(LOG_DIR, properties))
    assert "published run" in done.stdout
    local = run_scan(
        spark,
        ScanOptions(
            log_dirs=(LOG_DIR,), out=tmp_path / "local", properties=properties, now_ms=NOW_MS
        ),
    )
    for table in published.TABLES:
        assert pq.read_table(run / f"{table}.parquet") == pq.read_table(
            local.run_dir / f"{table}.parquet"
        ), table
    assert report == json.loads((local.run_dir / "reports/0.json").read_text())
