"""The on-call answer for a group, per cluster of the served view: partition P
(``Utils.abs(groupId.hashCode) % count``, ``offsets_auditor.coordinator``), led by broker B
(host:port when known), loading or not, the disk's estimate of its load time, and the health of
each replica.

The count and the leader come from the cluster (``api.cluster``: every broker's published
evidence, a KRaft metadata log, the live cluster), never from the dirs one broker holds; the
answer says which count it used and why, and is ``uncertain`` when the evidence is incomplete
or disagrees. With no supported count there is no partition: never a modulo over a count the
evidence cannot support. With ``serve --bootstrap-server``, FindCoordinator's answer and whether
that coordinator is still loading stand beside it.

One shape: per cluster, once (``clusters``); the group's own facts at the top.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

from api.cluster import ClusterState, ClusterViews
from api.live import LiveLookup, LiveWatcher
from api.results import cluster_key
from api.view import View
from offsets_auditor.cluster.coordinator_answer import coordinator_answer
from offsets_auditor.cluster.partition_count import CountSource, PartitionCount
from offsets_auditor.coordinator import java_string_hash
from offsets_auditor.live_cluster.client import CoordinatorLookup, LiveError

#: Kafka writes a group id as a STRING (int16 length): at most 32767 bytes of UTF-8.
MAX_GROUP_ID_BYTES = 32767


class BadGroupId(ValueError):
    pass


def check_group_id(group: str) -> str:
    size = len(group.encode("utf-8", "surrogatepass"))
    if size > MAX_GROUP_ID_BYTES:
        raise BadGroupId(
            f"a group id is a Kafka STRING, at most {MAX_GROUP_ID_BYTES} bytes of UTF-8;"
            f" this one has {size}"
        )
    return group


async def lookup(
    run: View,
    views: ClusterViews,
    live: LiveWatcher | None,
    group: str,
    clusters: Sequence[str],
    partitions: int | None,
) -> dict[str, Any]:
    """The answer for ``group``, asking the live cluster (at most its lookup wait) when one is
    given and it is one of ``clusters``."""
    now = time.time()
    _, states = views.now(now)
    attached = next((name for name, state in states.items() if state.live_attached), None)
    found = None
    if live is not None and attached in clusters:
        found = await live.coordinator(group)
    return answer(run, states, group, clusters, partitions, now, found, attached)


def answer(
    run: View,
    states: dict[str, ClusterState],
    group: str,
    clusters: Sequence[str],
    partitions: int | None,
    now: float,
    live: LiveLookup | None = None,
    live_cluster: str | None = None,
) -> dict[str, Any]:
    """The ``CoordinatorAnswer`` for ``group`` in each of ``clusters`` (``partitions``: the
    count the request gives instead of the cluster's; ``live``: FindCoordinator's answer, for
    ``live_cluster``)."""
    in_run = {cluster_key(r["cluster_id"]) for r in run.groups.rows(group)}
    return {
        "run_id": run.run_id,
        "group": group,
        "java_hash_code": java_string_hash(group),
        "in_run": bool(in_run & set(clusters)),
        "clusters": [
            cluster_answer(
                run,
                states[c],
                group,
                partitions,
                now,
                live if c == live_cluster else None,
            )
            for c in clusters
            if c in states
        ],
    }


def cluster_answer(
    run: View,
    state: ClusterState,
    group: str,
    partitions: int | None,
    now: float,
    live: LiveLookup | None,
) -> dict[str, Any]:
    count = state.count
    if partitions is not None:
        count = PartitionCount(
            partitions,
            CountSource.NONE,
            False,
            (f"{partitions} partitions, as the request gave it (?partitions=)",),
            max(partitions, count.at_least),
        )
    found = coordinator_answer(group, state.evidence, state.live, state.kraft, count=count)
    reasons = list(found.reasons)
    if partitions is not None and found.partition is not None:
        reasons[0] = (
            f"partition {found.partition} = Utils.abs(hashCode) % {partitions} (?partitions=)"
        )
    head = [*count.reasons, *reasons]
    if state.live_note:
        head.append(state.live_note)
    uncertain = found.uncertain
    coordinator = found.coordinator
    source = None if found.view is None or found.view.source is None else str(found.view.source)
    live_json, loading = None, None
    if live is not None:
        live_json, loading, note = _live(live, coordinator)
        if note:
            head.append(note)
            uncertain = uncertain or coordinator is not None
        lookup = live.answer
        if coordinator is None and isinstance(lookup, CoordinatorLookup) and lookup.node_id:
            coordinator, source = lookup.node_id, "find-coordinator"
    replicas = [] if found.partition is None else replica_rows(run, state, found.partition, now)
    leader_rows = [r for r in replicas if r["broker_id"] == coordinator]
    estimates = [r for r in (leader_rows or replicas) if r["load_estimate_seconds"] is not None]
    estimate = max(estimates, key=lambda r: r["load_estimate_seconds"], default=None)
    view = found.view
    leadership = None if view is None else view.leadership
    return {
        "cluster_id": state.cluster_id,
        "partition": found.partition,
        "partitions": count.count,
        "partitions_source": "request" if partitions is not None else count.source.value,
        "partitions_uncertain": count.uncertain,
        "uncertain": uncertain,
        "reasons": head,
        "coordinator": None
        if coordinator is None
        else {
            "broker_id": coordinator,
            **_address(state, coordinator),
            "source": str(source) if source is not None else None,
            "leader_epoch": None if leadership is None else leadership.leader_epoch,
            "isr": None if leadership is None else list(leadership.isr),
        },
        "loading": loading,
        "live": live_json,
        "load_estimate_seconds": None if estimate is None else estimate["load_estimate_seconds"],
        "load_estimate_from": None
        if estimate is None
        else (
            f"broker {estimate['broker_id']} ({estimate['log_dir']}): "
            f"{estimate['load_estimate_basis']}"
            + ("" if leader_rows else " (the largest replica: the leader is not scanned)")
        ),
        "replicas": replicas,
        "replicas_not_scanned": []
        if leadership is None
        else [r for r in leadership.replicas if state.scanned_broker(r) is None],
    }


def _address(state: ClusterState, broker: int) -> dict[str, Any]:
    """host and port from the live cluster's metadata, else the listeners the broker's scan
    was configured with (``advertised.listeners``)."""
    found = state.address(broker)
    scanned = state.scanned_broker(broker)
    return {
        "host": None if found is None else found[0],
        "port": None if found is None else found[1],
        "listeners": None if scanned is None else scanned.listeners,
    }


def _live(live: LiveLookup, leader: int | None) -> tuple[dict[str, Any], bool | None, str | None]:
    """(the live block, loading or not, a reason when it disagrees with the metadata)."""
    if live.pending:
        return {"pending": True, "state": None}, None, "FindCoordinator: no answer yet"
    lookup = live.answer
    if isinstance(lookup, LiveError) or lookup is None:
        reason = "no answer" if lookup is None else lookup.reason
        return {"pending": False, "state": None, "error": reason}, None, None
    block = {
        "pending": False,
        "broker_id": lookup.node_id,
        "host": lookup.host,
        "port": lookup.port,
        "state": str(lookup.state),
        "error": lookup.error,
        "reason": lookup.reason,
        "group_state": lookup.group_state,
    }
    # ready: loaded; loading: COORDINATOR_LOAD_IN_PROGRESS; anything else (not-coordinator,
    # which 0.9 also answers while it loads) says neither
    loading = {"ready": False, "loading": True}.get(str(lookup.state))
    note = None
    if lookup.node_id is not None and leader is not None and lookup.node_id != leader:
        note = (
            f"FindCoordinator names broker {lookup.node_id}, the metadata's leader is broker"
            f" {leader}: leadership is moving"
        )
    return block, loading, note


def replica_rows(
    run: View, state: ClusterState, partition: int, now: float
) -> list[dict[str, Any]]:
    """Each log dir of the view holding ``partition`` in this cluster, with its health."""
    view = state.view(partition)
    leadership = view.leadership
    out = []
    for p in run.partition_rows(state.cluster_id, partition):
        broker = run.broker_row(p)
        at = None if broker is None else broker.get("run_finished_at")
        out.append(
            {
                "broker_id": p["broker_id"],
                "log_dir": p["log_dir"],
                "publisher": None if broker is None else broker.get("publisher"),
                "data_age_seconds": None if at is None else round(now - at, 3),
                "kafka_version": None if broker is None else broker.get("kafka_version"),
                "leader": None if leadership is None else leadership.leader == p["broker_id"],
                "in_isr": None if leadership is None else p["broker_id"] in leadership.isr,
                "size_bytes": p["size_bytes"],
                "segments": p["segment_count"],
                "log_end_offset": p["log_end_offset"],
                "never_compacted": p["never_compacted"],
                "verdict": p["outcome"],
                "reason": p["reason"],
                "passes": p["passes"],
                "load_estimate_seconds": p["load_estimate_seconds"],
                "load_estimate_basis": p["load_estimate_basis"],
                "open_findings": run.findings_of(p, p["partition"]),
            }
        )
    return out
