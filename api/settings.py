"""The service's settings: command-line options or ``OFFSETS_AUDITOR_*`` environment variables
(``OFFSETS_AUDITOR_RESULTS``, ``OFFSETS_AUDITOR_COORDINATOR_LOAD_THRESHOLD_SECONDS``, ...).

Alert thresholds live here because ``GET /alerts`` evaluates them; the Prometheus rules in
``deploy/prometheus/`` carry the same defaults (docs/metrics.md)."""

from __future__ import annotations

from pathlib import Path

from pydantic import Field
from pydantic_settings import BaseSettings, SettingsConfigDict

MIB = 1024 * 1024


class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="OFFSETS_AUDITOR_", frozen=True)

    #: the results dir the scan publishes to (``offsets-auditor scan --out RESULTS``)
    results: Path
    host: str = "127.0.0.1"
    port: int = Field(8080, ge=0, le=65535)
    #: ``OffsetsPartitionNeverCompacted`` fires above this size (bytes)
    never_compacted_threshold_bytes: int = Field(100 * MIB, ge=0)
    #: ``OffsetsCoordinatorLoadSlow`` fires above this load estimate: the consumers'
    #: ``session.timeout.ms`` (10 s by default up to Kafka 2.8, 45 s from 3.0)
    coordinator_load_threshold_seconds: float = Field(10.0, ge=0)
    #: ``OffsetsScanStale`` fires when the latest run finished longer ago than this
    stale_run_threshold_seconds: float = Field(2 * 3600.0, ge=0)
    #: how often the results dir is checked for a new run
    poll_seconds: float = Field(5.0, gt=0)
    #: the runbooks' base: ``<runbook_base_url><alertname>.md``
    runbook_base_url: str = "docs/runbooks/"
