"""What an audit will do, decided before any segment is read: the broker config, the Kafka
version (given or detected) and the other versions of a detected range to emulate too.

The same plan drives ``offsets-auditor audit`` (one plan for the log dirs of one broker) and
the Spark scan (one plan per log dir, each broker detected on its own). Raises
:class:`PlanError` for what the operator must fix (a config the broker would refuse, a version
that does not parse), with the message to show.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from offsets_auditor.broker_logs.reading import find_cleaner_log
from offsets_auditor.broker_logs.zones import LogZone, parse_zone
from offsets_auditor.cleaner.config import CleanerConfig, ConfigError, cleaner_config
from offsets_auditor.groups.replay import Listing
from offsets_auditor.logdir.server_log import find_server_log, log_dir_parent
from offsets_auditor.version_detection import Detection, detect, detect_version
from offsets_auditor.version_detection.collect import Each, in_turn
from offsets_auditor.version_detection.spans import CLEANER_CHANGES, STARTUP_CHANGES, Span, spans
from offsets_auditor.versions import KafkaVersion


class PlanError(ValueError):
    """The operator's settings cannot be audited as given (the message says why)."""


@dataclass(frozen=True, slots=True)
class AuditSettings:
    """What the operator says about the brokers: ``server.properties`` pairs (file order),
    overrides (``--set`` and friends), the version if known, the broker's server log and
    cleaner log (``--cleaner-log``: the live file, or the files to read), the time zone its
    logs are written in, whether to recover groups too, and the offsets topic's partition
    count if known."""

    properties: tuple[tuple[str, str], ...] = ()
    overrides: tuple[tuple[str, str], ...] = ()
    kafka_version: KafkaVersion | None = None
    server_log: Path | None = None
    cleaner_logs: tuple[Path, ...] = ()
    #: the broker's log4j clock (``--log-timezone``): an IANA name, ``UTC`` or ``+HH:MM``
    log_timezone: str = "UTC"
    with_groups: bool = True
    #: whether the report lists every group with its committed offsets (``audit --json``):
    #: without it no group is built, only the findings about them (``listing``)
    groups_listed: bool = True
    #: ``__consumer_offsets``' real partition count when known (None: the partition dirs tell,
    #: see ``groups.recover.plan``); :func:`plan_audit` sets it from
    #: ``offsets.topic.num.partitions`` when that is set
    partitions_count: int | None = None

    @property
    def listing(self) -> Listing:
        """What each partition's replay lists of its groups."""
        return Listing.OFFSETS if self.groups_listed else Listing.NONE


@dataclass(frozen=True, slots=True)
class BrokerLogFiles:
    """The broker's own logs the audit reads beside its log dirs, and how each was had
    (``--server-log``/``--cleaner-log``, or found beside): ``server_log`` for its starts, load
    order and coordinator load times (``None``: none, or one version detection set aside as
    another broker's), ``cleaner_logs`` for what its cleaner did (one file: the live log,
    its rotated files read too; several: those files), read in ``zone``."""

    server_log: Path | None = None
    server_log_how: str | None = None
    cleaner_logs: tuple[Path, ...] = ()
    cleaner_log_how: str | None = None
    zone: LogZone = field(default_factory=LogZone.utc)


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
    broker_logs: BrokerLogFiles = field(default_factory=BrokerLogFiles)

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
    each: Each = in_turn,
) -> AuditPlan:
    """The plan for ``log_dirs`` (the version detected from them and the server log unless
    ``detection`` is given). Without ``settings.server_log``, the broker's own log is looked
    for beside the log dirs (``logdir.server_log``); without ``settings.cleaner_logs``, its
    ``log-cleaner.log`` beside that log, or beside the log dirs
    (``broker_logs.reading.find_cleaner_log``)."""
    server_log, how = settings.server_log, "--server-log"
    if server_log is None:
        beside = (find_server_log(d) for d in log_dirs)
        server_log = next((s for s in beside if s is not None), None)
        how = "found beside the log dir"
    if detection is not None:
        found = detection
    else:
        found = detect_version(log_dirs, server_log, settings.kafka_version, each)
        if server_log is not None:
            found = replace(found, server_log=(str(server_log), how))
    broker_logs = broker_log_files(log_dirs, settings, found, server_log, how)
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
        broker_logs=broker_logs,
    )


def broker_log_files(
    log_dirs: Sequence[Path],
    settings: AuditSettings,
    detection: Detection,
    server_log: Path | None,
    how: str,
) -> BrokerLogFiles:
    """Which of the broker's own logs the audit reads. A server log that version detection set
    aside (it contradicts the log dir: another broker's, or a run before an upgrade) is not
    read for anything else, nor is a cleaner log found beside it."""
    try:
        zone = parse_zone(settings.log_timezone)
    except ValueError as error:
        raise PlanError(f"--log-timezone: {error}") from None
    if server_log is not None and any(e.file == str(server_log) for e in detection.set_aside):
        given = "--cleaner-log" if settings.cleaner_logs else None
        return BrokerLogFiles(None, None, settings.cleaner_logs, given, zone)
    if settings.cleaner_logs:
        return BrokerLogFiles(server_log, how, settings.cleaner_logs, "--cleaner-log", zone)
    if server_log is not None:
        cleaner = find_cleaner_log(server_log.parent, ("",))
        where = "found beside the server log"
    else:
        beside = (find_cleaner_log(log_dir_parent(d)) for d in log_dirs)
        cleaner = next((c for c in beside if c is not None), None)
        where = "found beside the log dir"
    server_how = how if server_log is not None else None
    if cleaner is None:
        return BrokerLogFiles(server_log, server_how, (), None, zone)
    return BrokerLogFiles(server_log, server_how, (cleaner,), where, zone)


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
