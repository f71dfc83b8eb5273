"""Acceptance: the cleaner emulation does what the real brokers did, on their own bytes.

Every expected value is read from the broker's own ``log-cleaner.log`` (thread deaths and their
messages, the offset range of each pass, the "Start size"/"End size" message counts), and the
emulation runs on the log dir as it was before that cleaning (``kafka-logs``).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from offsets_auditor.cli.main import main
from tests.support.kafka_cleaner_log import read_cleaner_log

FIXTURES = Path(__file__).parent.parent / "fixtures"
#: (fixture dir, Kafka version): real brokers whose cleaner ran on ``kafka-logs`` as committed.
CLEANER_RUNS = [
    ("kafka-0.9.0.1/cleaner-died", "0.9.0.1"),
    ("kafka-0.9.0.1/two-threads", "0.9.0.1"),
    ("kafka-2.3.0/multi-pass", "2.3.0"),
    ("kafka-2.3.0/compaction-none", "2.3.0"),
    ("kafka-2.3.0/compaction-snappy", "2.3.0"),
    ("kafka-2.3.0/compaction-lz4", "2.3.0"),
    ("kafka-2.3.0/compaction-zstd", "2.3.0"),
    ("kafka-2.3.0/transactions", "2.3.0"),
]


def audit(fixture: Path, version: str, capsys: pytest.CaptureFixture[str], *extra: str) -> dict:
    status = main(
        [
            "audit",
            str(fixture / "kafka-logs"),
            "--broker-config",
            str(fixture / "broker-server.properties"),
            "--kafka-version",
            version,
            "--json",
            # the emulation's clock: the broker log's own time is after every segment was written
            "--now",
            str(_last_mtime_ms(fixture / "kafka-logs") + 60_000),
            *extra,
        ]
    )
    report = json.loads(capsys.readouterr().out)
    assert status == report["exit_status"]
    return report


def _last_mtime_ms(log_dir: Path) -> int:
    return max(int(p.stat().st_mtime * 1000) for p in log_dir.rglob("*.log"))


def by_name(report: dict) -> dict[str, dict]:
    return {p["name"]: p for p in report["partitions"]}


@pytest.mark.parametrize(("name", "version"), CLEANER_RUNS)
def test_thread_deaths_are_the_brokers(
    name: str, version: str, capsys: pytest.CaptureFixture[str]
) -> None:
    fixture = FIXTURES / name
    assert (fixture / "log-cleaner.log").exists() and (fixture / "kafka-logs").is_dir(), (
        f"{name} is missing: regenerate it (scripts/fixtures/)"
    )
    broker = read_cleaner_log(fixture / "log-cleaner.log")
    partitions = by_name(audit(fixture, version, capsys))
    died_on = {run.partition: run.error for run in broker.deaths()}
    ours = {
        n: p["cleaner"]["message"]
        for n, p in partitions.items()
        if p["cleaner"]["outcome"] == "thread-death"
    }
    assert ours == died_on


@pytest.mark.parametrize(("name", "version"), CLEANER_RUNS)
def test_passes_and_retained_counts_are_the_brokers(
    name: str, version: str, capsys: pytest.CaptureFixture[str]
) -> None:
    fixture = FIXTURES / name
    assert (fixture / "log-cleaner.log").exists() and (fixture / "kafka-logs").is_dir(), (
        f"{name} is missing: regenerate it (scripts/fixtures/)"
    )
    broker = read_cleaner_log(fixture / "log-cleaner.log")
    partitions = by_name(audit(fixture, version, capsys))
    for partition, report in partitions.items():
        runs = [r for r in broker.for_partition(partition) if r.error is None]
        ours = report["cleaner"]["pass_details"]
        assert len(ours) == len(runs), partition
        for mine, real in zip(ours, runs, strict=True):
            assert (mine["start_offset"], mine["upper_bound"]) == (real.range_start, real.range_end)
            assert mine["segments"] == real.segments
            assert mine["start_records"] == real.start_messages
            assert mine["end_records"] == real.end_messages
        # each pass ends where the broker's next pass began
        for mine, following in zip(ours, runs[1:], strict=False):
            assert mine["end_offset"] == following.range_start


def test_cleaner_died_fixture(capsys: pytest.CaptureFixture[str]) -> None:
    """The production failure: 0.9.0.1, one thread, 1048577-byte dedupe buffer."""
    report = audit(FIXTURES / "kafka-0.9.0.1/cleaner-died", "0.9.0.1", capsys)
    partitions = by_name(report)
    p2, p3 = partitions["__consumer_offsets-2"], partitions["__consumer_offsets-3"]
    assert p2["cleaner"]["outcome"] == "thread-death"
    assert p2["cleaner"]["capacity"] == 39321
    assert p2["cleaner"]["message"] == (
        "requirement failed: 61680 messages in segment"
        " __consumer_offsets-2/00000000000000000000.log but offset map can fit only 39321."
        " You can increase log.cleaner.dedupe.buffer.size or decrease log.cleaner.threads"
    )
    # p3 fits the map, but the only thread dies first: it has never been compacted
    assert p3["cleaner"]["outcome"] == "blocked"
    assert p3["never_compacted"] is True
    assert "__consumer_offsets-2" in p3["cleaner"]["reason"]
    assert report["exit_status"] == 2
    # the fix: the smallest buffer whose map fits the 61680-offset segment
    fix = report["brokers"][0]["recommendation"]["log.cleaner.dedupe.buffer.size"]
    assert fix // 24 * 0.9 >= 61680 > (fix - 24) // 24 * 0.9
