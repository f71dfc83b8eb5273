"""The API's response models. A table's row model is made from the published contract
(``offsets_auditor.published.TABLES``), so the API serves exactly the columns the scan
publishes, with their types; every column may be null, as in the contract."""

from __future__ import annotations

from typing import Any, Generic, TypeVar

from pydantic import BaseModel, ConfigDict, Field, create_model

from offsets_auditor import published

_PYTHON: dict[str, Any] = {
    "int64": int,
    "float64": float,
    "bool": bool,
    "string": str,
    "list<int64>": list[int],
}


def row_model(table: str, name: str) -> type[BaseModel]:
    fields: dict[str, Any] = {
        column: (_PYTHON[kind] | None, None) for column, kind in published.TABLES[table]
    }
    return create_model(name, __config__=ConfigDict(extra="ignore"), **fields)


BrokerRow = row_model("brokers", "BrokerRow")
PartitionRow = row_model("partitions", "PartitionRow")
SegmentRow = row_model("segments", "SegmentRow")
IndexRow = row_model("indexes", "IndexRow")
FindingRow = row_model("findings", "FindingRow")
CleaningRow = row_model("cleanings", "CleaningRow")

T = TypeVar("T")


class Page(BaseModel, Generic[T]):
    """One page of a long list: ``items`` from ``offset``, at most ``limit``, of ``total``."""

    run_id: str | None = Field(description="the newest run served (None: none yet)")
    total: int
    offset: int
    limit: int
    items: list[T]


class PartitionDetail(PartitionRow):  # type: ignore[misc,valid-type]
    """A partitions row with its JSON columns decoded and its open findings."""

    offset_map_headroom_ratio: float | None = Field(
        None, description="1 - needed_entries / capacity (negative: more than one pass)"
    )
    alternatives: list[dict[str, Any]] = Field(default_factory=list)
    pass_details: list[dict[str, Any]] = Field(default_factory=list)
    top_writers: list[dict[str, Any]] = Field(default_factory=list)
    unknown_record_types_by_type: dict[str, int] = Field(default_factory=dict)
    last_cleaning: dict[str, Any] | None = Field(
        None,
        description="the broker's last real cleaning of the partition, from its cleaner log"
        " (None: no cleaner log read, or no cleaning of it in the log)",
    )
    prediction: dict[str, Any] | None = Field(
        None,
        description="the broker's passes beside the emulation's: agreement (agrees, differs,"
        " not-comparable), the named difference, each pass",
    )
    cleanings: list[CleaningRow] = Field(  # type: ignore[valid-type]
        default_factory=list, description="the newest cleanings of it in the cleaner log"
    )
    findings: list[FindingRow] = Field(default_factory=list)  # type: ignore[valid-type]


class PartitionReplicas(BaseModel):
    """Every log dir of the run holding ``__consumer_offsets-<partition>``."""

    run_id: str
    partition: int
    replicas: list[PartitionDetail]


class BrokerRef(BaseModel):
    cluster_id: str
    broker_id: int | None
    log_dir: str
    kafka_version: str | None


class ReplicaHealth(BaseModel):
    """How the coordinating partition stands in one log dir."""

    broker_id: int | None
    log_dir: str
    size_bytes: int | None
    segments: int | None
    never_compacted: bool | None
    verdict: str | None
    reason: str | None
    passes: int | None
    load_estimate_seconds: float | None
    load_estimate_basis: str | None
    open_findings: list[FindingRow]  # type: ignore[valid-type]


class ClusterAnswer(BaseModel):
    cluster_id: str = Field(description="empty when meta.properties has no cluster.id")
    partition: int = Field(description="the __consumer_offsets partition coordinating the group")
    partitions: int = Field(description="the number of __consumer_offsets partitions used")
    partitions_basis: str = Field(description="where that number comes from")
    brokers: list[BrokerRef] = Field(description="the log dirs of the run holding the partition")
    health: list[ReplicaHealth]


class CoordinatorAnswer(BaseModel):
    """Which partition coordinates ``group``: ``partition = Utils.abs(group.hashCode()) %
    partitions``. ``partition``, ``partitions``, ``brokers`` and ``health`` are those of the one
    cluster answered (null when the answer covers several: see ``clusters``)."""

    run_id: str
    group: str
    java_hash_code: int = Field(description="Java's String.hashCode of the group id")
    in_run: bool = Field(description="whether the run holds offsets or metadata of the group")
    partition: int | None
    partitions: int | None
    partitions_basis: str | None
    brokers: list[BrokerRef] | None
    health: list[ReplicaHealth] | None
    clusters: list[ClusterAnswer]


class CommittedOffset(BaseModel):
    topic: str
    partition: int
    offset: int | None
    metadata: str | None
    commit_timestamp: int | None
    expire_timestamp: int | None
    leader_epoch: int | None
    log_offset: int | None
    value_version: int | None
    producer_id: int | None
    pending: bool | None = Field(description="a transactional offset not committed yet")


class GroupCopy(BaseModel):
    """The group as one log dir's partition holds it."""

    cluster_id: str
    broker_id: int | None
    log_dir: str
    coordinator_partition: int | None
    expected_partition: int | None
    state: str | None
    group_type: str | None
    protocol_type: str | None
    protocol: str | None
    generation: int | None
    members: int | None
    offsets: list[CommittedOffset]


class GroupDetails(BaseModel):
    run_id: str
    group: str
    copies: list[GroupCopy]


class GroupNames(BaseModel):
    run_id: str
    total: int
    offset: int
    limit: int
    prefix: str
    items: list[str]


class RunSummary(BaseModel):
    run_id: str
    publisher: str = Field(description="the scan that published it (RESULTS/publishers/NAME)")
    readable: bool
    served: bool
    error: str | None = None
    started_at: str | None = None
    finished_at: str | None = None
    duration_seconds: float | None = None
    exit_status: int | None = None
    counts: dict[str, Any] | None = None
    reuse: dict[str, Any] | None = None
    total_size_bytes: int | None = Field(None, description="offsets partitions, all log dirs")
    total_dirty_bytes: int | None = None
    outcomes: dict[str, int] | None = Field(None, description="partitions per cleaner verdict")


class PublisherRow(BaseModel):
    publisher: str
    run_id: str | None = Field(description="its run served (None before its first)")
    finished_at: str | None
    age_seconds: float | None
    stale: bool = Field(description="no run, or its newest older than three scan intervals")
    log_dirs: list[str]
    failures_since_run: int
    last_failure: dict[str, Any] | None = Field(
        description="its newest failure record: run_id, failed_at, log_dirs, exit_status, reason"
    )


class AlertLabels(BaseModel):
    model_config = ConfigDict(extra="allow")
    alertname: str
    severity: str


class AlertAnnotations(BaseModel):
    summary: str
    description: str
    runbook_url: str


class AlertOut(BaseModel):
    """One alert in Alertmanager's shape (``POST /api/v2/alerts`` takes a list of these)."""

    labels: AlertLabels
    annotations: AlertAnnotations
    startsAt: str


class Readiness(BaseModel):
    ready: bool
    run_id: str | None = Field(description="the newest run served")
    run_ids: dict[str, str] = Field(description="publisher -> its run served")
    message: str
    newest_run_unreadable: bool
    load_errors_total: int


class Health(BaseModel):
    status: str


class Problem(BaseModel):
    """A 4xx answer: ``detail`` says why."""

    detail: str


#: Any request may get a 400: the service's own (JSON, ``Problem``: an invalid group id), or,
#: for a request whose head is over 1 MiB, the HTTP server's plain "Invalid HTTP request
#: received." before the service sees it.
BAD_REQUEST: dict[int | str, dict[str, Any]] = {
    400: {
        "description": "an invalid group id, or a request too long for the HTTP server",
        "content": {
            "application/json": {"schema": {"$ref": "#/components/schemas/Problem"}},
            "text/plain": {"schema": {"type": "string"}},
        },
    }
}
