"""The run's tables for dashboards and people: ``/partitions``, ``/partitions/{n}``,
``/brokers``, ``/segments``, ``/indexes``, ``/findings`` (paged, filtered by equality on a few
columns) and ``/runs`` (the kept runs, for trends)."""

from __future__ import annotations

import json
import time
from collections import Counter
from collections.abc import Sequence
from typing import Annotated, Any

from fastapi import APIRouter, HTTPException, Path, Query

from api.deps import ClusterFilter, Limit, Offset, RunDep, SettingsDep, StoreDep
from api.models import (
    BrokerRow,
    FindingRow,
    IndexRow,
    Page,
    PartitionReplicas,
    PartitionRow,
    Problem,
    PublisherRow,
    RunSummary,
    SegmentRow,
)
from api.results import cluster_key
from api.view import View

router = APIRouter(tags=["tables"])

ERRORS: dict[int | str, dict[str, Any]] = {
    404: {"model": Problem, "description": "no such partition in the run"},
    503: {"model": Problem, "description": "no run loaded yet"},
}

BrokerFilter = Annotated[int | None, Query(ge=-(2**31), le=2**31 - 1)]
Text = Annotated[str | None, Query(max_length=4096)]
PartitionNumber = Annotated[int | None, Query(ge=0, le=2**31 - 1)]


def _page(run: View, rows: Sequence[dict[str, Any]], offset: int, limit: int) -> dict[str, Any]:
    return {
        "run_id": run.run_id,
        "total": len(rows),
        "offset": offset,
        "limit": limit,
        "items": list(rows[offset : offset + limit]),
    }


def _filter(rows: Sequence[dict[str, Any]], **wanted: Any) -> list[dict[str, Any]]:
    given = {c: v for c, v in wanted.items() if v is not None}

    def keep(row: dict[str, Any]) -> bool:
        return all(
            (cluster_key(row[c]) if c == "cluster_id" else row[c]) == v for c, v in given.items()
        )

    return [r for r in rows if keep(r)]


@router.get("/partitions", response_model=Page[PartitionRow], responses=ERRORS)  # type: ignore[valid-type]
async def partitions(
    run: RunDep,
    limit: Limit = 100,
    offset: Offset = 0,
    cluster: ClusterFilter = None,
    broker_id: BrokerFilter = None,
    log_dir: Text = None,
    outcome: Annotated[str | None, Query(max_length=64)] = None,
    never_compacted: bool | None = None,
) -> dict[str, Any]:
    """Every ``__consumer_offsets`` partition of every log dir: never-compacted first, then by
    size, largest first."""
    rows = _filter(
        run.partitions,
        cluster_id=cluster,
        broker_id=broker_id,
        log_dir=log_dir,
        outcome=outcome,
        never_compacted=never_compacted,
    )
    rows.sort(key=lambda p: (not p["never_compacted"], -(p["size_bytes"] or 0), p["log_dir"]))
    return _page(run, rows, offset, limit)


def partition_detail(run: View, p: dict[str, Any]) -> dict[str, Any]:
    needed, capacity = p["needed_entries"], p["capacity"]
    return {
        **p,
        "offset_map_headroom_ratio": (
            1 - needed / capacity if needed is not None and capacity else None
        ),
        "alternatives": _json(p["alternatives_json"], []),
        "pass_details": _json(p["pass_details_json"], []),
        "top_writers": _json(p["top_writers_json"], []),
        "unknown_record_types_by_type": _json(p["unknown_record_types_json"], {}),
        "last_cleaning": _json(p["last_cleaning_json"], None),
        "prediction": _json(p["prediction_json"], None),
        "cleanings": run.cleanings_of(p, p["partition"]),
        "findings": run.findings_of(p, p["partition"]),
    }


def _json(text: str | None, empty: Any) -> Any:
    if not text:
        return empty
    try:
        return json.loads(text)
    except ValueError:
        return empty


@router.get("/partitions/{n}", response_model=PartitionReplicas, responses=ERRORS)
async def partition(
    run: RunDep,
    n: Annotated[int, Path(ge=0, le=2**31 - 1, description="the partition number")],
    cluster: ClusterFilter = None,
) -> dict[str, Any]:
    """``__consumer_offsets-<n>`` in every log dir holding it, with its decoded details (the
    passes as the broker would log them, alternatives by version, top writers), the broker's
    last real cleaning of it beside the predicted one and its newest cleanings (from the
    broker's cleaner log), and findings."""
    rows = _filter(run.partitions, cluster_id=cluster, partition=n)
    if not rows:
        numbers = sorted({p["partition"] for p in _filter(run.partitions, cluster_id=cluster)})
        raise HTTPException(
            404,
            f"__consumer_offsets-{n} is in no log dir of run {run.run_id}"
            + (f" (partitions there: {numbers[0]}-{numbers[-1]})" if numbers else ""),
        )
    return {
        "run_id": run.run_id,
        "partition": n,
        "replicas": [partition_detail(run, p) for p in rows],
    }


@router.get("/brokers", response_model=Page[BrokerRow], responses=ERRORS)  # type: ignore[valid-type]
async def brokers(
    run: RunDep, limit: Limit = 100, offset: Offset = 0, cluster: ClusterFilter = None
) -> dict[str, Any]:
    """One row per log dir: version, cleaner config, threads that die, the recommendation
    with its arithmetic, totals; paged like every other table."""
    return _page(run, _filter(run.brokers, cluster_id=cluster), offset, limit)


@router.get("/segments", response_model=Page[SegmentRow], responses=ERRORS)  # type: ignore[valid-type]
async def segments(
    run: RunDep,
    limit: Limit = 100,
    offset: Offset = 0,
    broker_id: BrokerFilter = None,
    log_dir: Text = None,
    partition: PartitionNumber = None,
) -> dict[str, Any]:
    """The offsets partitions' segments."""
    rows = _filter(run.segments, broker_id=broker_id, log_dir=log_dir, partition=partition)
    return _page(run, rows, offset, limit)


@router.get("/indexes", response_model=Page[IndexRow], responses=ERRORS)  # type: ignore[valid-type]
async def indexes(
    run: RunDep,
    limit: Limit = 100,
    offset: Offset = 0,
    broker_id: BrokerFilter = None,
    log_dir: Text = None,
    verdict: Annotated[str | None, Query(max_length=64)] = None,
    partition: Text = None,
) -> dict[str, Any]:
    """Every index file of every partition and what the next start does with it
    (``partition`` here is a directory name such as ``orders-0``)."""
    rows = _filter(
        run.indexes, broker_id=broker_id, log_dir=log_dir, verdict=verdict, partition=partition
    )
    return _page(run, rows, offset, limit)


@router.get("/findings", response_model=Page[FindingRow], responses=ERRORS)  # type: ignore[valid-type]
async def findings(
    run: RunDep,
    limit: Limit = 100,
    offset: Offset = 0,
    broker_id: BrokerFilter = None,
    log_dir: Text = None,
    severity: Annotated[str | None, Query(max_length=16)] = None,
    kind: Annotated[str | None, Query(max_length=64)] = None,
    partition: Text = None,
) -> dict[str, Any]:
    """The run's findings, critical first."""
    rows = _filter(
        run.findings,
        broker_id=broker_id,
        log_dir=log_dir,
        severity=severity,
        kind=kind,
        partition=partition,
    )
    order = {"critical": 0, "warning": 1, "info": 2}
    rows.sort(key=lambda f: order.get(f["severity"], 3))
    return _page(run, rows, offset, limit)


@router.get("/runs", response_model=Page[RunSummary])
def runs(
    store: StoreDep,
    limit: Limit = 100,
    offset: Offset = 0,
    publisher: Annotated[str | None, Query(max_length=255)] = None,
) -> dict[str, Any]:
    """The kept runs of every publisher (oldest first) with their totals, and the runs found
    unreadable: the history for trends."""
    served = store.current.run_ids if store.current is not None else {}
    rows: list[dict[str, Any]] = []
    for name, state in sorted(store.publishers.items()):
        if publisher is not None and name != publisher:
            continue
        for run in state.history:
            m = run.manifest
            rows.append(
                {
                    "run_id": run.run_id,
                    "publisher": name,
                    "readable": True,
                    "served": served.get(name) == run.run_id,
                    **{
                        k: m.get(k)
                        for k in (
                            "started_at",
                            "finished_at",
                            "duration_seconds",
                            "exit_status",
                            "counts",
                            "reuse",
                        )
                    },
                    "total_size_bytes": sum(p["size_bytes"] or 0 for p in run.partitions),
                    "total_dirty_bytes": sum(p["cleanable_bytes"] or 0 for p in run.partitions),
                    "outcomes": dict(Counter(p["outcome"] or "" for p in run.partitions)),
                }
            )
    for error in store.load_errors():
        if publisher is None or error.publisher == publisher:
            rows.append(
                {
                    "run_id": error.run_id,
                    "publisher": error.publisher,
                    "readable": False,
                    "served": False,
                    "error": error.message,
                }
            )
    rows.sort(key=lambda r: (r["run_id"], r["publisher"]))
    return {
        "run_id": store.current.run_id if store.current is not None else None,
        "total": len(rows),
        "offset": offset,
        "limit": limit,
        "items": rows[offset : offset + limit],
    }


@router.get("/publishers", response_model=Page[PublisherRow])
def publishers(
    store: StoreDep, settings: SettingsDep, limit: Limit = 100, offset: Offset = 0
) -> dict[str, Any]:
    """Every scan that publishes here: its run served, that run's age, and its failures since
    (the scans' own health: stale after three scan intervals)."""
    now = time.time()
    rows = []
    for name, state in sorted(store.publishers.items()):
        served = state.served
        failures = state.failures_since_served()
        last = state.failures[-1] if state.failures else None
        age = None if served is None else now - served.finished_at
        rows.append(
            {
                "publisher": name,
                "run_id": None if served is None else served.run_id,
                "finished_at": None if served is None else served.tables.manifest["finished_at"],
                "age_seconds": None if age is None else round(age, 3),
                "stale": served is None or age is None or age > 3 * settings.scan_interval_seconds,
                "log_dirs": [] if served is None else [b["log_dir"] for b in served.tables.brokers],
                "failures_since_run": len(failures),
                "last_failure": None if last is None else last.to_json(),
            }
        )
    return {
        "run_id": store.current.run_id if store.current is not None else None,
        "total": len(rows),
        "offset": offset,
        "limit": limit,
        "items": rows[offset : offset + limit],
    }
