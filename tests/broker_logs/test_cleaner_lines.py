"""The cleaner's log lines into events: every wording of the table, on the real brokers' logs
(0.9.0.1, 2.3.0) and, for the versions no broker here ran, on lines written from the format
strings of Kafka's source (each cited in ``broker_logs.cleaner_lines``)."""

from __future__ import annotations

from datetime import datetime

import pytest

from offsets_auditor.broker_logs import events as ev
from offsets_auditor.broker_logs.cleaner_lines import event_of, partition_name
from offsets_auditor.broker_logs.files import SourcedLine, rotated_set
from offsets_auditor.broker_logs.history import CleaningEnd, fold
from offsets_auditor.broker_logs.records import records
from tests.broker_logs.support import FIXTURES, history


def one(text: str) -> ev.CleanerEvent | None:
    lines = [SourcedLine(t, "x.log", i, 0) for i, t in enumerate(text.split("\n"), start=1)]
    (record,) = records(lines)
    return event_of(record)


def test_every_real_cleaner_log_parses_to_whole_cleanings() -> None:
    """Every cleaning the real brokers began has its map range and an end; every banner
    belongs to a cleaning (a log with rotated files is read as its whole set)."""
    logs = [p for p in sorted(FIXTURES.glob("kafka-*/**/log-cleaner*.log")) if p.is_file()]
    assert len(logs) >= 20
    for path in logs:
        text = "".join(f.path.read_text() for f in rotated_set(path))
        found = history(path)
        assert len(found.cleanings) == text.count("Beginning cleaning of log"), path
        assert sum(c.stats is not None for c in found.cleanings) == text.count(
            "Log cleaner thread "
        ), path
        for c in found.cleanings:
            assert c.map_start is not None and c.map_end is not None, (path, c)
            # open only where the broker was killed
            assert c.end is not CleaningEnd.OPEN or path.name.endswith("before-kill.log"), c


def test_the_09_thread_death_is_read_with_kafkas_message() -> None:
    path = FIXTURES / "kafka-0.9.0.1/cleaner-died/log-cleaner.log"
    lines = path.read_text().splitlines()
    error = next(i for i, line in enumerate(lines) if "Error due to" in line)
    exception, _, message = lines[error + 1].partition(": ")
    run = history(path).last_run
    assert run is not None
    (thread,) = run.threads
    assert thread.died == ev.Failure(exception, message, thread.died.stack if thread.died else ())
    assert thread.died_at == datetime(2026, 11, 21, 8, 25, 35, 716000)
    assert thread.died_cleaning == "__consumer_offsets-2"
    assert thread.died is not None and thread.died.stack[0].startswith("\tat scala.Predef$.require")
    assert run.alive == ()  # shut down afterwards


def test_uncleanable_marks_are_read_with_their_exception() -> None:
    path = FIXTURES / "kafka-2.3.0/corrupt-segments/after-clean-marker/log-cleaner.log"
    run = history(path).last_run
    assert run is not None
    assert [m.partition for m in run.uncleanable] == [
        "__consumer_offsets-0",
        "__consumer_offsets-4",
        "__consumer_offsets-1",
    ]
    text = path.read_text().splitlines()
    for mark in run.uncleanable:
        line = next(i for i, t in enumerate(text) if f"({mark.partition}) as uncleanable" in t)
        assert mark.failure is not None and mark.failure.text == text[line + 1]
        assert mark.log == f"Log(/data/kafka-logs/{mark.partition})"
    ends = {c.partition: c.end for c in run.cleanings}
    assert ends["__consumer_offsets-1"] is CleaningEnd.MARKED_UNCLEANABLE
    assert ends["__consumer_offsets-3"] is CleaningEnd.COMPLETED


# -- the wordings of versions no broker here ran, from Kafka's format strings ----------------

TS = "[2026-11-25 19:00:00,123]"


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        # 1.0+ ShutdownableThread logIdent "[name]: "; 3.5-3.9 in server.log under the Java
        # class's logger (kafka.log.LogCleaner$CleanerThread)
        (
            f"{TS} INFO [kafka-log-cleaner-thread-1]: Starting"
            " (kafka.log.LogCleaner$CleanerThread)",
            ev.ThreadStarting,
        ),
        (
            f"{TS} INFO [kafka-log-cleaner-thread-1]: Stopped (kafka.log.LogCleaner$CleanerThread)",
            ev.ThreadStopped,
        ),
        # 4.x: Cleaner.java logs without the period after the log's name
        (
            f"{TS} INFO Cleaner 0: Beginning cleaning of log __consumer_offsets-7"
            " (org.apache.kafka.storage.internals.log.Cleaner)",
            ev.CleaningBegun,
        ),
        (
            f"{TS} INFO Cleaner 0: Building offset map for log __consumer_offsets-7 for 3"
            " segments in offset range [10, 250). (org.apache.kafka.storage.internals.log.Cleaner)",
            ev.OffsetMapRange,
        ),
        # 2.3.0+: growBuffers has a space before "bytes"; 0.9.0.1 had none (a real 0.9 line is
        # in corrupt-segments/after-clean-marker/log-cleaner.log)
        (
            f"{TS} INFO Cleaner 0: Growing cleaner I/O buffers from 262144 bytes to 524288 bytes."
            " (kafka.log.LogCleaner)",
            ev.BuffersGrown,
        ),
        (
            f"{TS} INFO Cleaner 0: Caught segment overflow error during cleaning: Detected offset"
            " overflow at offset 2147483648 in segment LogSegment(baseOffset=0, size=100)"
            " (kafka.log.LogCleaner)",
            ev.SegmentOverflow,
        ),
        (
            f"{TS} INFO [kafka-log-cleaner-thread-0]: \tCleanable partitions: 3, Delayed"
            " partitions: 1, max delay: 5000 (kafka.log.LogCleaner)",
            ev.DelayedPartitions,
        ),
        (
            f"{TS} WARN [kafka-log-cleaner-thread-0]: \tFound 2 invalid messages during"
            " compaction. (kafka.log.LogCleaner)",
            ev.InvalidMessages,
        ),
        (
            f"{TS} INFO The cleaning for partition [__consumer_offsets,3] is aborted and paused"
            " (kafka.log.LogCleaner)",
            ev.CleaningAborted,
        ),
        (
            f"{TS} WARN Resetting first dirty offset of __consumer_offsets-3 to log start offset"
            " 100 since the checkpointed offset 7 is invalid. (kafka.log.LogCleaner)",
            ev.FirstDirtyReset,
        ),
        (
            f"{TS} WARN The last checkpoint dirty offset for partition __consumer_offsets-3 is"
            " 900, which is larger than the log end offset 800. Resetting to the log start offset"
            " 0. (kafka.log.LogCleaner)",
            ev.FirstDirtyReset,
        ),
        # another ShutdownableThread's lines, and another logger, are not the cleaner's
        (
            f"{TS} INFO [ReplicaFetcherThread-0-1]: Starting (kafka.server.ReplicaFetcherThread)",
            None,
        ),
        (f"{TS} INFO Starting the log cleaner (kafka.server.KafkaServer)", None),
    ],
)
def test_wordings_of_other_versions(line: str, expected: type | None) -> None:
    found = one(line)
    assert (type(found) if found is not None else None) is expected


def test_a_35_thread_death_in_server_log_with_its_exception() -> None:
    """3.5-3.9: "Error due to" comes from the Java ShutdownableThread, in server.log."""
    found = one(
        f"{TS} ERROR [kafka-log-cleaner-thread-0]: Error due to"
        " (kafka.log.LogCleaner$CleanerThread)\n"
        "java.lang.OutOfMemoryError: Java heap space\n"
        "\tat java.base/java.nio.HeapByteBuffer.<init>(HeapByteBuffer.java:64)"
    )
    assert isinstance(found, ev.ThreadDied)
    assert found.failure == ev.Failure(
        "java.lang.OutOfMemoryError",
        "Java heap space",
        ("\tat java.base/java.nio.HeapByteBuffer.<init>(HeapByteBuffer.java:64)",),
    )


def test_a_4x_banner_is_read() -> None:
    """LogCleaner.java recordStats: the same banner, under the storage module's logger."""
    found = one(
        f"{TS} INFO [kafka-log-cleaner-thread-0]: \n"
        "\tLog cleaner thread 0 cleaned log __consumer_offsets-7 (dirty section = [10, 250])\n"
        "\t1,234.5 MB of log processed in 12.0 seconds (102.9 MB/sec).\n"
        "\tIndexed 1,000.0 MB in 4.0 seconds (250.0 Mb/sec, 33.3% of total time)\n"
        "\tBuffer utilization: 12.5%\n"
        "\tCleaned 1,234.5 MB in 8.0 seconds (154.3 Mb/sec, 66.7% of total time)\n"
        "\tStart size: 1,234.5 MB (12,345,678 messages)\n"
        "\tEnd size: 0.5 MB (4,321 messages)\n"
        "\t100.0% size reduction (100.0% fewer messages)\n"
        " (org.apache.kafka.storage.internals.log.LogCleaner)"
    )
    assert isinstance(found, ev.CleaningStats)
    assert (found.dirty_start, found.dirty_end, found.mb_read, found.seconds) == (
        10,
        250,
        1234.5,
        12.0,
    )
    assert (found.indexed_mb, found.utilization, found.start_messages, found.end_messages) == (
        1000.0,
        0.125,
        12_345_678,
        4321,
    )


def test_a_cleaning_cut_by_a_restart_is_interrupted() -> None:
    """A cleaning with no end before the next "Starting the log cleaner" (a kill -9)."""
    before = FIXTURES / "kafka-2.3.0/unclean-shutdown/log-cleaner-before-kill.log"
    after = FIXTURES / "kafka-2.3.0/unclean-shutdown/log-cleaner-restart.log"
    from offsets_auditor.broker_logs.reading import read_history

    found, _ = read_history([before, after])
    assert len(found.runs) == 2
    assert [c.end for c in found.runs[1].cleanings] == [CleaningEnd.COMPLETED]
    assert fold([]).runs == ()


def test_09_partition_names_are_rewritten() -> None:
    assert partition_name("[__consumer_offsets,12]") == "__consumer_offsets-12"
    assert partition_name("orders.x-3") == "orders.x-3"


def test_the_tests_own_parser_reads_the_same() -> None:
    """``tests/support/kafka_cleaner_log.py`` stays an independent reading of the brokers'
    words (the cleaner tests take their expected values from it, so it must not share this
    parser's mistakes); on every real log the two agree, cleaning by cleaning."""
    from tests.support.kafka_cleaner_log import read_cleaner_log

    for path in sorted(FIXTURES.glob("kafka-*/**/log-cleaner*.log")):
        if any(f.name != path.name for f in rotated_set(path)):
            continue  # a rotated set: the tests' parser reads one file
        theirs = read_cleaner_log(path)
        ours = history(path).cleanings
        assert [
            (r.thread, r.partition, r.range_start, r.range_end, r.start_messages, r.end_messages)
            for r in theirs.runs
        ] == [
            (
                c.thread,
                c.partition,
                c.map_start,
                c.map_end,
                c.stats.start_messages if c.stats else None,
                c.stats.end_messages if c.stats else None,
            )
            for c in ours
        ], path
        assert [r.error for r in theirs.runs] == [
            c.failure.message if c.end is CleaningEnd.THREAD_DIED and c.failure else None
            for c in ours
        ], path
