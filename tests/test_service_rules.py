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

LOG_DIR = "/data/kafka-logs"


def _partition(**values: Any) -> dict[str, Any]:
    row = {
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
