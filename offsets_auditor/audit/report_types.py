"""The parts of the audit's JSON report (``audit.report``, ``audit.history_report``) that the
published rows are built from (``audit.rows``), as ``TypedDict``s: the report keeps its shape
to the byte, and a key renamed on one side fails type checking instead of a scan."""

from __future__ import annotations

from typing import Any, TypedDict


class EstimateModelJson(TypedDict):
    """``partitions[].load_estimate.model``: the broker's own load model that timed it"""

    basis: str
    affine: bool
    fixed_ms: float
    ms_per_unit: float
    expected_error: float


class LoadEstimateJson(TypedDict):
    """``partitions[].load_estimate``"""

    bytes: int
    records: int
    seconds: float
    bytes_after_cleaning: int
    seconds_after_cleaning: float
    basis: str
    model: EstimateModelJson | None


class PaceJson(TypedDict):
    """``brokers[].cleaner_log.throughput``"""

    cleanings: int
    consumed_bytes_per_second: float
    processed_bytes_per_second: float
    capacity_bytes_per_second: float
    busy_ratio: float
    busy_seconds: float
    run_seconds: float
    threads: int
    threads_alive: int
    basis: str


class CommitRateJson(TypedDict):
    """``brokers[].cleaner_log.commit_rate``"""

    bytes_per_second: float
    bytes: int
    seconds: float
    basis: str


class BrokerCleanerLogJson(TypedDict):
    """``brokers[].cleaner_log``"""

    files: list[str]
    how: str | None
    timezone: str
    as_of: str | None
    as_of_ms: int | None
    broker_started_at: str | None
    cleaner_started_at: str | None
    cleaner_shut_down_at: str | None
    threads: list[dict[str, Any]]
    threads_alive: int | None
    threads_dead: int | None
    cleanings: int
    uncleanable: list[dict[str, Any]]
    throughput: PaceJson | None
    commit_rate: CommitRateJson | None
    keeps_up: bool | None
    keeping_up: str | None
    notes: list[str]


class LoadModelJson(TypedDict):
    """One model of ``brokers[].coordinator_loads``"""

    basis: str
    affine: bool
    fixed_ms: float
    ms_per_unit: float
    loads: int
    expected_error: float
    describe: str


class CoordinatorLoadsJson(TypedDict):
    """``brokers[].coordinator_loads``"""

    server_log: str
    loads: int
    of_partitions_here: int
    usable: int
    min_load_ms: int
    model: LoadModelJson | None
    models: list[LoadModelJson]


class LastCleaningJson(TypedDict):
    """``partitions[].cleaner_log.last_cleaning``"""

    began_at: str | None
    began_at_ms: int
    ended_at: str | None
    ended_at_ms: int | None
    thread: int
    end: str
    dirty_section: list[int | None]
    passes: list[PassJson]
    start_mb: float | None
    start_messages: int | None
    end_mb: float | None
    end_messages: int | None
    mb_read: float | None
    seconds: float | None
    elapsed_seconds: float
    mb_per_second: float | None
    failure: str | None
    file: str
    position: int


class PassNumbersJson(TypedDict):
    """What the broker's log says of one real pass (cleaning): the map's range, where it
    ended, the banner's numbers (in ``PassJson`` and ``CleaningJson`` alike)."""

    start_offset: int | None
    upper_bound: int | None
    end_offset: int | None
    segments: int | None
    end: str
    buffer_utilization: float | None
    start_mb: float | None
    start_messages: int | None
    end_mb: float | None
    end_messages: int | None
    mb_read: float | None
    seconds: float | None
    mb_per_second: float | None
    failure: str | None


class PassJson(PassNumbersJson):
    """One real pass (cleaning) of ``last_cleaning.passes``"""

    began_at: str | None
    ended_at: str | None


class ComparisonJson(TypedDict):
    """``partitions[].cleaner_log.prediction``"""

    agreement: str
    difference: str | None
    detail: str
    passes: list[dict[str, Any]]


class PartitionCleanerLogJson(TypedDict):
    """``partitions[].cleaner_log``"""

    cleanings: int
    last_cleaning: LastCleaningJson | None
    last_completed_at: str | None
    last_completed_at_ms: int | None
    prediction: ComparisonJson
    uncleanable_since: str | None
    uncleanable_since_ms: int | None
    uncleanable_exception: str | None


class CleaningJson(PassNumbersJson):
    """One of the top-level ``cleanings``"""

    broker_id: int | None
    partition: int
    thread: int
    began_at: str | None
    began_at_ms: int
    ended_at_ms: int | None
    file: str
    position: int
