"""Groups: which partition coordinates one (``coordinator-partition``), its recovered offsets and
metadata, and the reset plan for ``kafka-consumer-groups.sh --reset-offsets --from-file``.

A group id is one path segment, percent-encoded (``/`` as ``%2F``, ``%`` as ``%25``, a space as
``%20``, any character as its UTF-8 bytes): ``GroupIdPath`` routes ``/groups/...`` on the raw
path so that an encoded ``/`` stays inside the id. The empty id, which has no path form, and any
other id go in the query form: ``/group/coordinator-partition?group=ID``, ``/group?group=ID``,
``/group/reset-offsets.csv?group=ID``.
"""

from __future__ import annotations

from typing import Annotated, Any
from urllib.parse import unquote_to_bytes

from fastapi import APIRouter, HTTPException, Path, Query, Response
from starlette.types import ASGIApp, Receive, Scope, Send

from api.coordination import BadGroupId, check_group_id, lookup
from api.deps import ClusterFilter, ClustersDep, Limit, LiveDep, Offset, RunDep
from api.models import BAD_REQUEST, CoordinatorAnswer, GroupDetails, GroupNames, Problem
from api.results import cluster_key
from api.view import View
from offsets_auditor.groups.export import ExportError, reset_plan_csv

router = APIRouter(tags=["groups"])

ERRORS: dict[int | str, dict[str, Any]] = {
    **BAD_REQUEST,
    404: {"model": Problem, "description": "unknown cluster, or no such group in the run"},
    503: {"model": Problem, "description": "no run loaded yet"},
}

CSV_RESPONSES: dict[int | str, dict[str, Any]] = {
    **ERRORS,
    200: {
        "content": {"text/csv": {"schema": {"type": "string"}}},
        "description": "topic,partition,offset lines",
    },
    409: {"model": Problem, "description": "several clusters hold the group, or a topic name"},
}

GroupPath = Annotated[
    str,
    Path(description="the group id, percent-encoded as one path segment (UTF-8)"),
]
GroupQuery = Annotated[str, Query(description="the group id (may be empty)", max_length=3 * 32767)]
Partitions = Annotated[
    int | None,
    Query(
        ge=1,
        le=1_000_000,
        description="the __consumer_offsets partition count to use instead of the run's",
    ),
]


class GroupIdPath:
    """ASGI middleware: for ``/groups/...`` the router sees the raw, still percent-encoded path,
    so an id holding ``%2F`` stays one segment; the handlers decode it (``decode_segment``)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        raw = scope.get("raw_path") if scope["type"] == "http" else None
        if raw and raw.startswith(b"/groups/"):
            scope = {**scope, "path": raw.decode("latin-1")}
        await self.app(scope, receive, send)


def decode_segment(segment: str) -> str:
    try:
        text = unquote_to_bytes(segment).decode("utf-8")
    except UnicodeDecodeError as error:
        raise HTTPException(
            400, f"the group id is not UTF-8 once percent-decoded: {error}"
        ) from None
    return _checked(text)


def _checked(group: str) -> str:
    try:
        return check_group_id(group)
    except BadGroupId as error:
        raise HTTPException(400, str(error)) from None


def _clusters(run: View, cluster: str | None) -> list[str]:
    known = run.clusters()
    if cluster is None:
        return known
    if cluster not in known:
        raise HTTPException(
            404, f"cluster {cluster!r} is not in run {run.run_id} (clusters: {known})"
        )
    return [cluster]


@router.get("/groups", response_model=GroupNames, responses=ERRORS)
async def list_groups(
    run: RunDep,
    limit: Limit = 100,
    offset: Offset = 0,
    prefix: Annotated[str, Query(max_length=32767)] = "",
) -> dict[str, Any]:
    """The group ids of the run (all clusters), in order, a page at a time."""
    total, items = run.groups.names(prefix, offset, limit)
    return {
        "run_id": run.run_id,
        "total": total,
        "offset": offset,
        "limit": limit,
        "prefix": prefix,
        "items": items,
    }


@router.get(
    "/groups/{group_id}/coordinator-partition", response_model=CoordinatorAnswer, responses=ERRORS
)
async def coordinator_partition_by_path(
    run: RunDep,
    views: ClustersDep,
    live: LiveDep,
    group_id: GroupPath,
    cluster: ClusterFilter = None,
    partitions: Partitions = None,
) -> dict[str, Any]:
    """The ``__consumer_offsets`` partition coordinating the group and the broker leading it,
    per cluster: the count from every broker's evidence (and the live cluster when the
    service has one), whether the coordinator is loading, the load estimate, each replica's
    health. Works for groups the view does not hold."""
    group = decode_segment(group_id)
    return await lookup(run, views, live, group, _clusters(run, cluster), partitions)


@router.get("/group/coordinator-partition", response_model=CoordinatorAnswer, responses=ERRORS)
async def coordinator_partition_by_query(
    run: RunDep,
    views: ClustersDep,
    live: LiveDep,
    group: GroupQuery,
    cluster: ClusterFilter = None,
    partitions: Partitions = None,
) -> dict[str, Any]:
    """The same as ``/groups/{group_id}/coordinator-partition``, the id as a query parameter
    (the empty id: ``?group=``)."""
    return await lookup(run, views, live, _checked(group), _clusters(run, cluster), partitions)


@router.get(
    "/groups/{group_id}/reset-offsets.csv",
    response_class=Response,
    responses=CSV_RESPONSES,
)
async def reset_offsets_by_path(
    run: RunDep,
    group_id: GroupPath,
    cluster: ClusterFilter = None,
    log_dir: Annotated[str | None, Query(max_length=4096)] = None,
) -> Response:
    """``topic,partition,offset`` lines, what ``kafka-consumer-groups.sh --reset-offsets
    --from-file`` reads (no header). From the copy of the group in the longest replica of its
    partition (``?log_dir=`` picks one); pending transactional offsets are left out. The
    ``X-Offsets-Auditor-Source`` header names the log dir it comes from."""
    return _reset_plan(run, decode_segment(group_id), cluster, log_dir)


@router.get(
    "/group/reset-offsets.csv",
    response_class=Response,
    responses=CSV_RESPONSES,
)
async def reset_offsets_by_query(
    run: RunDep,
    group: GroupQuery,
    cluster: ClusterFilter = None,
    log_dir: Annotated[str | None, Query(max_length=4096)] = None,
) -> Response:
    """The same as ``/groups/{group_id}/reset-offsets.csv``, the id as a query parameter."""
    return _reset_plan(run, _checked(group), cluster, log_dir)


@router.get("/groups/{group_id}", response_model=GroupDetails, responses=ERRORS)
async def group_by_path(
    run: RunDep, group_id: GroupPath, cluster: ClusterFilter = None
) -> dict[str, Any]:
    """The group's recovered committed offsets and metadata, per log dir holding it."""
    return _details(run, decode_segment(group_id), cluster)


@router.get("/group", response_model=GroupDetails, responses=ERRORS)
async def group_by_query(
    run: RunDep, group: GroupQuery, cluster: ClusterFilter = None
) -> dict[str, Any]:
    """The same as ``/groups/{group_id}``, the id as a query parameter."""
    return _details(run, _checked(group), cluster)


def _copies(run: View, group: str, cluster: str | None) -> list[dict[str, Any]]:
    clusters = set(_clusters(run, cluster))
    # one copy per log dir of a broker: brokers scanned on their own hosts often have the same
    # log dir path
    copies: dict[tuple[str, int | None, str], dict[str, Any]] = {}
    for row in run.groups.rows(group):
        if cluster_key(row["cluster_id"]) not in clusters:
            continue
        key = (cluster_key(row["cluster_id"]), row["broker_id"], row["log_dir"])
        copy = copies.get(key)
        if copy is None:
            copy = copies[key] = {
                "cluster_id": cluster_key(row["cluster_id"]),
                **{
                    k: row[k]
                    for k in (
                        "broker_id",
                        "log_dir",
                        "coordinator_partition",
                        "expected_partition",
                        "state",
                        "group_type",
                        "protocol_type",
                        "protocol",
                        "generation",
                        "members",
                    )
                },
                "offsets": [],
            }
        if row["topic"] is not None:
            copy["offsets"].append(
                {
                    k: row[k]
                    for k in (
                        "topic",
                        "partition",
                        "offset",
                        "metadata",
                        "commit_timestamp",
                        "expire_timestamp",
                        "leader_epoch",
                        "log_offset",
                        "value_version",
                        "producer_id",
                        "pending",
                    )
                }
            )
    return list(copies.values())


def _details(run: View, group: str, cluster: str | None) -> dict[str, Any]:
    copies = _copies(run, group, cluster)
    if not copies:
        raise HTTPException(
            404,
            f"no offsets or metadata of group {group!r} in run {run.run_id}; its coordinator"
            " partition: /group/coordinator-partition?group=<id>",
        )
    return {"run_id": run.run_id, "group": group, "copies": copies}


def _reset_plan(run: View, group: str, cluster: str | None, log_dir: str | None) -> Response:
    copies = _copies(run, group, cluster)
    if log_dir is not None:
        copies = [c for c in copies if c["log_dir"] == log_dir]
    if not copies:
        raise HTTPException(404, f"no offsets of group {group!r} in run {run.run_id}")
    if len({c["cluster_id"] for c in copies}) > 1:
        raise HTTPException(
            409,
            f"group {group!r} is in several clusters of run {run.run_id}: give ?cluster=",
        )
    ends = {
        (cluster_key(p["cluster_id"]), p["broker_id"], p["log_dir"], p["partition"]): (
            p["log_end_offset"] or -1
        )
        for p in run.partitions
    }
    # the longest replica of the partition (as `offsets-auditor groups export` picks)
    copy = max(
        copies,
        key=lambda c: ends.get(
            (c["cluster_id"], c["broker_id"], c["log_dir"], c["coordinator_partition"]), -1
        ),
    )
    committed = [
        _Offset(o) for o in copy["offsets"] if not o["pending"] and o["offset"] is not None
    ]
    try:
        plan = reset_plan_csv(committed)
    except ExportError as error:
        raise HTTPException(409, str(error)) from None
    if not plan:
        raise HTTPException(
            404, f"group {group!r} has no committed offsets to export in run {run.run_id}"
        )
    return Response(
        plan,
        media_type="text/csv",
        headers={"X-Offsets-Auditor-Source": copy["log_dir"].encode("utf-8").decode("latin-1")},
    )


class _Offset:
    """A committed offset as ``reset_plan_csv`` reads it (topic, partition, offset)."""

    __slots__ = ("offset", "partition", "topic")

    def __init__(self, row: dict[str, Any]) -> None:
        self.topic, self.partition, self.offset = row["topic"], row["partition"], row["offset"]
