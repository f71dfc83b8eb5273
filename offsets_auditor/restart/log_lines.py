"""One line of a broker's ``server.log`` -> a typed restart event, or ``None``.

Kafka's ``config/log4j.properties`` lays every line out as ``[%d] %p %m (%c)%n``::

    [2026-11-21 08:23:42,583] INFO Loading logs. (kafka.log.LogManager)

``%d`` is log4j's ISO8601 date in the broker's local time zone (no zone is printed), so the
timestamps here are naive ``datetime`` values, comparable with each other only. Lines that do not
start with a timestamp (continuations of multi-line messages, stack traces, garbage) are not
events.

The messages the broker prints while it restarts changed wording many times. :data:`PATTERNS` is
the one table of them: each row is the regular expression for one wording, the first release that
prints it (``since``), the first release that no longer does (``until``, ``None`` for "still
printed in 3.9"), and the Kafka source file it comes from. Ranges were read from the release tags
of Kafka's git history (``git grep`` of the message at each ``X.Y.Z`` tag; 3.9 is the
``3.9.0-rc3`` tag, the commit released as 3.9.0). Wordings of different releases never match the
same line, so with no version given every row is tried.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime

from offsets_auditor.constants import OFFSETS_TOPIC
from offsets_auditor.restart.events import (
    BrokerShuttingDown,
    BrokerStarted,
    BrokerStarting,
    CoordinatorLoadFailed,
    CoordinatorLoadFinished,
    CoordinatorLoadStarted,
    Event,
    IndexRebuildReason,
    IndexRebuilt,
    KafkaVersionSeen,
    LogDirAnnounced,
    LogLoaded,
    LogsLoadingComplete,
    LogsLoadingStarted,
    SegmentRecovering,
)
from offsets_auditor.versions import KafkaVersion

__all__ = [
    "OFFSETS_TOPIC",
    "PATTERNS",
    "BrokerShuttingDown",
    "BrokerStarted",
    "BrokerStarting",
    "CoordinatorLoadFailed",
    "CoordinatorLoadFinished",
    "CoordinatorLoadStarted",
    "Event",
    "IndexRebuildReason",
    "IndexRebuilt",
    "KafkaVersionSeen",
    "LinePattern",
    "LogDirAnnounced",
    "LogLine",
    "LogLoaded",
    "LogsLoadingComplete",
    "LogsLoadingStarted",
    "SegmentRecovering",
    "event_of",
    "looks_timestamped",
    "might_be_event",
    "parse_header",
    "parse_line",
    "parse_timestamp",
    "patterns_for",
    "patterns_for_range",
]


_HEADER = re.compile(
    r"^\[(?P<ts>(?P<Y>\d{4})-(?P<m>\d{2})-(?P<d>\d{2})[ T](?P<H>\d{2}):(?P<M>\d{2}):(?P<S>\d{2})"
    r"[,.](?P<ms>\d{3}))\] (?P<level>[A-Z]+) (?P<msg>.*?)(?: \((?P<logger>[\w.$]+)\))?\s*$"
)


def parse_timestamp(text: str) -> datetime | None:
    """The time of a log4j ``[yyyy-MM-dd HH:mm:ss,SSS]`` line, or ``None`` if ``text`` is not one.

    >>> parse_timestamp("[2026-11-21 08:23:42,583] INFO Loading logs. (kafka.log.LogManager)")
    datetime.datetime(2026, 11, 21, 8, 23, 42, 583000)
    """
    header = parse_header(text)
    return None if header is None else header.timestamp


@dataclass(frozen=True, slots=True)
class LogLine:
    """A log4j line split into its parts. ``logger`` is ``None`` when the line has no ``(%c)``."""

    timestamp: datetime
    level: str
    message: str
    logger: str | None


def parse_header(text: str) -> LogLine | None:
    match = _HEADER.match(text)
    if match is None:
        return None
    try:
        timestamp = datetime(
            int(match["Y"]),
            int(match["m"]),
            int(match["d"]),
            int(match["H"]),
            int(match["M"]),
            int(match["S"]),
            int(match["ms"]) * 1000,
        )
    except ValueError:  # 2026-13-45 and the like: not a log4j line
        return None
    return LogLine(timestamp, match["level"], match["msg"], match["logger"])


# --- the table --------------------------------------------------------------------------------

_Builder = Callable[[re.Match[str], datetime], Event]


@dataclass(frozen=True)
class LinePattern:
    """One wording of one restart message.

    ``needle`` is a literal every matching message contains (a cheap pre-filter); ``loggers``
    are the last components of the logger names (``%c``) that print it, checked when the line
    has one; ``since``/``until`` bound the releases that print it (``until`` exclusive).
    """

    name: str
    regex: re.Pattern[str]
    needle: str
    loggers: tuple[str, ...]
    since: str
    until: str | None
    source: str
    build: _Builder

    def applies_to(self, version: KafkaVersion) -> bool:
        if version < KafkaVersion.parse(self.since):
            return False
        return self.until is None or version < KafkaVersion.parse(self.until)


# Optional "logIdent" prefixes such as "[Log partition=t-0, dir=/data] " (1.0.2+),
# "[Group Metadata Manager on Broker 0]: " (0.9) or "[KafkaServer id=0] " (2.x).
_IDENT = r"(?:\[[^\]]*\][:,]? )?"
_LOG_IDENT = r"\[(?:Log|LogLoader|UnifiedLog|LocalLog) partition=(?P<tp>[^,\]]+), dir=[^\]]*\] "
_OLD_TP = r"\[" + OFFSETS_TOPIC + r",(?P<p>\d+)\]"  # TopicAndPartition.toString, 0.9-0.10
_NEW_TP = OFFSETS_TOPIC + r"-(?P<p>\d+)"  # TopicPartition.toString, 0.11+
_LOG_TO_STRING = r"Log\((?P<fields>[^()]*)\)"  # Log.toString / UnifiedLog.toString, 2.6+


def _opt_int(match: re.Match[str], group: str) -> int | None:
    value = match.groupdict().get(group)
    return None if value is None else int(value)


def _dir_name(path: str) -> str:
    """``/data/kafka-logs/t-0/00000000000000000000.log`` -> ``t-0`` (the partition dir)."""
    parts = [p for p in re.split(r"[/\\]", path.strip()) if p]
    return parts[-2] if len(parts) >= 2 else path


def _base_name(path: str) -> str:
    parts = [p for p in re.split(r"[/\\]", path.strip()) if p]
    return parts[-1] if parts else path


def _partition_of_log(fields: str) -> str:
    """``dir=/data/t-0, topic=t, partition=0, ...`` (Log.toString) -> ``t-0``."""
    match = re.search(r"(?:^|, )dir=(?P<dir>[^,]*)", fields)
    if match is not None and match["dir"]:
        return _base_name(match["dir"])
    topic = re.search(r"(?:^|, )topic=(?P<v>[^,]*)", fields)
    partition = re.search(r"(?:^|, )partition=(?P<v>\d+)", fields)
    if topic is not None and partition is not None:
        return f"{topic['v']}-{partition['v']}"
    return fields


def _starting(m: re.Match[str], at: datetime) -> Event:
    return BrokerStarting(at)


def _started(m: re.Match[str], at: datetime) -> Event:
    return BrokerStarted(at)


def _shutting_down(m: re.Match[str], at: datetime) -> Event:
    return BrokerShuttingDown(at)


def _version(m: re.Match[str], at: datetime) -> Event:
    return KafkaVersionSeen(at, m["v"])


def _loading(m: re.Match[str], at: datetime) -> Event:
    return LogsLoadingStarted(at, m.groupdict().get("dirs"))


def _complete(m: re.Match[str], at: datetime) -> Event:
    return LogsLoadingComplete(at, _opt_int(m, "ms"), _opt_int(m, "logs"))


def _dir_unclean(m: re.Match[str], at: datetime) -> Event:
    return LogDirAnnounced(at, m["dir"], int(m["n"]), clean_shutdown=False)


def _dir_clean(m: re.Match[str], at: datetime) -> Event:
    return LogDirAnnounced(at, m["dir"], int(m["n"]), clean_shutdown=True)


def _dir_unclean_all(m: re.Match[str], at: datetime) -> Event:
    return LogDirAnnounced(at, m["dir"], None, clean_shutdown=False)


def _dir_clean_all(m: re.Match[str], at: datetime) -> Event:
    return LogDirAnnounced(at, m["dir"], None, clean_shutdown=True)


def _dir_empty(m: re.Match[str], at: datetime) -> Event:
    return LogDirAnnounced(at, m["dir"], 0, clean_shutdown=None)


def _loaded_named(m: re.Match[str], at: datetime) -> Event:
    return LogLoaded(at, m["tp"], load_ms=_opt_int(m, "ms"), segments=_opt_int(m, "segs"))


def _loaded_by_manager(m: re.Match[str], at: datetime) -> Event:
    return LogLoaded(
        at,
        _partition_of_log(m["fields"]),
        load_ms=int(m["ms"]),
        segments=int(m["segs"]),
        done_in_dir=int(m["k"]),
        total_in_dir=int(m["n"]),
        log_dir=m["logdir"],
    )


def _load_failed(m: re.Match[str], at: datetime) -> Event:
    return LogLoaded(
        at,
        _base_name(m["dir"]),
        load_ms=int(m["ms"]),
        done_in_dir=int(m["k"]),
        total_in_dir=int(m["n"]),
        log_dir=m["logdir"],
        failed=True,
    )


def _recovering(m: re.Match[str], at: datetime) -> Event:
    return SegmentRecovering(at, m["tp"], int(m["base"]), _opt_int(m, "k"), _opt_int(m, "n"))


def _index_corrupt(m: re.Match[str], at: datetime) -> Event:
    return IndexRebuilt(
        at,
        _dir_name(m["file"]),
        m["file"],
        IndexRebuildReason.CORRUPT,
        m.groupdict().get("detail"),
    )


def _index_missing(m: re.Match[str], at: datetime) -> Event:
    return IndexRebuilt(at, _dir_name(m["file"]), m["file"], IndexRebuildReason.MISSING)


def _coordinator_started(m: re.Match[str], at: datetime) -> Event:
    return CoordinatorLoadStarted(at, int(m["p"]), scheduled=False)


def _coordinator_scheduled(m: re.Match[str], at: datetime) -> Event:
    return CoordinatorLoadStarted(at, int(m["p"]), scheduled=True, epoch=_opt_int(m, "epoch"))


def _coordinator_finished(m: re.Match[str], at: datetime) -> Event:
    load_ms = _opt_int(m, "ms")
    start, end = _opt_int(m, "start"), _opt_int(m, "end")
    if load_ms is None and start is not None and end is not None:
        load_ms = end - start
    return CoordinatorLoadFinished(
        at,
        int(m["p"]),
        load_ms,
        scheduler_ms=_opt_int(m, "sched"),
        epoch=_opt_int(m, "epoch"),
        records=_opt_int(m, "records"),
        bytes=_opt_int(m, "bytes"),
    )


def _coordinator_failed(m: re.Match[str], at: datetime) -> Event:
    return CoordinatorLoadFailed(at, int(m["p"]))


_KAFKA_SERVER = "core/src/main/scala/kafka/server/KafkaServer.scala"
_BROKER_SERVER = "core/src/main/scala/kafka/server/BrokerServer.scala"
_LOG_MANAGER = "core/src/main/scala/kafka/log/LogManager.scala"
_LOG = "core/src/main/scala/kafka/log/Log.scala"
_LOG_LOADER = "core/src/main/scala/kafka/log/LogLoader.scala (3.0+; Log.scala before)"
_GMM_OLD = "core/src/main/scala/kafka/coordinator/GroupMetadataManager.scala"
_GMM = "core/src/main/scala/kafka/coordinator/group/GroupMetadataManager.scala"
_RUNTIME = (
    "group-coordinator/src/main/java/org/apache/kafka/coordinator/group/runtime/"
    "CoordinatorRuntime.java"
)

_GMM_LOGGERS = ("GroupMetadataManager",)
_LOG_LOGGERS = ("Log", "LogLoader", "UnifiedLog", "LocalLog")


def _row(
    name: str,
    regex: str,
    needle: str,
    loggers: tuple[str, ...],
    since: str,
    until: str | None,
    source: str,
    build: _Builder,
) -> LinePattern:
    return LinePattern(name, re.compile(regex), needle, loggers, since, until, source, build)


#: Every wording the restart progress is read from, oldest first within each message.
PATTERNS: tuple[LinePattern, ...] = (
    # -- the startup boundary
    _row("starting", r"^starting$", "starting", ("KafkaServer",), "0.8.1", None,
         _KAFKA_SERVER + ' startup(): info("starting")', _starting),
    _row("starting-kraft", r"^" + _IDENT + r"Starting broker$", "Starting broker",
         ("BrokerServer",), "2.8.0", None, _BROKER_SERVER + ' startup(): info("Starting broker")',
         _starting),
    _row("started", r"^" + _IDENT + r"started$", "started", ("KafkaServer",), "0.8.1", None,
         _KAFKA_SERVER + ' startup(): info("started")', _started),
    _row("started-kraft", r"^Kafka Server started$", "Kafka Server started",
         ("KafkaRaftServer",), "2.8.0", None,
         "core/src/main/scala/kafka/server/KafkaRaftServer.scala (KafkaBroker.STARTED_MESSAGE)",
         _started),
    _row("shutting-down", r"^" + _IDENT + r"shutting down$", "shutting down",
         ("KafkaServer", "BrokerServer"), "0.8.1", None,
         _KAFKA_SERVER + ' shutdown(): info("shutting down"); also ' + _BROKER_SERVER,
         _shutting_down),
    _row("kafka-version", r"^Kafka version ?: ?(?P<v>\S+)$", "Kafka version", ("AppInfoParser",),
         "0.9.0.0", None,
         "clients/src/main/java/org/apache/kafka/common/utils/AppInfoParser.java", _version),
    # -- LogManager.loadLogs
    _row("loading-logs", r"^Loading logs\.$", "Loading logs", ("LogManager",), "0.8.2.0",
         "2.6.0", _LOG_MANAGER + ' loadLogs(): info("Loading logs.")', _loading),
    _row("loading-logs-dirs", r"^Loading logs from log dirs (?P<dirs>.*)$", "Loading logs",
         ("LogManager",), "2.6.0", None,
         _LOG_MANAGER + ' loadLogs(): info(s"Loading logs from log dirs $liveLogDirs")', _loading),
    # 2.8.0 (KAFKA-10471) deletes the clean-shutdown marker as loading starts: from then on only
    # these lines say whether a dir recovers
    _row("dir-unclean-all",
         r"^Attempting recovery for all logs in (?P<dir>.+) since no clean shutdown file was "
         r"found$",
         "since no clean shutdown file", ("LogManager",), "2.8.0", "3.5.0",
         _LOG_MANAGER + " loadLogs()", _dir_unclean_all),
    _row("dir-clean-all",
         r"^Skipping recovery for all logs in (?P<dir>.+) since clean shutdown file was found$",
         "Skipping recovery for all logs", ("LogManager",), "2.8.0", "3.5.0",
         _LOG_MANAGER + " loadLogs()", _dir_clean_all),
    _row("dir-unclean",
         r"^Recovering (?P<n>\d+) logs from (?P<dir>.+) since no clean shutdown file was found$",
         "since no clean shutdown file", ("LogManager",), "3.5.0", None,
         _LOG_MANAGER + " loadLogs()", _dir_unclean),
    _row("dir-clean",
         r"^Skipping recovery of (?P<n>\d+) logs from (?P<dir>.+) since clean shutdown file was "
         r"found$", "Skipping recovery of", ("LogManager",), "3.5.0", None,
         _LOG_MANAGER + " loadLogs()", _dir_clean),
    _row("dir-empty", r"^No logs found to be loaded in (?P<dir>.+)$", "No logs found to be loaded",
         ("LogManager",), "3.5.0", None, _LOG_MANAGER + " loadLogs()", _dir_empty),
    _row("loaded-log-leo", r"^Completed load of log (?P<tp>\S+) with log end offset -?\d+$",
         "Completed load of log", ("Log",), "0.8.0", "0.11.0.0",
         _LOG + ' (constructor): info("Completed load of log %s with log end offset %d")',
         _loaded_named),
    _row("loaded-log-segments",
         r"^Completed load of log (?P<tp>\S+) with (?P<segs>\d+) log segments, log start offset "
         r"-?\d+ and log end offset -?\d+ in (?P<ms>\d+) ms$",
         "Completed load of log", ("Log",), "0.11.0.0", "1.0.2", _LOG + " (constructor)",
         _loaded_named),
    _row("loaded-log-ident",
         r"^" + _LOG_IDENT + r"Completed load of log with (?P<segs>\d+) segments, log start "
         r"offset -?\d+ and log end offset -?\d+ in (?P<ms>\d+) ms$",
         "Completed load of log", _LOG_LOGGERS, "1.0.2", "2.6.0", _LOG + " (constructor)",
         _loaded_named),
    _row("loaded-by-manager",
         r"^Completed load of " + _LOG_TO_STRING + r" with (?P<segs>\d+) segments in (?P<ms>\d+)ms "
         r"\((?P<k>\d+)/(?P<n>\d+) loaded in (?P<logdir>.+)\)$",
         "Completed load of Log(", ("LogManager",), "2.6.0", "3.3.0",
         _LOG_MANAGER + " loadLogs()", _loaded_by_manager),
    _row("loaded-by-manager-completed",
         r"^Completed load of " + _LOG_TO_STRING + r" with (?P<segs>\d+) segments in (?P<ms>\d+)ms "
         r"\((?P<k>\d+)/(?P<n>\d+) completed in (?P<logdir>.+)\)$",
         "Completed load of Log(", ("LogManager",), "3.3.0", "3.6.0",
         _LOG_MANAGER + " loadLogs()", _loaded_by_manager),
    _row("loaded-by-manager-offsets",
         r"^Completed load of " + _LOG_TO_STRING + r" with (?P<segs>\d+) segments, "
         r"local-log-start-offset -?\d+ and log-end-offset -?\d+ in (?P<ms>\d+)ms "
         r"\((?P<k>\d+)/(?P<n>\d+) completed in (?P<logdir>.+)\)$",
         "Completed load of Log(", ("LogManager",), "3.6.0", None,
         _LOG_MANAGER + " loadLogs()", _loaded_by_manager),
    _row("load-error",
         r"^Error while loading logs in (?P<dir>.+?) in (?P<ms>\d+)ms \((?P<k>\d+)/(?P<n>\d+) "
         r"completed in (?P<logdir>.+)\)$",
         "Error while loading logs in", ("LogManager",), "3.3.0", None,
         _LOG_MANAGER + " loadLogs()", _load_failed),
    _row("logs-complete", r"^Logs loading complete\.$", "Logs loading complete", ("LogManager",),
         "0.8.2.0", "0.10.1.0", _LOG_MANAGER + ' loadLogs(): info("Logs loading complete.")',
         _complete),
    _row("logs-complete-ms", r"^Logs loading complete in (?P<ms>\d+) ms\.$",
         "Logs loading complete", ("LogManager",), "0.10.1.0", "2.6.0",
         _LOG_MANAGER + ' loadLogs(): info(s"Logs loading complete in ... ms.")', _complete),
    _row("logs-loaded", r"^Loaded (?P<logs>\d+) logs in (?P<ms>\d+)ms\.$", "Loaded ",
         ("LogManager",), "2.6.0", "3.5.0",
         _LOG_MANAGER + ' loadLogs(): info(s"Loaded $numTotalLogs logs in ...ms.")', _complete),
    _row("logs-loaded-unclean",
         r"^Loaded (?P<logs>\d+) logs in (?P<ms>\d+)ms(?: \(unclean log dirs = .*\))?$", "Loaded ",
         ("LogManager",), "3.5.0", None,
         _LOG_MANAGER + ' loadLogs(): info(s"Loaded $numTotalLogs logs in ${elapsedMs}ms...")',
         _complete),
    # -- Log.loadSegments / recoverLog
    _row("recovering", r"^Recovering unflushed segment (?P<base>\d+) in log (?P<tp>\S+)\.$",
         "Recovering unflushed segment", ("Log",), "0.8.1", "1.0.2",
         _LOG + ' recoverLog(): info("Recovering unflushed segment %d in log %s.")', _recovering),
    _row("recovering-ident", r"^" + _LOG_IDENT + r"Recovering unflushed segment (?P<base>\d+)$",
         "Recovering unflushed segment", _LOG_LOGGERS, "1.0.2", "3.3.0",
         _LOG_LOADER + ' recoverLog(): info(s"Recovering unflushed segment ${segment.baseOffset}")',
         _recovering),
    _row("recovering-counted",
         r"^" + _LOG_IDENT + r"Recovering unflushed segment (?P<base>\d+)\. (?P<k>\d+)/(?P<n>\d+) "
         r"recovered for \S+\.$",
         "Recovering unflushed segment", _LOG_LOGGERS, "3.3.0", None,
         _LOG_LOADER + " recoverLog()", _recovering),
    _row("index-corrupt-typo",
         r"^Found an corrupted index file, (?P<file>.+), deleting and rebuilding index\.\.\.$",
         "corrupted index file", ("Log",), "0.9.0.0", "0.9.0.1", _LOG + " loadSegments()",
         _index_corrupt),
    _row("index-corrupt",
         r"^Found a corrupted index file, (?P<file>.+), deleting and rebuilding index\.\.\.$",
         "corrupted index file", ("Log",), "0.9.0.1", "0.10.1.0",
         _LOG + ' loadSegments(): warn("Found a corrupted index file, %s, deleting and rebuilding '
         'index...")', _index_corrupt),
    _row("index-corrupt-due",
         r"^Found a corrupted index file due to (?P<detail>.*)\}\. deleting .+?, (?P<file>.+) and "
         r"rebuilding index\.\.\.$",
         "corrupted index file", ("Log",), "0.10.1.0", "1.1.0", _LOG + " loadSegments()",
         _index_corrupt),
    _row("index-corrupt-log-file",
         r"^" + _IDENT + r"Found a corrupted index file corresponding to log file (?P<file>.+) due "
         r"to (?P<detail>.*)\}, recovering segment and rebuilding index files\.\.\.$",
         "corrupted index file", _LOG_LOGGERS, "1.1.0", None,
         _LOG_LOADER + " loadSegmentFiles(): warn(s\"Found a corrupted index file corresponding "
         "to log file ...\")", _index_corrupt),
    _row("index-missing",
         r"^Could not find index file corresponding to log file (?P<file>.+), rebuilding "
         r"index\.\.\.$",
         "Could not find index file", ("Log",), "0.8.1", "0.11.0.0",
         _LOG + ' loadSegments(): error("Could not find index file corresponding to log file %s, '
         'rebuilding index...")', _index_missing),
    _row("index-missing-offset",
         r"^Could not find offset index file corresponding to log file (?P<file>.+), rebuilding "
         r"index\.\.\.$",
         "Could not find offset index file", ("Log",), "0.11.0.0", "1.1.0",
         _LOG + " loadSegments()", _index_missing),
    _row("index-missing-recovering",
         r"^" + _IDENT + r"Could not find offset index file corresponding to log file "
         r"(?P<file>.+), recovering segment and rebuilding index files\.\.\.$",
         "Could not find offset index file", _LOG_LOGGERS, "1.1.0", None,
         _LOG_LOADER + " loadSegmentFiles()", _index_missing),
    # -- group coordinator loading of __consumer_offsets partitions
    _row("coordinator-loading",
         r"^" + _IDENT + r"Loading offsets and group metadata from " + _OLD_TP + r"$",
         "Loading offsets and group metadata", _GMM_LOGGERS, "0.9.0.0", "0.11.0.0",
         _GMM_OLD + ' loadGroupsForPartition(): info("Loading offsets and group metadata from " + '
         "topicPartition)", _coordinator_started),
    _row("coordinator-scheduling",
         r"^" + _IDENT + r"Scheduling loading of offsets and group metadata from " + _NEW_TP + r"$",
         "Scheduling loading of offsets", _GMM_LOGGERS, "0.11.0.0", "2.8.1",
         _GMM + ' scheduleLoadGroupAndOffsets(): info(s"Scheduling loading of offsets and group '
         'metadata from $topicPartition")', _coordinator_scheduled),
    _row("coordinator-scheduling-epoch",
         r"^" + _IDENT + r"Scheduling loading of offsets and group metadata from " + _NEW_TP
         + r" for epoch (?P<epoch>\d+)$",
         "Scheduling loading of offsets", _GMM_LOGGERS, "2.8.1", None,
         _GMM + " scheduleLoadGroupAndOffsets()", _coordinator_scheduled),
    _row("runtime-scheduling",
         r"^" + _IDENT + r"Scheduling loading of metadata from " + _NEW_TP
         + r" with epoch (?P<epoch>\d+)$",
         "Scheduling loading of metadata", ("CoordinatorRuntime",), "3.6.0", None,
         _RUNTIME + " scheduleLoadOperation()", _coordinator_scheduled),
    _row("coordinator-finished-old",
         r"^" + _IDENT + r"Finished loading offsets from " + _OLD_TP
         + r" in (?P<ms>\d+) milliseconds\.$",
         "Finished loading offsets", _GMM_LOGGERS, "0.8.2.0", "0.11.0.0",
         _GMM_OLD + ' loadGroupsAndOffsets(): info("Finished loading offsets from %s in %d '
         'milliseconds.")', _coordinator_finished),
    _row("coordinator-finished",
         r"^" + _IDENT + r"Finished loading offsets and group metadata from " + _NEW_TP
         + r" in (?P<ms>\d+) milliseconds\.$",
         "Finished loading offsets", _GMM_LOGGERS, "0.11.0.0", "2.6.0",
         _GMM + ' loadGroupsAndOffsets(): info(s"Finished loading offsets and group metadata from '
         '$topicPartition in ... milliseconds.")', _coordinator_finished),
    _row("coordinator-finished-scheduler",
         r"^" + _IDENT + r"Finished loading offsets and group metadata from " + _NEW_TP
         + r" in (?P<ms>\d+) milliseconds, of which (?P<sched>\d+) milliseconds was spent in the "
         r"scheduler\.$",
         "Finished loading offsets", _GMM_LOGGERS, "2.6.0", "2.8.1",
         _GMM + " loadGroupsAndOffsets()", _coordinator_finished),
    _row("coordinator-finished-epoch",
         r"^" + _IDENT + r"Finished loading offsets and group metadata from " + _NEW_TP
         + r" in (?P<ms>\d+) milliseconds for epoch (?P<epoch>\d+), of which (?P<sched>\d+) "
         r"milliseconds was spent in the scheduler\.$",
         "Finished loading offsets", _GMM_LOGGERS, "2.8.1", None,
         _GMM + " loadGroupsAndOffsets()", _coordinator_finished),
    _row("runtime-finished-bare",
         r"^" + _IDENT + r"Finished loading of metadata from " + _NEW_TP
         + r" with epoch (?P<epoch>\d+)\.$",
         "Finished loading of metadata", ("CoordinatorRuntime",), "3.6.0", "3.7.0",
         _RUNTIME + " (CoordinatorContext load)", _coordinator_finished),
    _row("runtime-finished-summary",
         r"^" + _IDENT + r"Finished loading of metadata from " + _NEW_TP
         + r" with epoch (?P<epoch>\d+) and LoadSummary=LoadSummary\(startTimeMs=(?P<start>\d+), "
         r"endTimeMs=(?P<end>\d+), numRecords=(?P<records>\d+), numBytes=(?P<bytes>\d+)\)\.$",
         "Finished loading of metadata", ("CoordinatorRuntime",), "3.7.0", "3.8.0",
         _RUNTIME + " (CoordinatorContext load)", _coordinator_finished),
    _row("runtime-finished",
         r"^" + _IDENT + r"Finished loading of metadata from " + _NEW_TP
         + r" with epoch (?P<epoch>\d+) in (?P<ms>\d+)ms where (?P<sched>\d+)ms was spent in the "
         r"scheduler\. Loaded (?P<records>\d+) records which total to (?P<bytes>\d+) bytes\.$",
         "Finished loading of metadata", ("CoordinatorRuntime",), "3.8.0", None,
         _RUNTIME + " (CoordinatorContext.load)", _coordinator_finished),
    _row("coordinator-error-old", r"^" + _IDENT + r"Error in loading offsets from " + _OLD_TP + "$",
         "Error in loading offsets", _GMM_LOGGERS, "0.9.0.0", "0.11.0.0",
         _GMM_OLD + " loadGroupsAndOffsets()", _coordinator_failed),
    _row("coordinator-error", r"^" + _IDENT + r"Error loading offsets from " + _NEW_TP + "$",
         "Error loading offsets", _GMM_LOGGERS, "0.11.0.0", None,
         _GMM + " loadGroupsAndOffsets()", _coordinator_failed),
    _row("runtime-error",
         r"^" + _IDENT + r"Failed to load metadata from " + _NEW_TP + r" with epoch \d+ due to .*$",
         "Failed to load metadata", ("CoordinatorRuntime",), "3.6.0", None,
         _RUNTIME + " (CoordinatorContext load)", _coordinator_failed),
)  # fmt: skip


def patterns_for(version: KafkaVersion | None) -> tuple[LinePattern, ...]:
    """The rows a broker of ``version`` prints; every row when the version is not known."""
    if version is None:
        return PATTERNS
    return tuple(p for p in PATTERNS if p.applies_to(version))


def patterns_for_range(since: KafkaVersion, until: KafkaVersion | None) -> tuple[LinePattern, ...]:
    """The rows some broker of ``[since, until)`` prints (``until`` exclusive, ``None`` for no
    upper bound): the wordings to try when the version is known only as a range."""
    return tuple(
        p
        for p in PATTERNS
        if (until is None or KafkaVersion.parse(p.since) < until)
        and (p.until is None or since < KafkaVersion.parse(p.until))
    )


_ANY_NEEDLE = re.compile("|".join(sorted({re.escape(p.needle) for p in PATTERNS})))


def might_be_event(text: str) -> bool:
    """False for the (many) lines no pattern can match: a cheap test before parsing."""
    return _ANY_NEEDLE.search(text) is not None


def looks_timestamped(text: str) -> bool:
    """A cheap test for a ``[yyyy-MM-dd HH:mm:ss,SSS]`` start (:func:`parse_header` decides)."""
    return len(text) > 25 and text[0] == "[" and text[5] == "-" and text[24] == "]"


def parse_line(text: str, patterns: Sequence[LinePattern] = PATTERNS) -> Event | None:
    """The restart event ``text`` (one line, with or without its newline) reports, if any."""
    if not might_be_event(text):
        return None
    line = parse_header(text)
    if line is None:
        return None
    return event_of(line, patterns)


def event_of(line: LogLine, patterns: Sequence[LinePattern] = PATTERNS) -> Event | None:
    message = line.message
    short_logger = None if line.logger is None else line.logger.rsplit(".", 1)[-1]
    for pattern in patterns:
        if pattern.needle not in message:
            continue
        if short_logger is not None and short_logger not in pattern.loggers:
            continue
        match = pattern.regex.match(message)
        if match is not None:
            return pattern.build(match, line.timestamp)
    return None
