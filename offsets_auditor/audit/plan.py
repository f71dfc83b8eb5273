"""What an audit will do, decided before any segment is read: the broker config, the Kafka
version (given or detected) and the other versions of a detected range to emulate too.

The same plan drives ``offsets-auditor audit`` (one plan for the log dirs of one broker) and
the Spark scan (one plan per log dir, each broker detected on its own). Raises
:class:`PlanError` for what the operator must fix (a config the broker would refuse, a version
that does not parse), with the message to show.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from offsets_auditor.cleaner.config import CleanerConfig, ConfigError, cleaner_config
from offsets_auditor.logdir.server_log import find_server_log
from offsets_auditor.version_detection import Detection, detect, detect_version
from offsets_auditor.version_detection.spans import CLEANER_CHANGES, STARTUP_CHANGES, Span, spans
from offsets_auditor.versions import KafkaVersion


class PlanError(ValueError):
    """The operator's settings cannot be audited as given (the message says why)."""


@dataclass(frozen=True, slots=True)
class AuditSettings:
    """What the operator says about the brokers: ``server.properties`` pairs (file order),
    overrides (``--set`` and friends), the version if known, the broker's server log, whether
    to recover groups too, and the offsets topic's partition count if known."""

    properties: tuple[tuple[str, str], ...] = ()
    overrides: tuple[tuple[str, str], ...] = ()
    kafka_version: KafkaVersion | None = None
    server_log: Path | None = None
    with_groups: bool = True
    #: ``__consumer_offsets``' real partition count when known (None: the partition dirs tell,
    #: see ``groups.recover.plan``); :func:`plan_audit` sets it from
    #: ``offsets.topic.num.partitions`` when that is set
    partitions_count: int | None = None


@dataclass(frozen=True, slots=True)
class AuditPlan:
    """The audit of ``log_dirs`` (one broker's): ``config`` at the version used, and, when the
    version was detected as a range, each stretch of it where the cleaner (``cleaner_stretches``,
    with their configs) or the start-up checks (``startup_stretches``) behave differently."""

    log_dirs: tuple[Path, ...]
    settings: AuditSettings
    detection: Detection
    config: CleanerConfig
    cleaner_stretches: tuple[tuple[Span, CleanerConfig], ...]
    startup_stretches: tuple[Span, ...]
    now_ms: int

    @property
    def configs(self) -> tuple[CleanerConfig, ...]:
        """Every config a partition is emulated at: ``config`` first, then each stretch's that
        differs from it."""
        others = [c for _, c in self.cleaner_stretches if c != self.config]
        return (self.config, *others)

    @property
    def emulated_versions(self) -> list[str]:
        return [str(span.first) for span, _ in self.cleaner_stretches] or [str(self.detection.used)]


def plan_audit(
    log_dirs: Sequence[Path],
    settings: AuditSettings,
    now_ms: int,
    detection: Detection | None = None,
) -> AuditPlan:
    """The plan for ``log_dirs`` (the version detected from them and the server log unless
    ``detection`` is given). Without ``settings.server_log``, the broker's own log is looked
    for beside the log dirs (``logdir.server_log``) and read for its version line only."""
    if detection is not None:
        found = detection
    else:
        server_log, how = settings.server_log, "--server-log"
        if server_log is None:
            beside = (find_server_log(d) for d in log_dirs)
            server_log = next((s for s in beside if s is not None), None)
            how = "found beside the log dir"
        found = detect_version(log_dirs, server_log, settings.kafka_version)
        if server_log is not None:
            found = replace(found, server_log=(str(server_log), how))
    properties = list(settings.properties)
    overrides = dict(settings.overrides)
    try:
        config = cleaner_config(properties, overrides, str(found.used))
    except (ConfigError, ValueError) as error:
        raise PlanError(f"the broker would refuse this config: {error}") from None
    cleaner_stretches: list[tuple[Span, CleanerConfig]] = []
    if found.detected:
        for span in spans(found.range, CLEANER_CHANGES, found.lowest_modelled):
            try:
                cleaner_stretches.append(
                    (span, cleaner_config(properties, overrides, str(span.first)))
                )
            except (ConfigError, ValueError):
                continue  # a stretch whose broker would refuse the config is left out
    startup = spans(found.range, STARTUP_CHANGES, found.used) if found.detected else []
    if "offsets.topic.num.partitions" in dict(properties) | overrides:
        settings = replace(settings, partitions_count=config.offsets_topic_partitions)
    return AuditPlan(
        log_dirs=tuple(log_dirs),
        settings=settings,
        detection=found,
        config=config,
        cleaner_stretches=tuple(cleaner_stretches),
        startup_stretches=tuple(startup),
        now_ms=now_ms,
    )


def given_plan(
    log_dir: Path, config: CleanerConfig, now_ms: int, settings: AuditSettings | None = None
) -> AuditPlan:
    """The plan for one log dir at a config built by the caller (its version taken as given)."""
    return AuditPlan(
        log_dirs=(log_dir,),
        settings=settings or AuditSettings(kafka_version=config.kafka_version),
        detection=detect([], config.kafka_version),
        config=config,
        cleaner_stretches=(),
        startup_stretches=(),
        now_ms=now_ms,
    )
