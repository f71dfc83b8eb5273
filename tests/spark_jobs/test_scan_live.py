"""The scan of a running broker's log dir, replayed deterministically: between the driver's
listing and the executors' reads, the broker appends to every active segment and the log
cleaner runs its rename sequence (``tests/support/cleaner_renames.py``) on one partition.

What must hold (issue 18): the scan never crashes and publishes; every segment is read within
the bounds fixed when it was listed (an appended active segment reads as listed: the same
partition report as the log dir audited before the append); the cleaned partition is one whole
state of the log, never a mix.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

import pytest

import spark_jobs.job as scan
from spark_jobs.job import ScanOptions, run_scan
from tests.conftest import FIXTURES
from tests.logdir.test_live_logdir import SCENARIOS, Lab, make_lab, signature
from tests.support.cleaner_renames import run_steps

pytestmark = pytest.mark.slow

LIVE_SCENARIOS = [
    s for s in SCENARIOS if s.id in ("2.3.0-multi-pass-real", "0.9.0.1-two-threads-real")
]


def first_entry(segment: Path) -> bytes:
    """The segment's first whole entry (log overhead and all)."""
    data = segment.read_bytes()
    return data[: 12 + int.from_bytes(data[8:12], "big")]


def options(lab: Lab, log_dirs: tuple[Path, ...], out: Path) -> ScanOptions:
    from offsets_auditor.logdir.meta_properties import parse_java_properties
    from offsets_auditor.versions import KafkaVersion

    fixture = FIXTURES / lab.scenario.fixture
    properties = parse_java_properties((fixture / "broker-server.properties").read_text())
    version = KafkaVersion.parse(lab.scenario.version)
    return ScanOptions(
        log_dirs=log_dirs,
        out=out,
        properties=tuple(properties),
        versions=dict.fromkeys(log_dirs, version),
        with_groups=False,
        now_ms=lab.now_ms,
    )


def partitions_of(report: dict[str, Any]) -> dict[str, Any]:
    return {p["name"]: p for p in report["partitions"]}


@pytest.mark.parametrize("scenario", [pytest.param(s, id=s.id) for s in LIVE_SCENARIOS])
def test_a_scan_of_a_running_broker_reads_each_segment_as_listed(
    scenario: Any, spark: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two copies of a real log dir in one scan: in the first the cleaner cleans a partition
    (its rename sequence, a quarter after each listing), in the second the broker appends a
    whole entry and half of another to every active segment right after it is listed."""
    lab = make_lab(scenario, tmp_path / "lab")
    appending = tmp_path / "appending"
    shutil.copytree(lab.pristine, appending, copy_function=shutil.copy2)
    for segment in appending.rglob("*.log"):  # another mtime: no cache entry of the other copy
        os.utime(segment, ns=(segment.stat().st_atime_ns, segment.stat().st_mtime_ns - 10**9))
    at_rest = run_scan(spark, options(lab, (lab.work, appending), tmp_path / "at-rest")).reports
    steps = list(lab.clean.steps)
    chunk = max(len(steps) // 4, 1)
    listed = scan.list_partition
    appended: list[str] = []

    def list_then_write(source: Any, partition: Any, code: str, read: Any) -> Any:
        work = listed(source, partition, code, read)
        written = [t.path for t in work.tasks if t.size > 0]
        if source.path == appending and written:
            entry = first_entry(written[0])  # a real entry of this partition
            with open(work.tasks[-1].path, "ab") as f:
                f.write(entry + entry[: len(entry) // 2])
            appended.append(work.partition.name)
        elif source.path == lab.work and steps:
            run_steps(lab.work, steps[:chunk])
            del steps[:chunk]
        return work

    monkeypatch.setattr(scan, "list_partition", list_then_write)
    result = run_scan(spark, options(lab, (lab.work, appending), tmp_path / "live"))
    assert appended, "no active segment was appended to"
    cleaning, live = result.reports
    published = json.loads((result.run_dir / "manifest.json").read_text())
    assert published["run_id"] == result.run_id
    assert partitions_of(live) == partitions_of(at_rest[1]), "not read as listed"
    assert signature(cleaning, scenario.partition) in lab.snapshots
    damage = [
        f
        for report in result.reports
        for f in report["findings"]
        if f["kind"] in ("truncated-tail", "corrupt-record", "corrupt-segment")
    ]
    assert damage == []
