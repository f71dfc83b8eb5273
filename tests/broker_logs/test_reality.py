"""The real brokers' cleaner logs beside the emulation of the log dirs they cleaned.

Each real broker ran on the ``kafka-logs/`` of its fixture; its ``log-cleaner.log`` says what
its cleaner did. The emulation of that same ``kafka-logs/`` at the broker's config and
version must say the same, pass by pass, to the offset and to Kafka's message; and the
findings the lead publishes (``cleaner-thread-died``, ``partition-uncleanable``,
``prediction-differs``) come out of the broker's own lines.
"""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

from offsets_auditor.broker_logs.history import CleaningEnd, uncleanable_since
from offsets_auditor.broker_logs.reality import (
    Agreement,
    Comparison,
    Difference,
    compare_all,
    prediction_findings,
    prediction_of,
    real_passes,
    thread_death_findings,
    uncleanable_findings,
)
from offsets_auditor.broker_logs.server_log import broker_starts
from offsets_auditor.logdir import fs
from offsets_auditor.logdir.checkpoints import parse_offset_checkpoint
from offsets_auditor.versions import KafkaVersion
from tests.broker_logs.support import FIXTURES, emulate, history

V09 = KafkaVersion.parse("0.9.0.1")
V23 = KafkaVersion.parse("2.3.0")
MULTI_PASS = FIXTURES / "kafka-2.3.0/multi-pass"


def checkpoint_of(log_dir: Path) -> dict[str, int]:
    path = log_dir / "cleaner-offset-checkpoint"
    parsed = parse_offset_checkpoint(path.read_text(), version=V23, location=str(path))
    return {
        f"{topic}-{partition}": offset for (topic, partition), offset in parsed.offsets().items()
    }


def test_09_thread_death_is_a_finding_with_kafkas_message_and_agrees() -> None:
    fixture = FIXTURES / "kafka-0.9.0.1/cleaner-died"
    log = fixture / "log-cleaner.log"
    raw = log.read_bytes()
    (finding,) = thread_death_findings(history(log))
    # Kafka's own line, whole: the exception class and its message
    lines = raw.decode().splitlines()
    kafkas = lines[next(i for i, t in enumerate(lines) if "Error due to" in t) + 1]
    assert kafkas.startswith("java.lang.IllegalArgumentException: requirement failed: 61680")
    assert finding.kind == "cleaner-thread-died"
    assert finding.severity.value == "critical"
    assert finding.partition == "__consumer_offsets-2"
    assert kafkas in finding.detail
    assert "2026-11-21 08:25:35.716" in finding.detail
    assert finding.file == str(log) and finding.position is not None
    assert raw[finding.position :].startswith(b"[2026-11-21 08:25:35,716] ERROR")
    # the emulation of the log dir the broker cleaned predicts that death, to the character
    audit = emulate(fixture / "kafka-logs", fixture / "broker-server.properties", "0.9.0.1")
    predictions = {p.name: prediction_of(p.emulated) for p in audit.partitions}
    comparisons = {c.partition: c for c in compare_all(history(log), predictions, V09)}
    assert comparisons["__consumer_offsets-2"].agreement is Agreement.AGREES
    assert comparisons["__consumer_offsets-2"].passes[0].real.failure == kafkas.partition(": ")[2]
    # the only thread died first: -3 was never cleaned, nothing to set beside it
    assert comparisons["__consumer_offsets-3"].agreement is Agreement.NOT_COMPARABLE
    assert prediction_findings(comparisons.values()) == []


def test_09_a_death_the_config_given_does_not_predict_names_the_brokers_map() -> None:
    """The same log dir emulated at the default config (no broker-server.properties): the
    emulation's map is larger and cleans -2; the broker's message says how many entries its map
    fits (39,321), so the difference is the config, not ours."""
    fixture = FIXTURES / "kafka-0.9.0.1/cleaner-died"
    defaults = fixture / "defaults.properties"
    try:
        defaults.write_text("broker.id=0\n")
        audit = emulate(fixture / "kafka-logs", defaults, "0.9.0.1")
    finally:
        defaults.unlink()
    (p2,) = [p for p in audit.partitions if p.name == "__consumer_offsets-2"]
    assert p2.emulated.failure is None  # the default 128 MiB map fits every segment
    capacity = p2.capacity
    (comparison,) = compare_all(
        history(fixture / "log-cleaner.log"),
        {"__consumer_offsets-2": prediction_of(p2.emulated)},
        V09,
        capacity=capacity,
    )
    assert comparison.agreement is Agreement.DIFFERS
    assert comparison.cause is Difference.CONFIG_DRIFT
    assert f"fits 39,321 entries, the config given {capacity:,}" in comparison.detail


def test_09_two_threads_both_die_and_the_clean_between_agrees() -> None:
    fixture = FIXTURES / "kafka-0.9.0.1/two-threads"
    found = history(fixture / "log-cleaner.log")
    deaths = thread_death_findings(found)
    assert [(f.partition, f.kind) for f in deaths] == [
        ("__consumer_offsets-2", "cleaner-thread-died"),
        ("__consumer_offsets-2", "cleaner-thread-died"),
    ]
    audit = emulate(fixture / "kafka-logs", fixture / "broker-server.properties", "0.9.0.1")
    predictions = {p.name: prediction_of(p.emulated) for p in audit.partitions}
    comparisons = {
        c.partition: c
        for c in compare_all(found, predictions, V09, checkpoint_of(fixture / "kafka-logs-after"))
    }
    p3 = comparisons["__consumer_offsets-3"]
    assert p3.agreement is Agreement.AGREES
    (check,) = p3.passes
    assert (check.real.start, check.real.upper, check.real.end) == (0, 23496, 23496)
    assert check.predicted is not None
    assert (check.predicted.start_offset, check.predicted.upper_bound) == (0, 23496)
    assert comparisons["__consumer_offsets-2"].agreement is Agreement.AGREES


def multi_pass_comparison(
    log_dir: str = "kafka-logs",
    config: Path | None = None,
    version: KafkaVersion = V23,
    *,
    running: bool = False,
) -> Comparison:
    """The multi-pass broker's cleanings of __consumer_offsets-1 beside the emulation of
    ``log_dir`` (of its fixture) at 2.3.0 and ``config`` (default: the broker's), compared
    as ``version`` would log them, with the checkpoints of the log dir it left."""
    fixture = MULTI_PASS
    audit = emulate(fixture / log_dir, config or fixture / "broker-server.properties", "2.3.0")
    (p1,) = [p for p in audit.partitions if p.name == "__consumer_offsets-1"]
    (comparison,) = compare_all(
        history(fixture / "log-cleaner.log"),
        {"__consumer_offsets-1": prediction_of(p1.emulated)},
        version,
        checkpoint_of(fixture / "kafka-logs-after"),
        running=running,
    )
    return comparison


def multi_pass() -> tuple[Path, list]:
    fixture = MULTI_PASS
    found = history(fixture / "log-cleaner.log")
    passes = real_passes(
        found.cleanings_of("__consumer_offsets-1"),
        V23,
        checkpoint_of(fixture / "kafka-logs-after")["__consumer_offsets-1"],
    )
    return fixture, list(passes)


def test_23_multi_pass_ranges_are_the_emulations() -> None:
    """Three passes of the 1 MiB map: each pass's [start, upper) and end offset, read from the
    broker's lines (2.3.0's banner repeats the start: the end is the next pass's start, and
    the checkpoint after the last), equal the emulation's PassResults."""
    fixture, real = multi_pass()
    audit = emulate(fixture / "kafka-logs", fixture / "broker-server.properties", "2.3.0")
    (p1,) = [p for p in audit.partitions if p.name == "__consumer_offsets-1"]
    assert len(real) == len(p1.passes) == 3
    assert [(r.start, r.upper, r.end) for r in real] == [
        (x.start_offset, x.upper_bound, x.end_offset) for x in p1.passes
    ]
    assert [(r.start_messages, r.end_messages) for r in real] == [
        (x.start_records, x.end_records) for x in p1.passes
    ]
    assert [r.banner_end for r in real] == [r.start for r in real]  # 2.3.0's banner
    found = history(fixture / "log-cleaner.log")
    (comparison,) = compare_all(
        found,
        {"__consumer_offsets-1": prediction_of(p1.emulated)},
        V23,
        checkpoint_of(fixture / "kafka-logs-after"),
    )
    assert comparison.agreement is Agreement.AGREES
    assert len(comparison.passes) == 3


def test_23_a_smaller_map_than_the_brokers_is_config_drift() -> None:
    """The same log emulated with a dedupe buffer other than the broker's: its passes end
    elsewhere, and the comparison names the config."""
    fixture, _ = multi_pass()
    drifted = fixture / "drifted.properties"
    try:
        drifted.write_text(
            (fixture / "broker-server.properties").read_text()
            + "\nlog.cleaner.dedupe.buffer.size=1500000\n"
        )
        comparison = multi_pass_comparison(config=drifted)
    finally:
        drifted.unlink()
    assert comparison.agreement is Agreement.DIFFERS
    assert comparison.cause is Difference.CONFIG_DRIFT
    (finding,) = prediction_findings([comparison])
    assert finding.kind == "prediction-differs" and finding.partition == "__consumer_offsets-1"
    assert "config-drift" in finding.detail


def test_23_the_banner_tells_another_version() -> None:
    """2.3.0's banner prints the start twice; a broker said to run 2.6.0 would print the end."""
    comparison = multi_pass_comparison(version=KafkaVersion.parse("2.6.0"))
    assert comparison.agreement is Agreement.DIFFERS
    assert comparison.cause is Difference.OTHER_VERSION


def test_the_log_dir_read_after_the_cleaning_is_not_comparable() -> None:
    """The emulation of kafka-logs-after starts where the broker's last clean ended."""
    comparison = multi_pass_comparison("kafka-logs-after")
    assert comparison.agreement is Agreement.NOT_COMPARABLE
    assert "read after" in comparison.detail


# -- kafka-2.3.0/uncleanable: a corrupt batch in a rolled segment of __consumer_offsets-1 ------

UNCLEANABLE = FIXTURES / "kafka-2.3.0/uncleanable"


def test_23_partition_uncleanable_with_its_exception_and_time() -> None:
    log = UNCLEANABLE / "log-cleaner.log"
    lines = log.read_text().splitlines()
    at = next(i for i, t in enumerate(lines) if "as uncleanable" in t)
    found = history(log)
    (finding,) = uncleanable_findings(found)
    assert finding.kind == "partition-uncleanable"
    assert finding.partition == "__consumer_offsets-1"
    assert lines[at + 1] in finding.detail  # Kafka's exception, whole
    assert lines[at + 1].startswith("org.apache.kafka.common.errors.CorruptRecordException: ")
    since = uncleanable_since(found)["__consumer_offsets-1"].at
    assert lines[at].startswith(
        f"[{since.isoformat(sep=' ', timespec='milliseconds')}".replace(".", ",", 1)
    )
    # it stays uncleanable: no cleaning of it afterwards, while the others are cleaned on
    cleanings = found.cleanings
    assert [c.end for c in found.cleanings_of("__consumer_offsets-1")] == [
        CleaningEnd.MARKED_UNCLEANABLE
    ]
    later = [c for c in cleanings if c.begun_at > since and c.end is CleaningEnd.COMPLETED]
    assert {c.partition for c in later} >= {"__consumer_offsets-0", "__consumer_offsets-2"}

    # ... and grows: more bytes in it after the run than before
    def size(log_dir: Path) -> int:
        return sum(f.stat().st_size for f in (log_dir / "__consumer_offsets-1").glob("*.log"))

    assert size(UNCLEANABLE / "kafka-logs-after") > size(UNCLEANABLE / "kafka-logs")


def test_23_the_emulation_predicts_the_same_exception() -> None:
    audit = emulate(UNCLEANABLE / "kafka-logs", UNCLEANABLE / "broker-server.properties", "2.3.0")
    predictions = {p.name: prediction_of(p.emulated) for p in audit.partitions}
    found = history(UNCLEANABLE / "log-cleaner.log")
    comparison = {c.partition: c for c in compare_all(found, predictions, V23)}
    p1 = comparison["__consumer_offsets-1"]
    assert p1.agreement is Agreement.AGREES, p1.detail
    ours = predictions["__consumer_offsets-1"][2]
    assert ours is not None
    # the same message but for where each saw the log dir mounted
    assert p1.passes[-1].real.failure == ours.replace(str(UNCLEANABLE), "/data")
    # a wrong message would be a difference of ours
    wrong = {**predictions, "__consumer_offsets-1": replace_failure(predictions, "x")}
    (differs,) = [
        c for c in compare_all(found, wrong, V23) if c.partition == "__consumer_offsets-1"
    ]
    assert differs.agreement is Agreement.DIFFERS and differs.cause is Difference.OURS


def replace_failure(predictions: dict, message: str) -> tuple:
    first_dirty, passes, _ = predictions["__consumer_offsets-1"]
    return first_dirty, passes, message


# -- kafka-2.3.0/rotated-cleaner-log: log4j rolled log-cleaner.log every minute ---------------

ROTATED = FIXTURES / "kafka-2.3.0/rotated-cleaner-log"


def test_a_rotated_log_is_read_whole() -> None:
    files = sorted(ROTATED.glob("log-cleaner.log*"))
    assert len(files) >= 4  # log4j's own DailyRollingFileAppender, '.'yyyy-MM-dd-HH-mm
    found = history(ROTATED / "log-cleaner.log")
    begun = sum(f.read_text().count("Beginning cleaning of log") for f in files)
    banners = sum(f.read_text().count("Log cleaner thread ") for f in files)
    marks = sum(f.read_text().count("as uncleanable") for f in files)
    assert marks == 1 and len(found.cleanings) == begun == banners + marks
    ends = {c.end for c in found.cleanings if c.partition != "__consumer_offsets-1"}
    assert ends == {CleaningEnd.COMPLETED}
    assert [c.end for c in found.cleanings_of("__consumer_offsets-1")] == [
        CleaningEnd.MARKED_UNCLEANABLE
    ]
    # cleanings that began in one file and ended in the next are whole
    across = [c for c in found.cleanings if c.stats and c.stats.place.file != c.place.file]
    assert across
    for c in across:
        assert c.map_start is not None and c.stats is not None
        assert c.stats.partition == c.partition
    # the live file alone would leave the first cleanings out, and the mark with them
    alone = [c for c in found.cleanings if c.place.file.endswith("log-cleaner.log")]
    assert 0 < len(alone) < len(found.cleanings)
    (mark,) = uncleanable_since(found).values()
    assert not mark.place.file.endswith("log-cleaner.log")
    assert found.runs[0].started_at is not None  # the start is in the oldest file


def test_a_broker_restart_forgets_the_marks() -> None:
    """The marks are in the broker's memory: from its server.log's starts, a mark made after
    the last start stands; one made before a later start is gone."""
    found = history(UNCLEANABLE / "log-cleaner.log")
    starts = broker_starts(fs.iter_lines(UNCLEANABLE / "server.log")).starts
    (mark,) = uncleanable_since(found, starts).values()
    assert starts and max(starts) < mark.at
    later = mark.at + timedelta(minutes=5)
    assert uncleanable_since(found, [*starts, later]) == {}
    assert uncleanable_findings(found, [*starts, later]) == []


def test_on_a_running_broker_only_a_failed_cleaning_is_set_beside_the_emulation() -> None:
    """A running broker swaps cleaned segments in before it writes the checkpoint (2.3.0
    LogCleaner.cleanLog): a cleaning from the checkpoint that did not fail may be half in the
    log dir read, so it is not compared (a live 2.3.0 broker gave 'the broker counted 33,320
    start records, the emulation 19,135'); a failed one swapped nothing and still is."""
    stopped, running = (multi_pass_comparison(running=r) for r in (False, True))
    assert stopped.agreement is Agreement.AGREES
    assert running.agreement is Agreement.NOT_COMPARABLE and "is running" in running.detail
    died = FIXTURES / "kafka-0.9.0.1/cleaner-died"
    audit = emulate(died / "kafka-logs", died / "broker-server.properties", "0.9.0.1")
    predictions = {p.name: prediction_of(p.emulated) for p in audit.partitions}
    live = {
        c.partition: c
        for c in compare_all(history(died / "log-cleaner.log"), predictions, V09, running=True)
    }
    assert live["__consumer_offsets-2"].agreement is Agreement.AGREES
