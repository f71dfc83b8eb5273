"""A scan that fails says so where the service looks: one line on stderr, and a failure record
in its publisher's ``failures/`` (``OffsetsScanFailing``); each scan publishes under its own
publisher's dir, named after its broker by default."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from offsets_auditor import published
from offsets_auditor.cli.main import main
from spark_jobs import cli as scan_cli
from spark_jobs import tasks
from spark_jobs.job import ExecutorError

FIXTURES = Path(__file__).parent.parent / "fixtures"
SMALL = FIXTURES / "kafka-2.3.0" / "small-gzip" / "kafka-logs"


def failures(results: Path, publisher: str) -> list[dict[str, Any]]:
    folder = published.publisher_home(results, publisher) / published.FAILURES
    return [json.loads(p.read_text()) for p in sorted(folder.glob("*.json"))]


def test_the_default_publisher_is_the_broker_its_log_dir_belongs_to(tmp_path: Path) -> None:
    copy = tmp_path / "b7" / "kafka-logs"
    shutil.copytree(SMALL, copy)
    meta = copy / "meta.properties"
    meta.write_text(meta.read_text().replace("broker.id=0", "broker.id=7") + "cluster.id=Qx-9\n")
    assert scan_cli.default_publisher([copy]) == "broker-7.Qx-9"
    assert scan_cli.default_publisher([SMALL]) == "broker-0"
    # several brokers, or none known: a name from the paths, the same every time
    other = tmp_path / "none"
    other.mkdir()
    mixed = scan_cli.default_publisher([copy, SMALL])
    assert mixed.startswith("scan-") and mixed == scan_cli.default_publisher([SMALL, copy])
    assert scan_cli.default_publisher([other]).startswith("scan-")


def test_a_scan_that_cannot_start_records_why(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    results = tmp_path / "results"
    missing = tmp_path / "not-mounted"
    status = main(["scan", str(missing), "--out", str(results), "--publisher", "b1"])
    err = capsys.readouterr().err.strip().splitlines()
    assert status == 3
    assert err == [f"offsets-auditor scan: {missing} is not a directory (give a broker log dir)"]
    (record,) = failures(results, "b1")
    assert record["exit_status"] == 3 and record["publisher"] == "b1"
    assert record["reason"] == f"{missing} is not a directory (give a broker log dir)"
    assert record["log_dirs"] == [str(missing)]
    assert set(record) == set(published.FAILURE_FIELDS)


def test_an_internal_error_on_an_executor_is_one_line_and_a_record(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(*args: Any, **kwargs: Any) -> int:
        raise ExecutorError(
            "struct.error: unpack_from requires a buffer (at segment.py:167 in run)"
        )

    monkeypatch.setattr(scan_cli, "scan", broken)
    results = tmp_path / "results"
    status = main(["scan", str(SMALL), "--out", str(results), "--publisher", "b0"])
    err = capsys.readouterr().err.strip().splitlines()
    assert status == 4 and len(err) == 1
    assert err[0].startswith("offsets-auditor scan: internal error on an executor: struct.error")
    (record,) = failures(results, "b0")
    assert record["exit_status"] == 4 and "struct.error" in record["reason"]


def test_executors_send_an_internal_error_back_as_one_line(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Stage A on an executor: a bug while reading a segment is a FAILED row naming the
    segment, not a failed Spark task (whose report is kilobytes of tracebacks)."""

    def crash(ctx: Any, task: Any) -> dict[str, Any]:
        raise ValueError("boom\nsecond line")

    monkeypatch.setattr(tasks, "read_task", crash)
    task = tasks.SegmentTask(
        input=0,
        partition="__consumer_offsets-1",
        position=0,
        path=Path("/x/__consumer_offsets-1/00000000000000000000.log"),
        size=10,
        mtime_ms=0,
        identity=(1, 2),
        active=True,
        context="c",
    )

    context = SimpleNamespace(slots=[[task]], split=frozenset())
    run = tasks.read_slots(lambda: context, lambda n, b: None)  # type: ignore[arg-type,return-value]
    (row,) = run(iter([0]))
    assert row["status"] == tasks.FAILED
    assert row["error"].startswith("ValueError: boom second line (at test_scan_failures.py:")
    assert row["error"].endswith(", reading __consumer_offsets-1/00000000000000000000.log")


@pytest.mark.slow
def test_a_scan_that_cannot_publish_records_why(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The results dir's runs/ cannot be written (here: a file where the dir goes): the scan
    reads everything, fails to publish, says why in one line, records it, and the next scan
    that can publish clears it for the service (its failures count from its newest run)."""
    results = tmp_path / "results"
    home = published.publisher_home(results, "b0")
    home.mkdir(parents=True)
    (home / published.RUNS).write_text("not a directory")
    args = ["scan", str(SMALL), "--out", str(results), "--publisher", "b0", "--master", "local[1]"]
    status = main(args)
    err = capsys.readouterr().err.strip().splitlines()
    assert status == 3, err
    assert len(err) == 1 and err[0].startswith("offsets-auditor scan: cannot write ")
    (record,) = failures(results, "b0")
    assert record["exit_status"] == 3 and "runs" in record["reason"]
    (home / published.RUNS).unlink()
    assert main(args) in (0, 1, 2)
    assert (home / published.LATEST).is_file()


def test_cluster_id_for_log_dirs_without_one(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """ZooKeeper-mode brokers before 2.4 write no cluster.id: --cluster-id names the cluster
    (in the default publisher, and as the published cluster_id); a log dir whose
    meta.properties names another cluster is refused."""
    assert scan_cli.default_publisher([SMALL], "prod-1") == "broker-0.prod-1"
    named = tmp_path / "named" / "kafka-logs"
    shutil.copytree(SMALL, named)
    meta = named / "meta.properties"
    meta.write_text(meta.read_text() + "cluster.id=Qx-9\n")
    assert scan_cli.default_publisher([named], "prod-1") == "broker-0.Qx-9"
    results = tmp_path / "results"
    status = main(["scan", str(named), "--out", str(results), "--cluster-id", "prod-1"])
    assert status == 3
    assert "meta.properties says cluster.id=Qx-9" in capsys.readouterr().err
    assert main(["scan", str(SMALL), "--out", str(results), "--cluster-id", "a/b"]) == 3
    assert "--cluster-id 'a/b': use letters" in capsys.readouterr().err
    # Kafka's ids are URL-safe base64 and may begin with '_' or '-' (a real 2.3.0 cluster's
    # id): taken, so the log dir naming another cluster is what refuses these
    for given in ("__elNSqASH6CYitAym7gNA", "-NSqASH6CYitAym7gNAel"):
        status = main(["scan", str(named), "--out", str(results), f"--cluster-id={given}"])
        assert status == 3
        assert "meta.properties says cluster.id=Qx-9" in capsys.readouterr().err
    assert scan_cli.default_publisher([SMALL], "_x") == "broker-0._x"
