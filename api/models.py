"""The API's response models. A table's row model is made from the published contract
(``offsets_auditor.published.TABLES``, read off the table's row type), so the API serves
exactly the columns the scan publishes, with their types; every column may be null, as in the
contract."""

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


#: ``cluster_id`` in every table and answer: never null, empty when there is none
CLUSTER_ID: Any = (str, Field("", description="empty when meta.properties has no cluster.id"))


def row_model(table: str, name: str) -> type[BaseModel]:
    fields: dict[str, Any] = {
        column: CLUSTER_ID if column == "cluster_id" else (_PYTHON[kind] | None, None)
        for column, kind in published.TABLES[table]
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


class ReplicaHealth(BaseModel):
    """The coordinating partition in one log dir holding it (one replica), and its health."""

    broker_id: int | None
    log_dir: str
    publisher: str | None = Field(description="the scan whose newest run holds this log dir")
    data_age_seconds: float | None = Field(description="how old that run is")
    kafka_version: str | None
    leader: bool | None = Field(description="whether it is the leader (None: no metadata)")
    in_isr: bool | None
    size_bytes: int | None
    segments: int | None
    log_end_offset: int | None
    never_compacted: bool | None
    verdict: str | None
    reason: str | None
    passes: int | None
    load_estimate_seconds: float | None
    load_estimate_basis: str | None
    open_findings: list[FindingRow]  # type: ignore[valid-type]


class Coordinator(BaseModel):
    """The broker coordinating the group: the partition's leader."""

    broker_id: int
    host: str | None = Field(description="from the live cluster's metadata")
    port: int | None
    listeners: str | None = Field(
        description="advertised.listeners (else listeners) of the config its scan was given"
    )
    source: str | None = Field(description="live-cluster, kraft-metadata-log, or find-coordinator")
    leader_epoch: int | None
    isr: list[int] | None


class LiveCoordinator(BaseModel):
    """What the live cluster answers now (``serve --bootstrap-server``)."""

    pending: bool = Field(description="FindCoordinator not answered yet: ask again")
    broker_id: int | None = None
    host: str | None = None
    port: int | None = None
    state: str | None = Field(
        None, description="ready, loading, not-coordinator, not-available or unknown"
    )
    error: str | None = None
    reason: str | None = None
    group_state: str | None = None


class ClusterAnswer(BaseModel):
    """The answer in one cluster."""

    cluster_id: str = Field(description="empty when meta.properties has no cluster.id")
    partition: int | None = Field(
        description="the __consumer_offsets partition coordinating the group (None: no count"
        " the evidence supports)"
    )
    partitions: int | None = Field(description="the number of __consumer_offsets partitions")
    partitions_source: str = Field(
        description="which rule gave the count: live-cluster, kraft-metadata-log,"
        " partition-dirs, broker-config, none, or request"
    )
    partitions_uncertain: bool = Field(
        description="the evidence for the count is incomplete or disagrees: see reasons"
    )
    uncertain: bool = Field(
        description="the count or the coordinator is uncertain (a leader no metadata states is"
        " unknown): see reasons"
    )
    reasons: list[str]
    coordinator: Coordinator | None = Field(description="None: the leader is unknown")
    loading: bool | None = Field(
        description="the coordinator answers COORDINATOR_LOAD_IN_PROGRESS (None: not asked)"
    )
    live: LiveCoordinator | None
    load_estimate_seconds: float | None = Field(
        description="the disk's estimate of the time a new coordinator takes to load it"
    )
    load_estimate_from: str | None
    replicas: list[ReplicaHealth]
    replicas_not_scanned: list[int] = Field(
        description="brokers the metadata names as replicas whose data the view lacks"
    )


class CoordinatorAnswer(BaseModel):
    """Which partition coordinates ``group`` and which broker leads it, per cluster:
    ``partition = Utils.abs(group.hashCode()) % partitions``."""

    run_id: str
    group: str
    java_hash_code: int = Field(description="Java's String.hashCode of the group id")
    in_run: bool = Field(description="whether the view holds offsets or metadata of the group")
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


class ClusterBroker(BaseModel):
    """A broker of the cluster, scanned or not."""

    broker_id: int | None
    state: str = Field(
        description="ok; stale: its data is older than three scan intervals; missing: known"
        " to exist (known_from) but no served run holds its log dirs"
    )
    data_age_seconds: float | None
    publishers: list[str]
    log_dirs: list[str]
    known_from: list[str] = Field(
        description="scanned, live-cluster, kraft-metadata-log, earlier-run"
    )
    host: str | None = None
    port: int | None = None
    partitions_held: list[int] = Field(default_factory=list)


class ReplicaOnDisk(BaseModel):
    """One replica of an offsets partition, as one log dir holds it."""

    broker_id: int | None
    log_dir: str
    publisher: str | None
    data_age_seconds: float | None
    size_bytes: int | None
    log_end_offset: int | None
    cleaner_checkpoint: int | None
    verdict: str | None
    never_compacted: bool | None
    load_estimate_seconds: float | None


class ClusterPartition(BaseModel):
    """One offsets partition across the cluster's brokers."""

    partition: int
    leader: int | None = Field(description="from the live cluster or KRaft metadata")
    leader_epoch: int | None
    replicas: list[int] | None = Field(description="as the metadata states them")
    isr: list[int] | None
    source: str | None
    held_by: list[str] = Field(description="brokers whose scans hold its dir")
    on_disk: list[ReplicaOnDisk]
    divergences: int = Field(description="replica-divergence findings about it")
    notes: list[str]


class ClusterOverview(BaseModel):
    """One cluster of the served view: its brokers, the offsets topic's partition count (which
    rule gave it, and why), every offsets partition with its replicas across brokers."""

    cluster_id: str
    partitions: int | None
    partitions_source: str
    uncertain: bool
    reasons: list[str]
    live: dict[str, Any] | None = Field(
        description="the live cluster (serve --bootstrap-server): bootstrap, metadata age,"
        " brokers, last error"
    )
    brokers: list[ClusterBroker]
    offsets_partitions: list[ClusterPartition]
