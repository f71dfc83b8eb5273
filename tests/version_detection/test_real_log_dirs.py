"""Version detection on every log dir a real broker wrote (tests/fixtures): the range holds
the broker's true version, and is as narrow as its files allow."""

from __future__ import annotations

from pathlib import Path

import pytest

from offsets_auditor.version_detection import detect_version
from offsets_auditor.versions import KafkaVersion

FIXTURES = Path(__file__).parent.parent / "fixtures"
LOG_DIRS = sorted(FIXTURES.glob("kafka-*/*/kafka-logs*"))
#: 2.3.0 log dirs whose __consumer_offsets hold no group metadata record (standalone or
#: transactional consumers only): OffsetCommitValue v3 says 2.1+, nothing says 2.3.
WITHOUT_GROUP_METADATA = {
    "multi-pass",
    "transactions",
    "unclean-shutdown",
    "corrupt-segments",
    "uncleanable",
    "falling-behind",
    "rotated-cleaner-log",
}


def true_version(log_dir: Path) -> str:
    return log_dir.parent.parent.name.removeprefix("kafka-")


@pytest.mark.parametrize("log_dir", LOG_DIRS, ids=lambda p: str(p.relative_to(FIXTURES)))
def test_range_holds_the_true_version(log_dir: Path) -> None:
    detection = detect_version([log_dir])
    version = true_version(log_dir)
    assert detection.range.contains(KafkaVersion.parse(version))
    assert not detection.set_aside
    if version == "0.9.0.1":
        # key v1 (0.9.0.0+); no .timeindex (< 0.10.1); no log-start-offset-checkpoint (< 0.11)
        expected = ["0.9.0.0", "0.10.0.1"]
    elif log_dir.parent.name in WITHOUT_GROUP_METADATA:
        # OffsetCommitValue v3 (2.1.0+); meta.properties without cluster.id (< 2.4.0)
        expected = ["2.1.0", "2.3.1"]
    else:
        expected = ["2.3.0", "2.3.1"]  # GroupMetadataValue v3 (2.3.0+)
    assert detection.range.to_json() == expected
    # the range's lowest, but 0.9.0.1 for 0.9.0.0 (whose cleaner is off by default)
    assert str(detection.used) == ("0.9.0.1" if expected[0] == "0.9.0.0" else expected[0])


@pytest.mark.parametrize("log_dir", LOG_DIRS, ids=lambda p: str(p.relative_to(FIXTURES)))
def test_server_log_pins_the_version_when_it_prints_it(log_dir: Path) -> None:
    fixture = log_dir.parent
    logs = sorted(fixture.glob("server*.log"))
    assert logs
    for server_log in logs:
        detection = detect_version([log_dir], server_log)
        if true_version(log_dir) == "2.3.0":
            assert detection.range.to_json() == ["2.3.0", "2.3.0"]
            assert detection.evidence[0].file == str(server_log)
        else:
            # 0.9's default log4j config sends AppInfoParser's line to stdout, not server.log
            assert not any("Kafka version" in line for line in server_log.open(errors="replace"))
            assert detection.range == detect_version([log_dir]).range


def test_a_version_the_files_exclude_is_a_mismatch() -> None:
    log_dir = FIXTURES / "kafka-0.9.0.1" / "cleaner-died" / "kafka-logs"
    detection = detect_version([log_dir], given=KafkaVersion.parse("3.9.0"))
    assert str(detection.used) == "3.9.0"
    (finding,) = detection.findings()
    assert finding.kind == "version-mismatch" and finding.severity.value == "warning"
    assert "no .timeindex file in any partition" in finding.detail
    assert "means Kafka < 0.10.1.0" in finding.detail
    assert detect_version([log_dir], given=KafkaVersion.parse("0.9.0.1")).findings() == []


def test_a_server_log_of_another_broker_is_stronger_but_reported(tmp_path: Path) -> None:
    server_log = tmp_path / "server.log"
    server_log.write_text(
        "[2026-11-21 09:15:06,116] INFO Kafka version: 2.3.0"
        " (org.apache.kafka.common.utils.AppInfoParser)\n"
    )
    log_dir = FIXTURES / "kafka-0.9.0.1" / "cleaner-died" / "kafka-logs"
    detection = detect_version([log_dir], server_log)
    assert detection.range.to_json() == ["2.3.0", "2.3.0"]
    kinds = {f.kind for f in detection.findings()}
    assert kinds == {"version-evidence-conflict"}
    assert {e.implies for e in detection.set_aside} == {"< 0.10.1.0", "< 0.11.0.0"}
