"""One line -> one event: a numbered table of real and source-format lines, each with why.

Cases marked "real" are copied from the real broker logs under tests/fixtures; the others are
written in the format string of the Kafka source file the pattern table cites for that release.
"""

from __future__ import annotations

from datetime import datetime

import pytest

from offsets_auditor.restart.log_lines import (
    PATTERNS,
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
    parse_line,
    parse_timestamp,
    patterns_for,
)
from offsets_auditor.versions import KafkaVersion

AT = datetime(2026, 11, 21, 8, 23, 42, 583000)
TS = "[2026-11-21 08:23:42,583]"
OFFSETS_LOGGER_09 = "(kafka.coordinator.GroupMetadataManager)"
OFFSETS_LOGGER = "(kafka.coordinator.group.GroupMetadataManager)"
RUNTIME = "(org.apache.kafka.coordinator.group.runtime.CoordinatorRuntime)"
LOG_3 = (
    "Log(dir=/data/kafka-logs/t-0, topicId=AAAAAAAAAAAAAAAAAAAAAA, topic=t, partition=0, "
    "highWatermark=5, lastStableOffset=5, logStartOffset=0, logEndOffset=5)"
)

# (number, version, line, expected event, why)
CASES: list[tuple[int, str, str, Event, str]] = [
    (1, "0.9.0.1", f"{TS} INFO starting (kafka.server.KafkaServer)", BrokerStarting(AT),
     "real: KafkaServer.startup() prints 'starting' first; a startup begins here"),
    (2, "2.3.0", f"{TS} INFO starting (kafka.server.KafkaServer)", BrokerStarting(AT),
     "real: unchanged in 2.3"),
    (3, "3.9.0", f"{TS} INFO [BrokerServer id=1] Starting broker (kafka.server.BrokerServer)",
     BrokerStarting(AT), "KRaft brokers: BrokerServer.startup()"),
    (4, "0.9.0.1", f"{TS} INFO [Kafka Server 0], started (kafka.server.KafkaServer)",
     BrokerStarted(AT), "real: 0.9 logIdent '[Kafka Server 0], '"),
    (5, "2.3.0", f"{TS} INFO [KafkaServer id=0] started (kafka.server.KafkaServer)",
     BrokerStarted(AT), "real: 2.3 logIdent"),
    (6, "2.3.0", f"{TS} INFO [KafkaServer id=0] shutting down (kafka.server.KafkaServer)",
     BrokerShuttingDown(AT), "real: a controlled shutdown ends the startup"),
    (7, "2.3.0", f"{TS} INFO Kafka version: 2.3.0 (org.apache.kafka.common.utils.AppInfoParser)",
     KafkaVersionSeen(AT, "2.3.0"), "real: AppInfoParser"),
    (8, "0.9.0.1", f"{TS} INFO Loading logs. (kafka.log.LogManager)",
     LogsLoadingStarted(AT, None), "real"),
    (9, "3.9.0",
     f"{TS} INFO Loading logs from log dirs ArraySeq(/data/kafka-logs) (kafka.log.LogManager)",
     LogsLoadingStarted(AT, "ArraySeq(/data/kafka-logs)"), "2.6+ names the dirs"),
    (10, "0.9.0.1", f"{TS} INFO Logs loading complete. (kafka.log.LogManager)",
     LogsLoadingComplete(AT), "real: 0.9 prints no time"),
    (11, "2.3.0", f"{TS} INFO Logs loading complete in 6 ms. (kafka.log.LogManager)",
     LogsLoadingComplete(AT, 6), "real: 0.10.1+ prints the time taken"),
    (12, "3.9.0",
     f"{TS} INFO Loaded 7 logs in 1234ms (unclean log dirs = ArrayBuffer(/data/kafka-logs)) "
     "(kafka.log.LogManager)", LogsLoadingComplete(AT, 1234, 7), "3.5+: count, time, unclean"),
    (13, "3.0.0", f"{TS} INFO Loaded 7 logs in 15ms. (kafka.log.LogManager)",
     LogsLoadingComplete(AT, 15, 7), "2.6-3.4 wording"),
    (14, "3.9.0",
     f"{TS} INFO Recovering 7 logs from /data/kafka-logs since no clean shutdown file was found "
     "(kafka.log.LogManager)", LogDirAnnounced(AT, "/data/kafka-logs", 7, False),
     "3.5+ announces the total per log dir"),
    (15, "3.9.0",
     f"{TS} INFO Skipping recovery of 3 logs from /d since clean shutdown file was found "
     "(kafka.log.LogManager)", LogDirAnnounced(AT, "/d", 3, True), "clean dir"),
    (15, "2.8.0",
     f"{TS} INFO Skipping recovery for all logs in /d since clean shutdown file was found "
     "(kafka.log.LogManager)", LogDirAnnounced(AT, "/d", None, True),
     "2.8-3.4 wording (2.8.0 LogManager.loadLogs, KAFKA-10471)"),
    (15, "3.4.0",
     f"{TS} INFO Attempting recovery for all logs in /data/kafka-logs since no clean shutdown "
     "file was found (kafka.log.LogManager)", LogDirAnnounced(AT, "/data/kafka-logs", None, False),
     "2.8-3.4: no count"),
    (16, "0.9.0.1",
     f"{TS} INFO Completed load of log t1-0 with log end offset 0 (kafka.log.Log)",
     LogLoaded(AT, "t1-0"), "real: 0.9 Log constructor"),
    (17, "2.3.0",
     f"{TS} INFO [Log partition=__consumer_offsets-3, dir=/data/kafka-logs] Completed load of "
     "log with 1 segments, log start offset 0 and log end offset 0 in 6 ms (kafka.log.Log)",
     LogLoaded(AT, "__consumer_offsets-3", load_ms=6, segments=1),
     "real: the partition is in the logIdent"),
    (18, "3.9.0",
     f"{TS} INFO Completed load of {LOG_3} with 2 segments, local-log-start-offset 0 and "
     "log-end-offset 5 in 42ms (3/7 completed in /data/kafka-logs) (kafka.log.LogManager)",
     LogLoaded(AT, "t-0", 42, 2, 3, 7, "/data/kafka-logs"), "3.6+: the broker's own k/n"),
    (19, "2.6.0",
     f"{TS} INFO Completed load of {LOG_3} with 2 segments in 42ms (3/7 loaded in /data/k) "
     "(kafka.log.LogManager)", LogLoaded(AT, "t-0", 42, 2, 3, 7, "/data/k"), "2.6-3.2 wording"),
    (20, "3.9.0",
     f"{TS} INFO Error while loading logs in /data/kafka-logs/t-0 in 9ms (4/7 completed in "
     "/data/kafka-logs) (kafka.log.LogManager)",
     LogLoaded(AT, "t-0", 9, None, 4, 7, "/data/kafka-logs", failed=True),
     "3.3+: a failed partition still counts towards k/n"),
    (21, "0.9.0.1",
     f"{TS} INFO Recovering unflushed segment 36320 in log __consumer_offsets-3. (kafka.log.Log)",
     SegmentRecovering(AT, "__consumer_offsets-3", 36320), "0.9 Log.recoverLog"),
    (22, "2.3.0",
     f"{TS} INFO [Log partition=__consumer_offsets-3, dir=/data/kafka-logs] Recovering "
     "unflushed segment 1448 (kafka.log.Log)", SegmentRecovering(AT, "__consumer_offsets-3", 1448),
     "2.3 Log.recoverLog: partition from the logIdent"),
    (23, "3.9.0",
     f"{TS} INFO [LogLoader partition=t-0, dir=/data/kafka-logs] Recovering unflushed segment "
     "40. 1/3 recovered for t-0. (kafka.log.LogLoader)", SegmentRecovering(AT, "t-0", 40, 1, 3),
     "3.3+ LogLoader prints k/n per partition"),
    (24, "0.9.0.1",
     f"{TS} WARN Found a corrupted index file, /data/kafka-logs/t1-0/00000000000000000000.index, "
     "deleting and rebuilding index... (kafka.log.Log)",
     IndexRebuilt(AT, "t1-0", "/data/kafka-logs/t1-0/00000000000000000000.index",
                  IndexRebuildReason.CORRUPT), "0.9 Log.loadSegments"),
    (25, "0.9.0.1",
     f"{TS} ERROR Could not find index file corresponding to log file "
     "/data/kafka-logs/t1-0/00000000000000000000.log, rebuilding index... (kafka.log.Log)",
     IndexRebuilt(AT, "t1-0", "/data/kafka-logs/t1-0/00000000000000000000.log",
                  IndexRebuildReason.MISSING), "0.9: a missing index is rebuilt too"),
    (26, "2.3.0",
     f"{TS} WARN [Log partition=t-0, dir=/data/kafka-logs] Found a corrupted index file "
     "corresponding to log file /data/kafka-logs/t-0/00000000000000000000.log due to Corrupt "
     "index found, index file (/data/kafka-logs/t-0/00000000000000000000.index) has non-zero "
     "size but the last offset is 0 which is no greater than the base offset 0.}, recovering "
     "segment and rebuilding index files... (kafka.log.Log)",
     IndexRebuilt(AT, "t-0", "/data/kafka-logs/t-0/00000000000000000000.log",
                  IndexRebuildReason.CORRUPT,
                  "Corrupt index found, index file (/data/kafka-logs/t-0/00000000000000000000"
                  ".index) has non-zero size but the last offset is 0 which is no greater than "
                  "the base offset 0."), "1.1+: names the .log file; the '}' is Kafka's typo"),
    (27, "2.3.0",
     f"{TS} ERROR [Log partition=t-0, dir=/d] Could not find offset index file corresponding to "
     "log file /d/t-0/00000000000000000005.log, recovering segment and rebuilding index "
     "files... (kafka.log.Log)",
     IndexRebuilt(AT, "t-0", "/d/t-0/00000000000000000005.log", IndexRebuildReason.MISSING),
     "1.1+ wording"),
    (28, "0.9.0.1",
     f"{TS} INFO [Group Metadata Manager on Broker 0]: Loading offsets and group metadata from "
     f"[__consumer_offsets,3] {OFFSETS_LOGGER_09}", CoordinatorLoadStarted(AT, 3, scheduled=False),
     "real: 0.9 prints this as the load starts"),
    (29, "0.9.0.1",
     f"{TS} INFO [Group Metadata Manager on Broker 0]: Finished loading offsets from "
     f"[__consumer_offsets,3] in 17 milliseconds. {OFFSETS_LOGGER_09}",
     CoordinatorLoadFinished(AT, 3, 17), "real"),
    (30, "2.3.0",
     f"{TS} INFO [GroupMetadataManager brokerId=0] Scheduling loading of offsets and group "
     f"metadata from __consumer_offsets-3 {OFFSETS_LOGGER}",
     CoordinatorLoadStarted(AT, 3, scheduled=True), "real: 0.11+ prints it when queued"),
    (31, "2.3.0",
     f"{TS} INFO [GroupMetadataManager brokerId=0] Finished loading offsets and group metadata "
     f"from __consumer_offsets-3 in 5 milliseconds. {OFFSETS_LOGGER}",
     CoordinatorLoadFinished(AT, 3, 5), "real"),
    (32, "3.9.0",
     f"{TS} INFO [GroupMetadataManager brokerId=1] Scheduling loading of offsets and group "
     f"metadata from __consumer_offsets-7 for epoch 4 {OFFSETS_LOGGER}",
     CoordinatorLoadStarted(AT, 7, scheduled=True, epoch=4), "2.8.1+ adds the epoch"),
    (33, "3.9.0",
     f"{TS} INFO [GroupMetadataManager brokerId=1] Finished loading offsets and group metadata "
     f"from __consumer_offsets-7 in 120 milliseconds for epoch 4, of which 20 milliseconds was "
     f"spent in the scheduler. {OFFSETS_LOGGER}",
     CoordinatorLoadFinished(AT, 7, 120, scheduler_ms=20, epoch=4), "2.8.1+"),
    (34, "3.9.0",
     f"{TS} INFO [GroupCoordinator id=1] Scheduling loading of metadata from "
     f"__consumer_offsets-7 with epoch 4 {RUNTIME}",
     CoordinatorLoadStarted(AT, 7, scheduled=True, epoch=4), "new group coordinator runtime"),
    (35, "3.9.0",
     f"{TS} INFO [GroupCoordinator id=1] Finished loading of metadata from __consumer_offsets-7 "
     f"with epoch 4 in 120ms where 20ms was spent in the scheduler. Loaded 1000 records which "
     f"total to 65536 bytes. {RUNTIME}",
     CoordinatorLoadFinished(AT, 7, 120, 20, 4, 1000, 65536), "3.8+ prints records and bytes"),
    (36, "3.7.0",
     f"{TS} INFO [GroupCoordinator id=1] Finished loading of metadata from __consumer_offsets-7 "
     "with epoch 4 and LoadSummary=LoadSummary(startTimeMs=1000, endTimeMs=1150, numRecords=10, "
     f"numBytes=2048). {RUNTIME}",
     CoordinatorLoadFinished(AT, 7, 150, None, 4, 10, 2048), "3.7: time from the summary"),
    (37, "2.3.0",
     f"{TS} ERROR [GroupMetadataManager brokerId=0] Error loading offsets from "
     f"__consumer_offsets-2 {OFFSETS_LOGGER}", CoordinatorLoadFailed(AT, 2), "failed load"),
]  # fmt: skip


@pytest.mark.parametrize(
    ("number", "version", "line", "expected", "why"), CASES, ids=[str(c[0]) for c in CASES]
)
def test_line_gives_event(number: int, version: str, line: str, expected: Event, why: str) -> None:
    assert parse_line(line, patterns_for(KafkaVersion.parse(version))) == expected, why
    assert parse_line(line) == expected, "with no version given every wording is tried"


@pytest.mark.parametrize(
    ("number", "version", "line", "expected", "why"), CASES, ids=[str(c[0]) for c in CASES]
)
def test_exactly_one_row_matches(
    number: int, version: str, line: str, expected: Event, why: str
) -> None:
    """Wordings never overlap, so 'no version given' cannot mistake one release's line."""
    message = line.split("] ", 1)[1].split(" ", 1)[1].rsplit(" (", 1)[0]
    rows = [p.name for p in PATTERNS if p.regex.match(message)]
    assert len(rows) == 1, rows


def test_version_filter_rejects_other_releases_wording() -> None:
    line_23 = next(  # 2.3 "Finished loading offsets and group metadata ... in 5 ms."
        c[2] for c in CASES if c[1] == "2.3.0" and "Finished loading offsets and group" in c[2]
    )
    assert parse_line(line_23, patterns_for(KafkaVersion.parse("2.3.0"))) is not None
    assert parse_line(line_23, patterns_for(KafkaVersion.parse("0.9.0.1"))) is None
    assert parse_line(line_23, patterns_for(KafkaVersion.parse("3.9"))) is None


def test_every_release_has_one_wording_per_message() -> None:
    """For each release 0.9-3.9, the rows of one message kind do not overlap in versions."""
    for version in ["0.9.0.1", "0.10.2.2", "0.11.0.3", "1.1.1", "2.3.0", "2.8.2", "3.4.1", "3.9"]:
        rows = patterns_for(KafkaVersion.parse(version))
        names = {p.name for p in rows}
        assert "loading-logs" in names or "loading-logs-dirs" in names, version
        assert len({"loading-logs", "loading-logs-dirs"} & names) == 1, version
        finished = {n for n in names if n.startswith("coordinator-finished")}
        assert len(finished) == 1, (version, finished)


def test_table_rows_cite_sources_and_ranges() -> None:
    for row in PATTERNS:
        assert row.source.startswith(("core/", "clients/", "group-coordinator/")), row.name
        if row.until is not None:
            assert KafkaVersion.parse(row.since) < KafkaVersion.parse(row.until), row.name


def test_timestamp() -> None:
    assert parse_timestamp(f"{TS} INFO x (kafka.X)") == AT
    assert parse_timestamp("[2026-13-45 08:23:42,583] INFO x") is None
    assert parse_timestamp("\tlog.dirs = /data/kafka-logs") is None


@pytest.mark.parametrize(
    "line",
    [
        "",
        "\tat kafka.log.Log.loadSegments(Log.scala:186)",
        "garbage \x00\x01 Loading logs.",
        "[2026-11-21 08:23:42,583] INFO",
        "[2026-11-21 08:23:42,583] INFO Loading logs. (kafka.server.SomethingElse)",
        b"[2026-11-21 08:23:42,583] INFO \xff\xfe Recovering unflushed segment".decode(
            "utf-8", errors="replace"
        ),
        "[2026-11-21 08:23:42,583] INFO Finished loading offsets from [__consumer_offsets,3] in 1",
    ],
)
def test_not_an_event(line: str) -> None:
    assert parse_line(line) is None
