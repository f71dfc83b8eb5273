"""The service's rules as pure functions, a numbered table each (no server, no Spark)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

from api.alerts import stuck_alerts
from api.coordination import partition_count
from api.history import RunTrend
from api.results import GroupIndex, LoadedRun
from offsets_auditor import published

LOG_DIR = "/data/kafka-logs"


def _partition(**values: Any) -> dict[str, Any]:
    row = {c: None for c, _ in published.TABLES["partitions"]}
    row |= {
        "cluster_id": None,
        "broker_id": 0,
        "log_dir": LOG_DIR,
        "partition": 3,
        "cleaner_checkpoint": 100,
        "cleanable_bytes": 5000,
        "size_bytes": 9000,
        "outcome": "single-pass",
        "reason": "fits",
        "message": None,
        "never_compacted": False,
    }
    return {**row, **values}


def _run(run_id: str, partitions: list[dict[str, Any]], manifest: Any = None) -> LoadedRun:
    groups = pa.table({"group": pa.array([], pa.string()), "cluster_id": pa.array([], pa.string())})
    return LoadedRun(
        run_id=run_id,
        path=Path("/nowhere") / run_id,
        manifest=manifest or {"finished_at": "2026-11-24T00:00:00.000Z"},
        brokers=[],
        partitions=partitions,
        segments=[],
        indexes=[],
        findings=[],
        groups=GroupIndex.build(groups),
    )


def _trend(run_id: str, checkpoint: int | None, dirty: int | None) -> RunTrend:
    key = ("", 0, LOG_DIR, 3)
    return RunTrend(run_id, {"run_id": run_id}, {key: (checkpoint, dirty, 9000, "single-pass")})


# (case, earlier runs as (checkpoint, dirty bytes), the served run's partition, fires?)
STUCK_CASES = [
    # 1. the checkpoint did not move and the dirty section grew: stuck
    ("unmoved, grew", [(100, 4000)], {}, True),
    # 2. the checkpoint moved: the cleaner works, however the dirty bytes went
    ("moved", [(50, 4000)], {}, False),
    # 3. unmoved but the dirty section did not grow: nothing to clean, nothing wrong
    ("unmoved, same", [(100, 5000)], {}, False),
    # 4. the stretch of unmoved runs goes back to the oldest: compared with that one
    ("unmoved over three runs", [(100, 1000), (100, 6000)], {}, True),
    # 5. the checkpoint changed before the stretch: only the stretch counts (6000 -> 5000)
    ("stretch starts later", [(90, 1000), (100, 6000)], {}, False),
    # 6. no checkpoint ever (never compacted) and growing: stuck as well (a dead thread's)
    ("never compacted, grew", [(None, 4000)], {"cleaner_checkpoint": None}, True),
    # 7. below the dirty ratio or only an active segment: growth is by design
    ("not eligible", [(100, 4000)], {"outcome": "not-eligible"}, False),
    ("nothing to clean", [(100, 4000)], {"outcome": "nothing-to-clean"}, False),
    # 8. one run only: nothing to compare with
    ("no history", [], {}, False),
    # 9. the partition is new in the served run
    ("new partition", [(100, 4000)], {"partition": 4}, False),
]


@pytest.mark.parametrize(
    ("case", "earlier", "now", "fires"), STUCK_CASES, ids=[c[0] for c in STUCK_CASES]
)
def test_cleaner_stuck(
    case: str, earlier: list[tuple[int | None, int]], now: dict, fires: bool
) -> None:
    trends = [_trend(f"2026010{i}T000000Z-aaaaaa", c, d) for i, (c, d) in enumerate(earlier)]
    served = "20260109T000000Z-aaaaaa"
    trends.append(_trend(served, now.get("cleaner_checkpoint", 100), 5000))
    alerts = list(stuck_alerts(_run(served, [_partition(**now)]), trends))
    assert bool(alerts) is fires, case
    if fires:
        (alert,) = alerts
        assert alert.name == "OffsetsCleanerStuck"
        assert dict(alert.where)["partition"] == "3"


def test_runs_after_the_served_one_do_not_count() -> None:
    served = "20260105T000000Z-aaaaaa"
    trends = [_trend("20260109T000000Z-aaaaaa", 100, 1)]  # newer than served (unreadable)
    assert list(stuck_alerts(_run(served, [_partition()]), trends)) == []


@pytest.mark.parametrize(
    ("numbers", "configured", "count", "says"),
    [
        ([0, 1, 2, 3], None, 4, "numbers 0-3, so 4 partitions"),
        ([0, 1, 3], None, 4, "1 number(s) below 3 are in no scanned log dir"),
        ([0, 1, 2, 3], "50", 4, "offsets.topic.num.partitions=50"),
        ([], "50", 50, "as the scan was given it"),
        ([], None, None, "give ?partitions=N"),
    ],
)
def test_partition_count(
    numbers: list[int], configured: str | None, count: int | None, says: str
) -> None:
    manifest = {
        "finished_at": "2026-11-24T00:00:00.000Z",
        "config": {
            "properties": {"offsets.topic.num.partitions": configured} if configured else {}
        },
    }
    run = _run("r", [_partition(partition=n) for n in numbers], manifest)
    found, basis = partition_count(run, "")
    assert found == count and says in basis


def test_group_index_finds_every_group_and_pages_by_prefix() -> None:
    names = ["b", "a", "a/b", "", "\U0001f600", "é", "a", "ab", "b"]
    table = pa.table({"group": names, "n": list(range(len(names)))})
    index = GroupIndex.build(table)
    assert len(index) == 7
    for name in set(names):
        assert sorted(r["n"] for r in index.rows(name)) == [
            i for i, x in enumerate(names) if x == name
        ]
    assert index.rows("zz") == [] and index.rows("a/") == []
    assert index.names("a", 0, 10) == (3, ["a", "a/b", "ab"])
    assert index.names("a", 1, 1) == (3, ["a/b"])
    assert index.names("", 0, 100)[1] == sorted(set(names))


def test_the_serve_command_imports_nothing_heavy_until_it_runs() -> None:
    import subprocess
    import sys

    code = (
        "import sys, api.cli; heavy = ('fastapi', 'uvicorn', 'pyarrow', 'pydantic',"
        " 'prometheus_client', 'numpy', 'starlette'); print([m for m in heavy if m in sys.modules])"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"


@pytest.mark.parametrize(
    ("args", "says"),
    [
        ([], "--results: Field required"),
        (["--results", "/nonexistent/results"], "is not a directory"),
        (["--results", ".", "--port", "99999"], "--port: Input should be less than or equal"),
        (["--results", ".", "--poll-seconds", "0"], "--poll-seconds: Input should be greater"),
    ],
)
def test_serve_usage_errors_exit_3(
    args: list[str], says: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from offsets_auditor.cli.main import main

    monkeypatch.delenv("OFFSETS_AUDITOR_RESULTS", raising=False)
    assert main(["serve", *args]) == 3
    assert says in capsys.readouterr().err


def test_replica_divergence_and_unknown_record_types() -> None:
    """The rules and series no real fixture of this repo exercises: replicas that disagree, and
    record types the loader does not know."""
    from prometheus_client import CollectorRegistry

    from api.alerts import broker_alerts, finding_alerts
    from api.metrics import RunCollector

    partitions = [
        _partition(partition=3, unknown_record_types=5, cluster_id="c1"),
        _partition(partition=4, unknown_record_types=2, cluster_id="c1"),
    ]
    run = _run("r", partitions)
    run.findings.append(
        {
            "cluster_id": "c1",
            "broker_id": 0,
            "log_dir": LOG_DIR,
            "kind": "replica-divergence",
            "severity": "warning",
            "detail": "offset 7 differs",
            "partition": "__consumer_offsets-3",
        }
    )
    (divergence,) = finding_alerts(run)
    assert divergence.name == "OffsetsReplicaDivergence"
    assert dict(divergence.where) == {"cluster_id": "c1", "partition": "3"}
    (unknown,) = broker_alerts(run)
    assert unknown.name == "OffsetsUnknownRecordTypes" and unknown.severity == "info"
    assert unknown.summary.startswith("7 record(s)")

    class Store:
        current = run
        load_errors_total = 0
        newest_error = None

    registry = CollectorRegistry(auto_describe=False)
    registry.register(RunCollector(Store()))  # type: ignore[arg-type]
    broker = {"cluster_id": "c1", "broker_id": "0", "log_dir": LOG_DIR}
    assert registry.get_sample_value("offsets_auditor_unknown_record_types", broker) == 7
    divergences = "offsets_auditor_replica_divergences"
    assert registry.get_sample_value(divergences, {"cluster_id": "c1", "partition": "3"}) == 1
    assert registry.get_sample_value(divergences, {"cluster_id": "c1", "partition": "4"}) == 0
    findings = {**broker, "kind": "replica-divergence", "severity": "warning"}
    assert registry.get_sample_value("offsets_auditor_findings", findings) == 1
