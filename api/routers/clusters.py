"""``/clusters``: each cluster of the served view as one: its brokers (scanned, stale, missing),
the offsets topic's partition count with its reasons, and every offsets partition with all its
replicas across brokers (and across the publishers that scanned them)."""

from __future__ import annotations

import time
from collections import Counter
from typing import Any

from fastapi import APIRouter, HTTPException

from api.cluster import ClusterState
from api.cluster_page import broker_lines
from api.deps import ClusterFilter, ClustersDep, Limit, LiveDep, Offset, RunDep, SettingsDep
from api.models import ClusterOverview, Page, Problem
from api.results import cluster_key
from api.view import View
from offsets_auditor.findings import FindingKind

router = APIRouter(tags=["clusters"])


@router.get(
    "/clusters",
    response_model=Page[ClusterOverview],
    responses={
        404: {"model": Problem, "description": "no such cluster"},
        503: {"model": Problem, "description": "no run loaded yet"},
    },
)
async def clusters(
    run: RunDep,
    views: ClustersDep,
    live: LiveDep,
    settings: SettingsDep,
    cluster: ClusterFilter = None,
    limit: Limit = 100,
    offset: Offset = 0,
) -> dict[str, Any]:
    """Every cluster (``?cluster=``: one), as the merged newest runs of every publisher show
    it, with the live cluster's metadata when the service has one."""
    now = time.time()
    _, states = views.now(now)
    names = sorted(states)
    if cluster is not None:
        if cluster not in states:
            raise HTTPException(404, f"cluster {cluster!r} is not in the view (clusters: {names})")
        names = [cluster]
    stale_after = settings.thresholds().stale_after_seconds
    snapshot = None if live is None else live.snapshot()
    items = [
        overview(
            run,
            states[n],
            now,
            stale_after,
            None if snapshot is None or not states[n].live_attached else snapshot.to_json(now),
        )
        for n in names
    ]
    return {
        "run_id": run.run_id,
        "total": len(items),
        "offset": offset,
        "limit": limit,
        "items": items[offset : offset + limit],
    }


def overview(
    run: View, state: ClusterState, now: float, stale_after: float, live: dict[str, Any] | None
) -> dict[str, Any]:
    count = state.count
    brokers = []
    for line in broker_lines(state, now, stale_after):
        scanned = state.scanned_broker(line["broker_id"])
        address = None if line["broker_id"] is None else state.address(line["broker_id"])
        brokers.append(
            {
                **line,
                "host": None if address is None else address[0],
                "port": None if address is None else address[1],
                "partitions_held": []
                if scanned is None
                else sorted(scanned.evidence.partitions_held),
            }
        )
    divergences = Counter(
        f["partition"]
        for f in run.findings
        if f["kind"] == FindingKind.REPLICA_DIVERGENCE
        and cluster_key(f["cluster_id"]) == state.cluster_id
    )
    partitions = []
    for view in state.views():
        leadership = view.leadership
        name = f"__consumer_offsets-{view.partition}"
        on_disk = []
        for p in run.partition_rows(state.cluster_id, view.partition):
            broker = run.broker_row(p)
            at = None if broker is None else broker.get("run_finished_at")
            on_disk.append(
                {
                    "broker_id": p["broker_id"],
                    "log_dir": p["log_dir"],
                    "publisher": None if broker is None else broker.get("publisher"),
                    "data_age_seconds": None if at is None else round(now - at, 3),
                    "size_bytes": p["size_bytes"],
                    "log_end_offset": p["log_end_offset"],
                    "cleaner_checkpoint": p["cleaner_checkpoint"],
                    "verdict": p["outcome"],
                    "never_compacted": p["never_compacted"],
                    "load_estimate_seconds": p["load_estimate_seconds"],
                }
            )
        partitions.append(
            {
                "partition": view.partition,
                "leader": None if leadership is None else leadership.leader,
                "leader_epoch": None if leadership is None else leadership.leader_epoch,
                "replicas": None if leadership is None else list(leadership.replicas),
                "isr": None if leadership is None else list(leadership.isr),
                "source": None if view.source is None else str(view.source),
                "held_by": list(view.held_by),
                "on_disk": on_disk,
                "divergences": divergences.get(name, 0),
                "notes": list(view.notes),
            }
        )
    reasons = list(count.reasons) + ([state.live_note] if state.live_note else [])
    return {
        "cluster_id": state.cluster_id,
        "partitions": count.count,
        "partitions_source": count.source.value,
        "uncertain": count.uncertain,
        "reasons": reasons,
        "live": live,
        "brokers": brokers,
        "offsets_partitions": partitions,
    }
