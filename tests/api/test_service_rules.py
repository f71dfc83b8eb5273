"""The service's rules as pure functions, a numbered table each (no server, no Spark)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

from api.alert_rules import alert_rules
from api.alerts import firing
from api.coordination import partition_count
from api.promql import Snapshot, Timeline
from api.results import GroupIndex, LoadedRun, RunTables
from api.samples import data_families
from api.view import View, merge
from offsets_auditor import published

LOG_DIR = "/data/kafka-logs"
HOUR = 3600.0


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
        "unknown_record_types": 0,
    }
    return {**row, **values}


def _broker(**values: Any) -> dict[str, Any]:
    row = {c: None for c, _ in published.TABLES["brokers"]}
    return {**row, "cluster_id": None, "broker_id": 0, "log_dir": LOG_DIR, **values}


def _view(partitions: list[dict[str, Any]], manifest: Any = None, findings: Any = None) -> View:
    groups = pa.table(
        {
            "group": pa.array([], pa.string()),
            "cluster_id": pa.array([], pa.string()),
            "log_dir": pa.array([], pa.string()),
        }
    )
    tables = RunTables(
        run_id="r",
        publisher="",
        path=Path("/nowhere/r"),
        manifest=manifest or {"finished_at": "2026-11-24T00:00:00.000Z"},
        brokers=[_broker(cluster_id=partitions[0]["cluster_id"])] if partitions else [_broker()],
        partitions=partitions,
        findings=findings or [],
    )
    return merge([LoadedRun(tables, segments=[], indexes=[], groups=groups)])


def _snapshot(at: float, partitions: list[dict[str, Any]], findings: Any = ()) -> Snapshot:
    families = data_families([_broker()], partitions, list(findings))
    return Snapshot(at, {f.name: f.vector() for f in families})


def _stuck(timeline: Timeline, now: float) -> list[Any]:
    (rule,) = [r for r in alert_rules() if r.name == "OffsetsCleanerStuck"]
    return firing([rule], timeline, now)


# (case, hourly runs as (checkpoint, dirty bytes, outcome), fires at the last run?)
STUCK_CASES = [
    # 1. the checkpoint did not move over 6 h of scans and the dirty section grew: stuck
    ("unmoved, grew", [(100, 1000 * i, "single-pass") for i in range(8)], True),
    # 2. the checkpoint moved inside the window: the cleaner works, however the dirty bytes went
    ("moved", [(100 if i < 4 else 200, 1000 * i, "single-pass") for i in range(8)], False),
    # 3. unmoved, but the dirty section did not grow: nothing to clean, nothing wrong
    ("unmoved, same", [(100, 5000, "single-pass")] * 8, False),
    # 4. the checkpoint moved before the window only: the 6 h since count
    ("moved before the window",
     [(90, 0, "single-pass")] + [(100, i, "single-pass") for i in range(1, 8)], True),
    # 5. below the dirty ratio or only an active segment: growth is by design
    ("not eligible", [(100, 1000 * i, "not-eligible") for i in range(8)], False),
    ("nothing to clean", [(100, 1000 * i, "nothing-to-clean") for i in range(8)], False),
    # 6. less than the window of history: nothing to compare with
    ("short history", [(100, 1000 * i, "single-pass") for i in range(3)], False),
    # 7. no checkpoint at all: not this rule's (never compacted, thread death, blocked are)
    ("no checkpoint", [(None, 1000 * i, "single-pass") for i in range(8)], False),
]  # fmt: skip


@pytest.mark.parametrize(("case", "runs", "fires"), STUCK_CASES, ids=[c[0] for c in STUCK_CASES])
def test_cleaner_stuck(case: str, runs: list[tuple[int | None, int, str]], fires: bool) -> None:
    timeline = Timeline(
        tuple(
            _snapshot(i * HOUR, [_partition(cleaner_checkpoint=c, cleanable_bytes=d, outcome=o)])
            for i, (c, d, o) in enumerate(runs)
        )
    )
    alerts = _stuck(timeline, (len(runs) - 1) * HOUR)
    assert bool(alerts) is fires, case
    if fires:
        (alert,) = alerts
        assert alert.labels["partition"] == "3"


def test_a_continuing_condition_keeps_its_start() -> None:
    """Each new run of a condition that still holds keeps the alert's startsAt (the run where it
    began, plus the rule's ``for``); a break starts it afresh."""
    (rule,) = [r for r in alert_rules() if r.name == "OffsetsPartitionBlocked"]
    outcomes = ["single-pass", "blocked", "blocked", "blocked", "single-pass", "blocked"]
    snapshots = tuple(_snapshot(i * HOUR, [_partition(outcome=o)]) for i, o in enumerate(outcomes))
    starts = [
        [a.fired_at for a in firing([rule], Timeline(snapshots[: i + 1]), i * HOUR + 60)]
        for i in range(len(outcomes))
    ]
    assert starts == [[], [HOUR], [HOUR], [HOUR], [], [5 * HOUR]]


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
    view = _view([_partition(partition=n) for n in numbers], manifest)
    found, basis = partition_count(view, "")
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
        (["--results", "/etc/hostname"], "is not a directory"),
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
    partitions = [
        _partition(partition=3, unknown_record_types=5, cluster_id="c1"),
        _partition(partition=4, unknown_record_types=2, cluster_id="c1"),
    ]
    findings = [
        {
            "cluster_id": "c1",
            "broker_id": 0,
            "log_dir": LOG_DIR,
            "kind": "replica-divergence",
            "severity": "warning",
            "detail": "offset 7 differs",
            "partition": "__consumer_offsets-3",
        }
    ]
    families = {
        f.name: f.vector() for f in data_families([_broker(cluster_id="c1")], partitions, findings)
    }
    timeline = Timeline((Snapshot(0.0, families),))
    fired = {a.rule.name: a for a in firing(alert_rules(), timeline, 60.0)}
    divergence = fired["OffsetsReplicaDivergence"]
    assert divergence.labels["partition"] == "3" and divergence.labels["cluster_id"] == "c1"
    unknown = fired["OffsetsUnknownRecordTypes"]
    assert str(unknown.rule.severity) == "info" and unknown.summary.startswith("7 __consumer")
    broker = (("broker_id", "0"), ("cluster_id", "c1"), ("log_dir", LOG_DIR))
    assert families["offsets_auditor_unknown_record_types"][broker] == 7
    divergences = families["offsets_auditor_replica_divergences"]
    assert divergences[(("cluster_id", "c1"), ("partition", "3"))] == 1
    assert divergences[(("cluster_id", "c1"), ("partition", "4"))] == 0
