"""The run's tables for dashboards and people: ``/partitions``, ``/partitions/{n}``,
``/brokers``, ``/segments``, ``/indexes``, ``/findings`` (paged, filtered by equality on a few
columns) and ``/runs`` (the kept runs, for trends)."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable, Sequence
from typing import Annotated, Any

from fastapi import APIRouter, HTTPException, Path, Query

from api.deps import ClusterFilter, Limit, Offset, RunDep, StoreDep
from api.models import (
    BrokerRow,
    FindingRow,
    IndexRow,
    Page,
    PartitionReplicas,
    PartitionRow,
    Problem,
    RunSummary,
    SegmentRow,
)
from api.results import LoadedRun, cluster_key

router = APIRouter(tags=["tables"])

ERRORS: dict[int | str, dict[str, Any]] = {
    404: {"model": Problem, "description": "no such partition in the run"},
    503: {"model": Problem, "description": "no run loaded yet"},
}

BrokerFilter = Annotated[int | None, Query(ge=-(2**31), le=2**31 - 1)]
Text = Annotated[str | None, Query(max_length=4096)]
PartitionNumber = Annotated[int | None, Query(ge=0, le=2**31 - 1)]


def _page(
    run: LoadedRun, rows: Sequence[dict[str, Any]], offset: int, limit: int
) -> dict[str, Any]:
    return {
        "run_id": run.run_id,
        "total": len(rows),
        "offset": offset,
        "limit": limit,
        "items": list(rows[offset : offset + limit]),
    }


def _filter(rows: Sequence[dict[str, Any]], **wanted: Any) -> list[dict[str, Any]]:
    tests: list[Callable[[dict[str, Any]], bool]] = []
    for column, value in wanted.items():
        if value is None:
            continue
        if column == "cluster_id":
            tests.append(lambda r, v=value: cluster_key(r["cluster_id"]) == v)
        else:
            tests.append(lambda r, c=column, v=value: r[c] == v)
    return [r for r in rows if all(t(r) for t in tests)]


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


def partition_detail(run: LoadedRun, p: dict[str, Any]) -> dict[str, Any]:
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
        "findings": run.findings_of(p["log_dir"], p["partition"]),
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
    passes as the broker would log them, alternatives by version, top writers) and findings."""
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


@router.get("/brokers", response_model=list[BrokerRow], responses=ERRORS)  # type: ignore[valid-type]
async def brokers(run: RunDep, cluster: ClusterFilter = None) -> list[dict[str, Any]]:
    """One row per log dir: version, cleaner config, threads that die, the recommendation
    with its arithmetic, totals."""
    return _filter(run.brokers, cluster_id=cluster)


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


@router.get("/runs", response_model=list[RunSummary])
def runs(store: StoreDep) -> list[dict[str, Any]]:
    """The kept runs, oldest first, with their totals: the history for trends."""
    served = store.current.run_id if store.current is not None else None
    out = []
    for trend in store.history.runs():
        m = trend.manifest
        if m is None:
            out.append(
                {"run_id": trend.run_id, "readable": False, "served": False, "error": trend.error}
            )
            continue
        failed = store.failed_run(trend.run_id)
        readable = failed is None
        values = list(trend.partitions.values())
        out.append(
            {
                "run_id": trend.run_id,
                "readable": readable,
                "served": trend.run_id == served,
                "error": failed.message if failed else None,
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
                "total_size_bytes": sum(v[2] or 0 for v in values),
                "total_dirty_bytes": sum(v[1] or 0 for v in values),
                "outcomes": dict(Counter(v[3] or "" for v in values)),
            }
        )
    return out
