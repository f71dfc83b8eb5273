"""The log cleaner's wordings, per Kafka version, and one record -> one :mod:`.events` event.

Each row of :data:`WORDINGS` is one message: its regular expression (over the record's first
line's message), the first release that prints it, the first that no longer does (``None``:
still in the newest source read), and the source. Releases were read at the tags of
``github:apache/kafka`` (``git show <tag>:core/src/main/scala/kafka/log/LogCleaner.scala``,
``LogCleanerManager.scala``, ``core/src/main/scala/kafka/utils/ShutdownableThread.scala``; 3.5+
``server-common/src/main/java/org/apache/kafka/server/util/ShutdownableThread.java``) and, for
4.x, the storage module's Java classes (``storage/src/main/java/org/apache/kafka/storage/
internals/log/LogCleaner.java`` at apache/kafka 11514a59, ``Cleaner.java``, read from the stored
public copy) and ``config/log4j2.yaml`` (0282c087). Wordings of different releases never
match each other's lines, so every row is tried.

Where the lines land: ``config/log4j.properties`` (0.9.0.1-3.9) sends the logger
``kafka.log.LogCleaner`` to ``log-cleaner.log`` with ``additivity=false``. The cleaner classes
log under that name (``override def loggerName = classOf[LogCleaner].getName``), but from 3.5
the thread's own "Starting" / "Stopped" / "Error due to" come from the Java
``ShutdownableThread``, whose logger is its class, ``kafka.log.LogCleaner$CleanerThread``: not
a child of ``kafka.log.LogCleaner`` in log4j's dotted hierarchy, so those three lines go to
``server.log`` in 3.5-3.9. 4.x's ``log4j2.yaml`` routes
``org.apache.kafka.storage.internals.log.LogCleaner``, ``...LogCleaner$CleanerThread`` and
``...Cleaner`` to ``log-cleaner.log``. Records of other loggers are ignored.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass

from offsets_auditor.broker_logs import events as ev
from offsets_auditor.broker_logs.records import Record

_Builder = Callable[[re.Match[str], Record], "ev.CleanerEvent"]

_SCALA_CLEANER = "core/src/main/scala/kafka/log/LogCleaner.scala"
_SCALA_MANAGER = "core/src/main/scala/kafka/log/LogCleanerManager.scala"
_SCALA_THREAD = "core/src/main/scala/kafka/utils/ShutdownableThread.scala"
_JAVA_THREAD = "server-common/src/main/java/org/apache/kafka/server/util/ShutdownableThread.java"
_JAVA_CLEANER = "storage/src/main/java/org/apache/kafka/storage/internals/log/Cleaner.java"
_JAVA_LOG_CLEANER = "storage/src/main/java/org/apache/kafka/storage/internals/log/LogCleaner.java"

#: The loggers whose records are the cleaner's (last name, see :attr:`Record.short_logger`).
CLEANER_LOGGERS = frozenset(
    {"LogCleaner", "CleanerThread", "Cleaner", "LogCleanerManager", "LogDirFailureChannel"}
)

# "[kafka-log-cleaner-thread-0], " (0.9.x logIdent) or "[kafka-log-cleaner-thread-0]: " (1.0+)
_THREAD = r"\[kafka-log-cleaner-thread-(?P<thread>\d+)\](?:,|:)? ?"
_CLEANER = r"Cleaner (?P<cleaner>\d+): "
# 0.9-1.0's TopicAndPartition prints "[topic,N]"; TopicPartition "topic-N"
_TP = r"(?P<tp>\[[^\],]+,\d+\]|\S+)"


@dataclass(frozen=True)
class Wording:
    name: str
    regex: re.Pattern[str]
    since: str
    until: str | None
    source: str
    build: _Builder


def partition_name(text: str) -> str:
    """``[__consumer_offsets,3]`` (TopicAndPartition.toString) -> ``__consumer_offsets-3``."""
    match = re.fullmatch(r"\[(?P<topic>[^\],]+),(?P<n>\d+)\]", text.strip())
    return f"{match['topic']}-{match['n']}" if match is not None else text.strip()


def failure_of(lines: tuple[str, ...]) -> ev.Failure | None:
    """The exception a record's continuation lines start with, if any."""
    if not lines:
        return None
    match = re.match(r"^(?P<cls>[A-Za-z_$][\w$]*(?:\.[\w$]+)+)(?:: (?P<msg>.*))?$", lines[0])
    if match is None:
        return None
    message = match["msg"]
    rest = 1
    while rest < len(lines) and not re.match(
        r"^\s+at |^\s*\.\.\. \d+ more|^Caused by: ", lines[rest]
    ):
        message = (message or "") + "\n" + lines[rest]
        rest += 1
    return ev.Failure(match["cls"], message, tuple(lines[rest : rest + 20]))


def _int(text: str) -> int:
    return int(text.replace(",", ""))


def _float(text: str) -> float:
    """Java's ``%,.1f``: grouping commas; ``NaN``, ``Infinity`` for 0/0 and x/0."""
    cleaned = text.replace(",", "")
    if cleaned in ("NaN", "Infinity", "-Infinity"):
        return float(cleaned.lower().replace("infinity", "inf"))
    return float(cleaned)


# --- builders --------------------------------------------------------------------------------


def _starting_cleaner(m: re.Match[str], r: Record) -> ev.CleanerEvent:
    return ev.CleanerStarting(r.at, r.place)


def _stopping_cleaner(m: re.Match[str], r: Record) -> ev.CleanerEvent:
    return ev.CleanerShuttingDown(r.at, r.place)


def _thread_starting(m: re.Match[str], r: Record) -> ev.CleanerEvent:
    return ev.ThreadStarting(r.at, r.place, int(m["thread"]))


def _thread_shutting_down(m: re.Match[str], r: Record) -> ev.CleanerEvent:
    return ev.ThreadShuttingDown(r.at, r.place, int(m["thread"]))


def _thread_stopped(m: re.Match[str], r: Record) -> ev.CleanerEvent:
    return ev.ThreadStopped(r.at, r.place, int(m["thread"]))


def _thread_died(m: re.Match[str], r: Record) -> ev.CleanerEvent:
    failure = failure_of(r.continuation) or ev.Failure("(no exception printed)", None)
    return ev.ThreadDied(r.at, r.place, int(m["thread"]), failure)


def _begun(m: re.Match[str], r: Record) -> ev.CleanerEvent:
    return ev.CleaningBegun(r.at, r.place, int(m["cleaner"]), partition_name(m["tp"]))


def _map_range(m: re.Match[str], r: Record) -> ev.CleanerEvent:
    return ev.OffsetMapRange(
        r.at,
        r.place,
        int(m["cleaner"]),
        partition_name(m["tp"]),
        int(m["segments"]),
        int(m["start"]),
        int(m["end"]),
    )


def _map_complete(m: re.Match[str], r: Record) -> ev.CleanerEvent:
    return ev.OffsetMapComplete(r.at, r.place, int(m["cleaner"]), partition_name(m["tp"]))


def _grown(m: re.Match[str], r: Record) -> ev.CleanerEvent:
    return ev.BuffersGrown(r.at, r.place, int(m["cleaner"]), int(m["from"]), int(m["to"]))


def _overflow(m: re.Match[str], r: Record) -> ev.CleanerEvent:
    return ev.SegmentOverflow(r.at, r.place, int(m["cleaner"]), m["msg"])


def _delayed(m: re.Match[str], r: Record) -> ev.CleanerEvent:
    return ev.DelayedPartitions(r.at, r.place, int(m["c"]), int(m["d"]), int(m["max"]))


def _invalid(m: re.Match[str], r: Record) -> ev.CleanerEvent:
    return ev.InvalidMessages(r.at, r.place, int(m["n"]))


def _uncleanable(m: re.Match[str], r: Record) -> ev.CleanerEvent:
    thread = m.groupdict().get("thread")
    return ev.MarkedUncleanable(
        r.at,
        r.place,
        int(thread) if thread is not None else None,
        partition_name(m["tp"]),
        m["log"],
        failure_of(r.continuation),
    )


def _aborted(m: re.Match[str], r: Record) -> ev.CleanerEvent:
    return ev.CleaningAborted(
        r.at, r.place, partition_name(m["tp"]), paused=m["paused"] is not None
    )


def _resumed(m: re.Match[str], r: Record) -> ev.CleanerEvent:
    return ev.CleaningResumed(r.at, r.place, partition_name(m["tp"]))


def _reset(m: re.Match[str], r: Record) -> ev.CleanerEvent:
    tp = m.groupdict().get("tp")
    return ev.FirstDirtyReset(
        r.at, r.place, partition_name(tp) if tp else None, int(m["start"]), int(m["cp"])
    )


def _dir_failed(m: re.Match[str], r: Record) -> ev.CleanerEvent:
    return ev.LogDirFailed(r.at, r.place, partition_name(m["tp"]), m["dir"])


def _w(
    name: str, regex: str, since: str, until: str | None, source: str, build: _Builder
) -> Wording:
    return Wording(name, re.compile(regex), since, until, source, build)


#: Every wording read, oldest first within a message.
WORDINGS: tuple[Wording, ...] = (
    _w("cleaner-starting", r"^Starting the log cleaner$", "0.8.1", None,
       _SCALA_CLEANER + ' startup(): info("Starting the log cleaner"); 4.x ' + _JAVA_LOG_CLEANER,
       _starting_cleaner),
    _w("cleaner-shutting-down", r"^Shutting down the log cleaner\.$", "0.8.1", None,
       _SCALA_CLEANER + ' shutdown(); 4.x ' + _JAVA_LOG_CLEANER + " shutdownCleaners()",
       _stopping_cleaner),
    _w("thread-starting", r"^" + _THREAD + r"Starting\s*$", "0.8.1", None,
       _SCALA_THREAD + ' run(): info("Starting ") (0.9.x, "], " prefix), info("Starting") (1.0+,'
       ' "]: "); 3.5+ ' + _JAVA_THREAD, _thread_starting),
    _w("thread-error", r"^" + _THREAD + r"Error due to\s*$", "0.8.1", None,
       _SCALA_THREAD + ' run(): error("Error due to ", e); 3.5+ ' + _JAVA_THREAD, _thread_died),
    _w("thread-stopped", r"^" + _THREAD + r"Stopped\s*$", "0.8.1", None,
       _SCALA_THREAD + ' run(): info("Stopped "); 3.5+ ' + _JAVA_THREAD, _thread_stopped),
    _w("thread-shutting-down", r"^" + _THREAD + r"Shutting down\s*$", "0.8.1", None,
       _SCALA_THREAD + ' initiateShutdown(): info("Shutting down")', _thread_shutting_down),
    _w("uncleanable",
       r"^(?:" + _THREAD + r")?Unexpected exception thrown when cleaning log (?P<log>.+)\. Marking"
       r" its partition \((?P<tp>[^()]+)\) as uncleanable$", "2.1.0", None,
       _SCALA_CLEANER + ' CleanerThread: warn(s"Unexpected exception thrown when cleaning log'
       ' $erroneousLog. Marking its partition (${erroneousLog.topicPartition}) as uncleanable", e)'
       " (2.1.0 line 343; 2.4.0 ${e.log}); 4.x " + _JAVA_LOG_CLEANER + " tryCleanFilthiestLog()",
       _uncleanable),
    _w("beginning", r"^" + _CLEANER + r"Beginning cleaning of log " + _TP + r"\.$", "0.8.1", "4.0",
       _SCALA_CLEANER + ' Cleaner.clean(): info("Beginning cleaning of log %s.")', _begun),
    _w("beginning-4", r"^" + _CLEANER + r"Beginning cleaning of log (?P<tp>\S+)$", "4.0", None,
       _JAVA_CLEANER + ' doClean(): logger.info("Beginning cleaning of log {}", log.name())',
       _begun),
    _w("map-range",
       r"^" + _CLEANER + r"Building offset map for log " + _TP + r" for (?P<segments>\d+)"
       r" segments in offset range \[(?P<start>-?\d+), (?P<end>-?\d+)\)\.$", "0.8.1", None,
       _SCALA_CLEANER + ' buildOffsetMap(): info("Building offset map for log %s for %d segments'
       ' in offset range [%d, %d).") (0.9.0.1 line 572, 2.3.0 line 879); 4.x ' + _JAVA_CLEANER,
       _map_range),
    _w("map-complete", r"^" + _CLEANER + r"Offset map for log " + _TP + r" complete\.$", "0.8.1",
       None, _SCALA_CLEANER + ' buildOffsetMap(): info("Offset map for log %s complete.")',
       _map_complete),
    _w("buffers-grown",
       r"^" + _CLEANER + r"Growing cleaner I/O buffers from (?P<from>\d+) ?bytes to (?P<to>\d+)"
       r" bytes\.$", "0.8.1", None,
       _SCALA_CLEANER + ' growBuffers(): "...from " + readBuffer.capacity + "bytes to ..." (no'
       " space before 2.3.0: 0.9.0.1 line 512; 2.3.0 line 791 has one)", _grown),
    _w("segment-overflow",
       r"^" + _CLEANER + r"Caught segment overflow error during cleaning: (?P<msg>.*)$", "2.0.0",
       None, _SCALA_CLEANER + " cleanSegments() (2.0.0 line 516)", _overflow),
    _w("delayed-partitions",
       r"^(?:" + _THREAD + r")?\s*Cleanable partitions: (?P<c>\d+), Delayed partitions:"
       r" (?P<d>\d+), max delay: (?P<max>-?\d+)$", "2.3.0", None,
       _SCALA_CLEANER + " recordStats() (2.3.0 line 399)", _delayed),
    _w("invalid-messages",
       r"^(?:" + _THREAD + r")?\s*Found (?P<n>\d+) invalid messages during compaction\.$", "0.8.1",
       None, _SCALA_CLEANER + ' recordStats(): warn("\\tFound %d invalid messages during'
       ' compaction.")', _invalid),
    _w("aborted", r"^The cleaning for partition " + _TP + r" is aborted(?P<paused> and paused)?$",
       "0.8.1", None, _SCALA_MANAGER + " abortCleaning()/abortAndPauseCleaning()", _aborted),
    _w("resumed", r"^Compaction for partition " + _TP + r" is resumed$", "0.8.1", "2.1.0",
       _SCALA_MANAGER + " resumeCleaning() (0.9.0.1 line 178; gone in 2.1.0)", _resumed),
    _w("first-dirty-reset",
       r"^Resetting first dirty offset (?:of " + _TP + r" )?to log start offset (?P<start>-?\d+)"
       r" since the checkpointed offset (?P<cp>-?\d+) is invalid\.$", "0.8.1", None,
       _SCALA_MANAGER + " grabFilthiestLog() (0.9.0.1 error, no partition) / cleanableOffsets()"
       " (1.1.0+ names the log)", _reset),
    _w("first-dirty-beyond-end",
       r"^The last checkpoint dirty offset for partition " + _TP + r" is (?P<cp>-?\d+), which is"
       r" larger than the log end offset -?\d+\. Resetting to the log start offset"
       r" (?P<start>-?\d+)\.$", "2.6.0", None, _SCALA_MANAGER + " cleanableOffsets() (2.6.0)",
       _reset),
    _w("log-dir-failed",
       r"^Failed to clean up log for " + _TP + r" in dir (?P<dir>.+) due to IOException$",
       "1.0.0", None, _SCALA_CLEANER + " cleanLog(): logDirFailureChannel.maybeAddOfflineLogDir",
       _dir_failed),
)  # fmt: skip

_BANNER_HEAD = re.compile(
    r"^\s*Log cleaner thread (?P<thread>\d+) cleaned log (?P<tp>\S+) \(dirty section ="
    r" \[(?P<a>-?\d+), (?P<b>-?\d+)\]\)\s*$"
)
_NUM = r"(-?[\d,]+\.?\d*|NaN|-?Infinity)"
_PROCESSED = re.compile(rf"^\s*{_NUM} MB of log processed in {_NUM} seconds \({_NUM} MB/sec\)\.$")
_INDEXED = re.compile(rf"^\s*Indexed {_NUM} MB in {_NUM} seconds \({_NUM} Mb/sec, {_NUM}% of total")
_UTILIZATION = re.compile(rf"^\s*Buffer utilization: {_NUM}%\s*$")
_CLEANED = re.compile(rf"^\s*Cleaned {_NUM} MB in {_NUM} seconds \({_NUM} Mb/sec, {_NUM}% of total")
_START = re.compile(rf"^\s*Start size: {_NUM} MB \({_NUM} messages\)\s*$")
_END = re.compile(rf"^\s*End size: {_NUM} MB \({_NUM} messages\)\s*$")


def _banner(record: Record) -> ev.CleaningStats | None:
    """``recordStats``' banner: the same lines from 0.9.0.1 (``LogCleaner.scala`` line 248) to
    4.x (``LogCleaner.java`` ``recordStats``)."""
    lines = record.continuation
    if not lines:
        return None
    head = _BANNER_HEAD.match(lines[0])
    if head is None:
        return None

    def find(pattern: re.Pattern[str]) -> re.Match[str] | None:
        for line in lines[1:]:
            found = pattern.match(line)
            if found is not None:
                return found
        return None

    processed = find(_PROCESSED)
    if processed is None:
        return None
    indexed, utilization, cleaned = find(_INDEXED), find(_UTILIZATION), find(_CLEANED)
    start, end = find(_START), find(_END)
    return ev.CleaningStats(
        at=record.at,
        place=record.place,
        thread=int(head["thread"]),
        partition=partition_name(head["tp"]),
        dirty_start=int(head["a"]),
        dirty_end=int(head["b"]),
        mb_read=_float(processed[1]),
        seconds=_float(processed[2]),
        mb_per_second=_float(processed[3]),
        indexed_mb=_float(indexed[1]) if indexed else None,
        index_seconds=_float(indexed[2]) if indexed else None,
        utilization=_float(utilization[1]) / 100 if utilization else None,
        cleaned_mb=_float(cleaned[1]) if cleaned else None,
        clean_seconds=_float(cleaned[2]) if cleaned else None,
        start_mb=_float(start[1]) if start else None,
        start_messages=_int(start[2]) if start else None,
        end_mb=_float(end[1]) if end else None,
        end_messages=_int(end[2]) if end else None,
    )


def is_cleaner_record(record: Record) -> bool:
    """A record of one of the cleaner's loggers (or with no ``%c`` at all)."""
    short = record.short_logger
    return short is None or short in CLEANER_LOGGERS


def event_of(record: Record) -> ev.CleanerEvent | None:
    """The cleaner event ``record`` reports, or ``None``."""
    if not is_cleaner_record(record):
        return None
    banner = _banner(record)
    if banner is not None:
        return banner
    message = record.message.strip()
    for wording in WORDINGS:
        match = wording.regex.match(message)
        if match is not None:
            return wording.build(match, record)
    return None


def events_of(records: Iterable[Record]) -> Iterator[ev.CleanerEvent]:
    for record in records:
        event = event_of(record)
        if event is not None:
            yield event
