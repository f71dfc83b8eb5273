"""The rows of the published tables, one frozen dataclass per table: its fields are the table's
columns, in order, and their annotations the columns' types (``published.columns``). The scan
builds them from the audit's own types (``offsets_auditor.audit.rows``); ``TABLES``, the Arrow
schemas, the Spark DDL and the API's models are read off them. Columns are named as in the
audit JSON (``cleaner.*`` flattened); every column may be null in a published table.

A field made with :func:`added` was added after its table was first published (schema
version 1 unchanged): a run published before has no such column, and a reader takes it as
null there (``ADDED_COLUMNS``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Final, TypedDict

from offsets_auditor.findings import Finding

#: the field metadata key marking a column added since schema version 1
ADDED: Final = "added"


def added() -> Any:
    """A column added since its table was first published: null unless given."""
    return field(default=None, metadata={ADDED: True})


class WhereColumns(TypedDict):
    input: int
    log_dir: str
    broker_id: int | None
    cluster_id: str | None


@dataclass(frozen=True, slots=True, kw_only=True)
class Where:
    """Where a row comes from, first in every table that says it: the scan's input (its log
    dir, counted from 0), the log dir, its ``meta.properties`` broker and cluster ids (the
    scan audits each log dir on its own, so each input is one broker)."""

    input: int
    log_dir: str
    broker_id: int | None
    cluster_id: str | None

    def columns(self) -> WhereColumns:
        """The four columns, to open another row with (``Row(**where.columns(), ...)``)."""
        return {
            "input": self.input,
            "log_dir": self.log_dir,
            "broker_id": self.broker_id,
            "cluster_id": self.cluster_id,
        }


@dataclass(frozen=True, slots=True, kw_only=True)
class BrokerRow(Where):
    """One log dir: the broker's cleaner config and version, the recommendation, its totals,
    what it tells of the offsets topic, what its own logs say."""

    kafka_version: str | None
    kafka_version_low: str | None
    kafka_version_high: str | None
    kafka_version_basis: str | None
    kafka_version_given: bool | None
    clean_shutdown: bool | None
    cleaner_enabled: bool | None
    cleaner_threads: int | None
    dedupe_buffer_size: int | None
    load_factor: float | None
    memory_per_thread: int | None
    capacity: int | None
    min_cleanable_ratio: float | None
    threads_that_die: int | None
    recommended_dedupe_buffer_size: int | None
    recommendation_arithmetic: str | None
    # the recommendation with a day's growth (cleaner.headroom), rounded, and its heap
    recommended_dedupe_buffer_size_with_headroom: int | None = added()
    recommendation_heap_bytes: int | None = added()
    headroom_arithmetic: str | None = added()
    partitions: int | None
    size_bytes: int | None
    segments: int | None
    #: counted by the scan, which takes the groups apart
    groups: int | None
    corrupt_index_files: int | None
    exit_status: int | None
    # what the log dir tells of the offsets topic as a whole (audit.topic_evidence): the
    # service decides the partition count and the coordinators from every broker's
    offsets_partitions_held: tuple[int, ...] | None = added()
    offsets_topic_num_partitions: int | None = added()
    offsets_topic_num_partitions_origin: str | None = added()
    kraft_metadata_read_to: int | None = added()
    kraft_offsets_topic_json: str | None = added()
    # what the broker's own logs say (audit.history_report): its cleaner log (which files, in
    # which zone, as of when; the threads of its last run; its pace against the commit rate)
    # and the coordinator load model fitted to its own loads; null where no such log was read
    cleaner_log_files_json: str | None = added()
    cleaner_log_how: str | None = added()
    log_timezone: str | None = added()
    cleaner_log_as_of_ms: int | None = added()
    cleaner_threads_alive: int | None = added()
    cleaner_threads_dead: int | None = added()
    cleaner_threads_json: str | None = added()
    cleaner_throughput_bytes_per_second: float | None = added()
    cleaner_capacity_bytes_per_second: float | None = added()
    cleaner_busy_ratio: float | None = added()
    commit_bytes_per_second: float | None = added()
    cleaner_keeps_up: bool | None = added()
    cleaner_keeping_up: str | None = added()
    uncleanable_partitions: int | None = added()
    load_model: str | None = added()
    load_model_basis: str | None = added()
    load_model_expected_error: float | None = added()


@dataclass(frozen=True, slots=True, kw_only=True)
class PartitionRow(Where):
    """One ``__consumer_offsets`` partition of a log dir: its size, the cleaner's view and
    verdict, the recommendation, the coordinator load estimate, the space cleaning frees, and
    the broker's last real cleaning of it."""

    partition: int | None
    name: str | None
    size_bytes: int | None
    segment_count: int | None
    records: int | None
    log_end_offset: int | None
    cleaner_checkpoint: int | None
    never_compacted: bool | None
    dirty_ratio: float | None
    first_dirty_offset: int | None
    first_uncleanable_offset: int | None
    uncleanable_because: str | None
    clean_bytes: int | None
    cleanable_bytes: int | None
    outcome: str | None
    reason: str | None
    capacity: int | None
    needed_entries: int | None
    passes: int | None
    pass_end_offsets: tuple[int, ...] | None
    retained_records: int | None
    retained_bytes: int | None
    message: str | None
    recommended_dedupe_buffer_size: int | None
    recommendation_arithmetic: str | None
    recommended_dedupe_buffer_size_with_headroom: int | None = added()
    recommendation_heap_bytes: int | None = added()
    headroom_arithmetic: str | None = added()
    load_estimate_seconds: float | None
    load_estimate_seconds_after_cleaning: float | None
    load_estimate_basis: str | None
    active_segment_bytes: int | None
    floor_bytes: int | None
    reclaimable_bytes: int | None
    alternatives_json: str | None
    pass_details_json: str | None
    top_writers_json: str | None
    unknown_record_types: int | None
    unknown_record_types_json: str | None
    # the broker's last real cleaning of it (its cleaner log), beside the emulation's, and
    # its uncleanable mark; null where no cleaner log was read
    cleanings_in_log: int | None = added()
    last_cleaning_began_ms: int | None = added()
    last_cleaning_ended_ms: int | None = added()
    last_cleaning_end: str | None = added()
    last_cleaning_passes: int | None = added()
    last_cleaning_start_offset: int | None = added()
    last_cleaning_end_offset: int | None = added()
    last_cleaning_seconds: float | None = added()
    last_cleaning_mb_per_second: float | None = added()
    last_cleaning_json: str | None = added()
    last_completed_cleaning_ms: int | None = added()
    prediction_agreement: str | None = added()
    prediction_difference: str | None = added()
    prediction_detail: str | None = added()
    prediction_json: str | None = added()
    marked_uncleanable_since_ms: int | None = added()
    marked_uncleanable_exception: str | None = added()
    load_estimate_expected_error: float | None = added()


@dataclass(frozen=True, slots=True, kw_only=True)
class SegmentRow:
    """One segment of an offsets partition as the scan read it (``reused``: from the cache)."""

    input: int
    log_dir: str
    broker_id: int | None
    partition: int | None
    file: str | None
    base_offset: int | None
    size_bytes: int | None
    mtime_ms: int | None
    records: int | None
    batches: int | None
    next_offset: int | None
    largest_timestamp: int | None
    active: bool | None
    reused: bool | None
    problems: int | None


@dataclass(frozen=True, slots=True, kw_only=True)
class IndexRow:
    """One index file and what the broker's next start does with it
    (``offsets_auditor.startup.indexes``)."""

    input: int
    log_dir: str
    broker_id: int | None
    file: str | None
    partition: str | None
    kind: str | None
    base_offset: int | None
    verdict: str | None
    reason: str | None


@dataclass(frozen=True, slots=True, kw_only=True)
class GroupRow(Where):
    """One group and committed topic-partition (``pending``: a transactional offset not yet
    committed); a group without offsets is one row with no topic. Written column by column
    (``published.groups.group_columns``), never as objects of this type: it names the
    columns."""

    group: str | None
    coordinator_partition: int | None
    expected_partition: int | None
    state: str | None
    group_type: str | None
    protocol_type: str | None
    protocol: str | None
    generation: int | None
    members: int | None
    topic: str | None
    partition: int | None
    offset: int | None
    metadata: str | None
    commit_timestamp: int | None
    expire_timestamp: int | None
    leader_epoch: int | None
    log_offset: int | None
    value_version: int | None
    producer_id: int | None
    pending: bool | None


@dataclass(frozen=True, slots=True, kw_only=True)
class FindingRow(Where):
    """One finding (``offsets_auditor.findings.Finding``)."""

    kind: str | None
    severity: str | None
    detail: str | None
    partition: str | None
    file: str | None
    position: int | None
    field: str | None
    group: str | None

    @classmethod
    def of(cls, where: Where, f: Finding) -> FindingRow:
        return cls(
            **where.columns(),
            kind=f.kind.value,
            severity=f.severity.value,
            detail=f.detail,
            partition=f.partition,
            file=f.file,
            position=f.position,
            field=f.field,
            group=f.group,
        )


@dataclass(frozen=True, slots=True, kw_only=True)
class CleaningRow(Where):
    """One of an offsets partition's newest cleanings in the broker's cleaner log."""

    partition: int | None
    thread: int | None
    began_at: str | None
    began_at_ms: int | None
    ended_at_ms: int | None
    end: str | None
    start_offset: int | None
    upper_bound: int | None
    end_offset: int | None
    segments: int | None
    buffer_utilization: float | None
    start_mb: float | None
    start_messages: int | None
    end_mb: float | None
    end_messages: int | None
    mb_read: float | None
    seconds: float | None
    mb_per_second: float | None
    failure: str | None
    file: str | None
    position: int | None
