"""Acceptance: without --kafka-version every real-broker log dir gets the verdicts of the
version that wrote it, with and without the broker's own server log; a version its files
exclude is a version-mismatch."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from offsets_auditor.cli.main import main

FIXTURES = Path(__file__).parent.parent / "fixtures"
NOW = "1800000000000"
LOG_DIRS = sorted(FIXTURES.glob("kafka-*/*/kafka-logs*"))


def audit(log_dir: Path, capsys: pytest.CaptureFixture[str], *extra: str) -> dict:
    config = log_dir.parent / "broker-server.properties"
    status = main(
        [
            "audit",
            str(log_dir),
            "--broker-config",
            str(config),
            "--json",
            "--no-groups",
            "--now",
            NOW,
            *extra,
        ]
    )
    report = json.loads(capsys.readouterr().out)
    assert status == report["exit_status"]
    return report


def verdicts(report: dict) -> dict[str, dict]:
    """Each partition as reported, but for the alternatives (only a range has those)."""
    found = {}
    for p in report["partitions"]:
        cleaner = {k: v for k, v in p["cleaner"].items() if k != "alternatives"}
        found[p["name"]] = {**p, "cleaner": cleaner}
    return found


def cleaner_findings(report: dict) -> list[tuple[str, str, str | None]]:
    return [
        (f["kind"], f["severity"], f["partition"])
        for f in report["findings"]
        if f["kind"].startswith("cleaner-") and f["kind"] != "cleaner-verdict-depends-on-version"
    ]


@pytest.mark.parametrize("with_server_log", [False, True], ids=["disk", "disk+server.log"])
@pytest.mark.parametrize("log_dir", LOG_DIRS, ids=lambda p: str(p.relative_to(FIXTURES)))
def test_detected_version_gives_the_true_versions_verdicts(
    log_dir: Path, with_server_log: bool, capsys: pytest.CaptureFixture[str]
) -> None:
    version = log_dir.parent.parent.name.removeprefix("kafka-")
    extra = ("--server-log", str(log_dir.parent / "server.log")) if with_server_log else ()
    if with_server_log and not (log_dir.parent / "server.log").exists():
        extra = ("--server-log", str(sorted(log_dir.parent.glob("server*.log"))[-1]))
    detected = audit(log_dir, capsys, *extra)
    told = audit(log_dir, capsys, "--kafka-version", version, *extra)
    assert verdicts(detected) == verdicts(told)
    assert cleaner_findings(detected) == cleaner_findings(told)
    assert not [f for f in detected["findings"] if f["kind"].startswith("version-")]
    low, high = detected["kafka_version"]["range"]
    assert detected["kafka_version"]["given"] is None
    # the range's lowest version, but 0.9.0.1 over 0.9.0.0 (cleaner off by default; rule 3)
    assert detected["kafka_version"]["used"] == ("0.9.0.1" if low == "0.9.0.0" else low)
    assert told["kafka_version"]["used"] == version and told["kafka_version"]["given"] == version
    if version == "2.3.0" and with_server_log:
        assert (low, high) == ("2.3.0", "2.3.0")


def test_the_0_9_sample_is_no_longer_healthy_without_flags(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Issue 7: `audit cleaner-died/kafka-logs` reported healthy single passes (as 3.9.0)."""
    report = audit(FIXTURES / "kafka-0.9.0.1" / "cleaner-died" / "kafka-logs", capsys)
    outcomes = {p["name"]: p["cleaner"]["outcome"] for p in report["partitions"]}
    assert outcomes["__consumer_offsets-2"] == "thread-death"
    assert outcomes["__consumer_offsets-3"] == "blocked"
    assert report["exit_status"] == 2
    # 0.10.0.x (also allowed by the files) maps per key and would clean both: said, not guessed
    p2 = next(p for p in report["partitions"] if p["name"] == "__consumer_offsets-2")
    assert [(a["kafka_versions"], a["outcome"]) for a in p2["cleaner"]["alternatives"]] == [
        (["0.9.0.0", "0.9.0.1"], "thread-death"),
        (["0.10.0.0", "0.10.0.1"], "single-pass"),
    ]
    assert report["kafka_version"]["emulated"] == ["0.9.0.0", "0.9.0.1", "0.10.0.0"]


@pytest.mark.parametrize("with_server_log", [False, True])
def test_a_version_the_files_exclude_is_a_mismatch(
    with_server_log: bool, capsys: pytest.CaptureFixture[str]
) -> None:
    fixture = FIXTURES / "kafka-0.9.0.1" / "cleaner-died"
    extra = ("--server-log", str(fixture / "server.log")) if with_server_log else ()
    report = audit(fixture / "kafka-logs", capsys, "--kafka-version", "3.9.0", *extra)
    (mismatch,) = [f for f in report["findings"] if f["kind"] == "version-mismatch"]
    assert mismatch["severity"] == "warning"
    assert "no .timeindex file in any partition" in mismatch["detail"]
    assert report["kafka_version"]["used"] == "3.9.0"
    assert report["kafka_version"]["range"] == ["0.9.0.0", "0.10.0.1"]


def test_groups_and_restart_progress_detect_too(capsys: pytest.CaptureFixture[str]) -> None:
    fixture = FIXTURES / "kafka-2.3.0" / "unclean-shutdown"
    main(["groups", str(fixture / "kafka-logs"), "--json"])
    listing = json.loads(capsys.readouterr().out.splitlines()[0])
    assert listing["kafka_version"]["range"] == ["2.1.0", "2.3.1"]
    main(
        ["groups", str(fixture / "kafka-logs"), "--json", "--server-log",
         str(fixture / "server-restart.log")]
    )  # fmt: skip
    listing = json.loads(capsys.readouterr().out.splitlines()[0])
    assert listing["kafka_version"]["used"] == "2.3.0"
    main(["groups", str(FIXTURES / "kafka-0.9.0.1" / "cleaner-died" / "kafka-logs"),
          "--kafka-version", "3.9.0"])  # fmt: skip
    assert "warning: version-mismatch" in capsys.readouterr().out
    main(
        ["restart-progress", "--server-log", str(fixture / "server-restart.log"), "--json",
         str(fixture / "kafka-logs-after")]
    )  # fmt: skip
    progress = json.loads(capsys.readouterr().out)
    assert progress["kafka_version"] == "2.3.0 (detected)"
    assert progress["kafka_version_detection"]["range"] == ["2.3.0", "2.3.0"]


def test_what_the_emulation_leaves_out_is_named(capsys: pytest.CaptureFixture[str]) -> None:
    """KIP-534 (3.1.0) is read by no rule (tests/version_detection/test_spans.py): the report
    names it wherever the verdict speaks for 3.1.0 or later, and only there."""
    log_dir = FIXTURES / "kafka-2.3.0" / "multi-pass" / "kafka-logs"
    assert audit(log_dir, capsys)["kafka_version"]["not_emulated"] == []
    assert audit(log_dir, capsys, "--kafka-version", "3.0.0")["kafka_version"]["not_emulated"] == []
    newer = audit(log_dir, capsys, "--kafka-version", "3.9.0")["kafka_version"]["not_emulated"]
    assert [(f["fact"], f["since"]) for f in newer] == [("v2_batch_delete_horizon", "3.1.0")]
    main(["audit", str(log_dir), "--kafka-version", "3.9.0"])
    assert "\n  not emulated, from 3.1.0: tombstones and markers" in capsys.readouterr().out
