"""The service's settings: command-line options or ``OFFSETS_AUDITOR_*`` environment variables
(``OFFSETS_AUDITOR_RESULTS``, ``OFFSETS_AUDITOR_SCAN_INTERVAL_SECONDS``, ...).

The alert thresholds are ``api.alert_rules.Thresholds``: ``GET /alerts`` evaluates the rules
with these; the Prometheus rules in ``deploy/prometheus/`` are written with the defaults
(``scripts/deploy/rules.py`` takes the same options to write them with others)."""

from __future__ import annotations

from pathlib import Path

from pydantic import Field
from pydantic_settings import BaseSettings, SettingsConfigDict

from api.alert_rules import Thresholds

MIB = 1024 * 1024


class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="OFFSETS_AUDITOR_", frozen=True)

    #: the results dir the scan publishes to (``offsets-auditor scan --out RESULTS``)
    results: Path
    host: str = "127.0.0.1"
    port: int = Field(8080, ge=0, le=65535)
    #: ``OffsetsPartitionNeverCompacted`` fires above this size (bytes)
    never_compacted_threshold_bytes: int = Field(Thresholds().never_compacted_bytes, ge=0)
    #: ``OffsetsCoordinatorLoadSlow`` fires above this load estimate: the consumers'
    #: ``session.timeout.ms`` (10 s by default up to Kafka 2.8, 45 s from 3.0)
    coordinator_load_threshold_seconds: float = Field(Thresholds().load_slow_seconds, ge=0)
    #: how often the scans run (their schedule): a publisher's newest run is stale after three
    #: intervals (``OffsetsScanStale``), and no run at all alerts after two (``OffsetsNoScanYet``)
    scan_interval_seconds: float = Field(Thresholds().scan_interval_seconds, gt=0)
    #: how often the results dir is checked for a new run
    poll_seconds: float = Field(5.0, gt=0)
    #: the runbooks' base: ``<runbook_base_url><alertname>.md``; default: the service's own
    #: ``/runbooks/`` (absolute, from the request)
    runbook_base_url: str | None = None
    #: the live cluster beside the disk (optional): ``host:port[,host:port...]``
    bootstrap_server: str | None = None
    #: its client properties (TLS, SASL), as Kafka's CLI ``--command-config`` takes them
    command_config: Path | None = None
    #: how often the live cluster's metadata is read again
    live_refresh_seconds: float = Field(30.0, gt=0)
    #: the bound on each call to the live cluster (connect, Metadata, FindCoordinator)
    live_timeout_seconds: float = Field(5.0, gt=0)
    #: the longest a lookup waits for FindCoordinator before answering without it
    live_lookup_wait_seconds: float = Field(2.0, ge=0)

    def thresholds(self) -> Thresholds:
        return Thresholds(
            never_compacted_bytes=self.never_compacted_threshold_bytes,
            load_slow_seconds=self.coordinator_load_threshold_seconds,
            scan_interval_seconds=self.scan_interval_seconds,
        )
