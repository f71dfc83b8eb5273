"""``offsets-auditor audit`` with the broker's own logs (issue 22): each real broker's
``log-cleaner.log`` in the fixtures, read beside the log dir it cleaned (found there, or given
with ``--cleaner-log``), gives its findings with Kafka's words, the file and the byte position
of the broker's line, and sets the broker's passes beside the emulation's.

The expected values come from the broker's files, read here: the lines the findings point at,
the passes the emulation reports for the same log dir.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from offsets_auditor.cli.main import main

FIXTURES = Path(__file__).parent.parent / "fixtures"
CLEANER_DIED = FIXTURES / "kafka-0.9.0.1" / "cleaner-died"
MULTI_PASS = FIXTURES / "kafka-2.3.0" / "multi-pass"
UNCLEANABLE = FIXTURES / "kafka-2.3.0" / "uncleanable"
ROTATED = FIXTURES / "kafka-2.3.0" / "rotated-cleaner-log"
FALLING_BEHIND = FIXTURES / "kafka-2.3.0" / "falling-behind"
KINDS = (
    "cleaner-thread-died",
    "partition-uncleanable",
    "prediction-differs",
    "cleaner-falling-behind",
)


def audit(log_dir: Path, *more: str, capsys: pytest.CaptureFixture[str]) -> dict[str, Any]:
    main(["audit", str(log_dir), "--json", "--no-groups", *more])
    report: dict[str, Any] = json.loads(capsys.readouterr().out)
    return report


def findings(report: dict[str, Any], kind: str) -> list[dict[str, Any]]:
    return [f for f in report["findings"] if f["kind"] == kind]


def line_at(finding: dict[str, Any]) -> str:
    """The broker's line a finding points at (its file, from its byte position)."""
    raw = Path(finding["file"]).read_bytes()
    return raw[finding["position"] :].split(b"\n", 1)[0].decode()


def partition(report: dict[str, Any], name: str) -> dict[str, Any]:
    (found,) = [p for p in report["partitions"] if p["name"] == name]
    return found


def test_09_thread_death_with_kafkas_message_agrees_with_the_emulation(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """0.9.0.1, one thread, dead on -2's first segment: the log found beside the log dir."""
    report = audit(
        CLEANER_DIED / "kafka-logs",
        "--broker-config",
        str(CLEANER_DIED / "broker-server.properties"),
        capsys=capsys,
    )
    (broker,) = report["brokers"]
    log = broker["cleaner_log"]
    assert log["files"] == [str(CLEANER_DIED / "log-cleaner.log")]
    assert log["how"] == "found beside the server log"
    assert (log["threads_alive"], log["threads_dead"]) == (0, 1)
    (died,) = findings(report, "cleaner-thread-died")
    assert died["file"] == str(CLEANER_DIED / "log-cleaner.log")
    assert line_at(died).startswith("[2026-11-21 08:25:35,716] ERROR [kafka-log-cleaner-thread-0]")
    lines = (CLEANER_DIED / "log-cleaner.log").read_text().splitlines()
    kafkas = lines[next(i for i, t in enumerate(lines) if "Error due to" in t) + 1]
    assert kafkas.startswith("java.lang.IllegalArgumentException: requirement failed: 61680")
    assert kafkas in died["detail"] and died["partition"] == "__consumer_offsets-2"
    # the emulation at the broker's config predicts that death, to Kafka's message
    p2 = partition(report, "__consumer_offsets-2")["cleaner_log"]
    assert p2["prediction"]["agreement"] == "agrees"
    assert p2["prediction"]["passes"][0]["real_failure"] == kafkas.partition(": ")[2]
    assert findings(report, "prediction-differs") == []


def test_09_the_default_config_is_named_as_the_difference(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Without the broker's config the emulation's map is the default 128 MiB one and cleans
    -2; the broker's message names its own map (39,321 entries): config-drift, at the line
    where that cleaning began."""
    report = audit(CLEANER_DIED / "kafka-logs", capsys=capsys)
    (differs,) = findings(report, "prediction-differs")
    assert differs["severity"] == "warning" and differs["partition"] == "__consumer_offsets-2"
    assert "(config-drift)" in differs["detail"] and "fits 39,321 entries" in differs["detail"]
    assert "Beginning cleaning of log __consumer_offsets-2" in line_at(differs)


def test_23_multi_pass_ranges_are_the_emulations(capsys: pytest.CaptureFixture[str]) -> None:
    """2.3.0, -1 cleaned in three passes of a full map: each pass's range and end, as the
    broker logged them, are the emulation's."""
    report = audit(
        MULTI_PASS / "kafka-logs",
        "--broker-config",
        str(MULTI_PASS / "broker-server.properties"),
        capsys=capsys,
    )
    p1 = partition(report, "__consumer_offsets-1")
    emulated = [
        (d["start_offset"], d["upper_bound"], d["end_offset"])
        for d in p1["cleaner"]["pass_details"]
    ]
    last = p1["cleaner_log"]["last_cleaning"]
    real = [(x["start_offset"], x["upper_bound"], x["end_offset"]) for x in last["passes"]]
    assert len(real) == len(emulated) == 3
    # each pass's [start, upper) is the emulation's, and so is each end the log tells: where
    # the next pass began. 2.3.0's banner prints the start twice (0.10.2-2.5), and the log dir
    # read is the one the broker cleaned (its checkpoint from before): the last end is unknown.
    assert [r[:2] for r in real] == [e[:2] for e in emulated]
    assert [r[2] for r in real[:2]] == [e[2] for e in emulated[:2]]
    assert real[2][2] is None and emulated[2][2] == real[2][1]
    assert p1["cleaner_log"]["prediction"]["agreement"] == "agrees"
    # each cleaning points at its "Beginning cleaning" line
    rows = [c for c in report["cleanings"] if c["partition"] == 1]
    assert [(c["start_offset"], c["upper_bound"], c["end_offset"]) for c in rows][-3:] == real
    for row in rows:
        assert "Beginning cleaning of log __consumer_offsets-1" in line_at(row)
    assert not any(findings(report, kind) for kind in KINDS)


def test_23_partition_uncleanable_with_the_exception_file_and_position(
    capsys: pytest.CaptureFixture[str],
) -> None:
    report = audit(UNCLEANABLE / "kafka-logs-after", capsys=capsys)
    (mark,) = findings(report, "partition-uncleanable")
    assert mark["severity"] == "critical" and mark["partition"] == "__consumer_offsets-1"
    assert mark["file"] == str(UNCLEANABLE / "log-cleaner.log")
    assert "Marking its partition (__consumer_offsets-1) as uncleanable" in line_at(mark)
    assert "CorruptRecordException: Log segment may be corrupt" in mark["detail"]
    p1 = partition(report, "__consumer_offsets-1")["cleaner_log"]
    assert p1["uncleanable_since"] == "2026-11-25 20:08:08.624"
    assert p1["uncleanable_exception"] is not None
    assert [u["partition"] for u in report["brokers"][0]["cleaner_log"]["uncleanable"]] == [
        "__consumer_offsets-1"
    ]


def test_the_mark_is_read_from_a_rotated_file(capsys: pytest.CaptureFixture[str]) -> None:
    """The live log-cleaner.log alone has no mark; the audit reads its rotated files too,
    found beside it or given as the live file."""
    assert "as uncleanable" not in (ROTATED / "log-cleaner.log").read_text()
    rotated = sorted(str(p) for p in ROTATED.glob("log-cleaner.log.*"))
    found = audit(ROTATED / "kafka-logs", capsys=capsys)
    given = audit(
        ROTATED / "kafka-logs", "--cleaner-log", str(ROTATED / "log-cleaner.log"), capsys=capsys
    )
    for report, how in ((found, "found beside the server log"), (given, "--cleaner-log")):
        log = report["brokers"][0]["cleaner_log"]
        assert (log["files"], log["how"]) == ([*rotated, str(ROTATED / "log-cleaner.log")], how)
        (mark,) = findings(report, "partition-uncleanable")
        assert mark["file"] == str(ROTATED / "log-cleaner.log.2026-11-25-22-11")
        assert "Marking its partition (__consumer_offsets-1) as uncleanable" in line_at(mark)
    # several FILEs are read as given, and only those: without the oldest, no mark
    some = audit(
        ROTATED / "kafka-logs",
        "--cleaner-log",
        str(ROTATED / "log-cleaner.log.2026-11-25-22-12"),
        str(ROTATED / "log-cleaner.log"),
        capsys=capsys,
    )
    assert some["brokers"][0]["cleaner_log"]["files"] == [
        str(ROTATED / "log-cleaner.log.2026-11-25-22-12"),
        str(ROTATED / "log-cleaner.log"),
    ]
    assert findings(some, "partition-uncleanable") == []


def test_23_a_throttled_cleaner_falls_behind_and_its_shutdown_marks_nothing(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """falling-behind: one thread throttled to 8 KiB/s under a heavy committer. The broker's
    SIGTERM made its last cleaning fail on the stopped scheduler and mark -2 uncleanable after
    "Shutting down the log cleaner": a mark the broker forgot a moment later, not a finding."""
    text = (FALLING_BEHIND / "log-cleaner.log").read_text()
    assert "Marking its partition (__consumer_offsets-2) as uncleanable" in text
    assert text.index("Shutting down the log cleaner") < text.index("as uncleanable")
    report = audit(FALLING_BEHIND / "kafka-logs", capsys=capsys)
    (behind,) = findings(report, "cleaner-falling-behind")
    assert behind["severity"] == "warning" and "falls behind" in behind["detail"]
    assert behind["file"] == str(FALLING_BEHIND / "log-cleaner.log")
    assert "Starting the log cleaner" in line_at(behind)
    log = report["brokers"][0]["cleaner_log"]
    assert log["keeps_up"] is False
    assert log["commit_rate"]["bytes_per_second"] > log["throughput"]["capacity_bytes_per_second"]
    assert findings(report, "partition-uncleanable") == [] and log["uncleanable"] == []


def test_times_are_read_in_the_zone_given(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    utc = audit(UNCLEANABLE / "kafka-logs-after", capsys=capsys)
    paris = audit(UNCLEANABLE / "kafka-logs-after", "--log-timezone", "Europe/Paris", capsys=capsys)

    def since(report: dict[str, Any]) -> int:
        ms: int = partition(report, "__consumer_offsets-1")["cleaner_log"]["uncleanable_since_ms"]
        return ms

    # 2026-11-25 is winter time in Paris: UTC+1
    assert since(utc) - since(paris) == 3600 * 1000
    assert (
        main(["audit", str(UNCLEANABLE / "kafka-logs-after"), "--log-timezone", "Mars/Olympus"])
        == 3
    )


def test_a_missing_cleaner_log_is_a_usage_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert (
        main(["audit", str(UNCLEANABLE / "kafka-logs-after"), "--cleaner-log", str(tmp_path / "x")])
        == 3
    )
    assert "--cleaner-log" in capsys.readouterr().err


def test_no_cleaner_log_beside_a_copy_reads_none(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    shutil.copytree(UNCLEANABLE / "kafka-logs-after", tmp_path / "kafka-logs")
    report = audit(tmp_path / "kafka-logs", capsys=capsys)
    assert report["brokers"][0]["cleaner_log"] is None
    assert all(p["cleaner_log"] is None for p in report["partitions"])
    assert report["cleanings"] == [] and not any(findings(report, kind) for kind in KINDS)


def test_an_uncleanable_partitions_growth_is_no_work_the_cleaner_falls_behind_on(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """2.3.0's cleaner never takes a partition marked uncleanable (LogCleanerManager.
    grabFilthiestCompactedLog filters it out), so the commit rate the cleaner is held to leaves
    -1 out: the rate counted was 32.6 KiB/s with it; now the partitions the cleaner takes."""
    report = audit(ROTATED / "kafka-logs", capsys=capsys)
    log = report["brokers"][0]["cleaner_log"]
    assert [m["partition"] for m in findings(report, "partition-uncleanable")] == [
        "__consumer_offsets-1"
    ]
    assert "1 partition(s) marked uncleanable left out" in log["keeping_up"]
    assert "grew by 32.6 KiB/s" not in log["keeping_up"]
