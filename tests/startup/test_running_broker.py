"""A running broker is not an unclean shutdown; a killed one is, with the numbers its restart
then shows. On a real Kafka 2.3.0 broker's log dir (``tests/fixtures/kafka-2.3.0/running-broker``,
``scripts/fixtures/k23_generate.sh running-broker``): ``live/`` copied while it ran under commit
load, ``killed/`` copied after its ``kill -9``, with the restart's own ``server.log``.

A copy's ``.lock`` is held by no one; here another process takes it as the broker's JVM does
(``fcntl(F_SETLK)``, a write lock over the whole file) to make the copy what the running broker's
dir was: the kernel's lock is the only thing a copy cannot carry.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

from offsets_auditor.audit.plan import AuditSettings, plan_audit
from offsets_auditor.audit.report import report_json
from offsets_auditor.audit.rows import CORRUPT_INDEX_VERDICTS
from offsets_auditor.audit.stages import audit_log_dir
from offsets_auditor.logdir import fs
from offsets_auditor.logdir.meta_properties import parse_java_properties
from offsets_auditor.restart.progress import fold_lines
from offsets_auditor.versions import KafkaVersion
from tests.logdir.test_liveness import held

FIXTURE = Path(__file__).parent.parent / "fixtures" / "kafka-2.3.0" / "running-broker"
PROPERTIES = tuple(
    parse_java_properties((FIXTURE / "broker-server.properties").read_text(encoding="utf-8"))
)
NOW_MS = 1_800_000_000_000


def audit(log_dir: Path, version: str | None = None) -> dict[str, Any]:
    given = None if version is None else KafkaVersion.parse(version)
    settings = AuditSettings(properties=PROPERTIES, kafka_version=given, with_groups=False)
    plan = plan_audit([log_dir], settings, NOW_MS)
    return report_json(
        [audit_log_dir(log_dir, plan)],
        detection=plan.detection,
        emulated=plan.emulated_versions,
    )


def copy(which: str, tmp_path: Path, *, server_log: bool = True) -> Path:
    """``live/`` or ``killed/`` copied (its server.log beside it, or not)."""
    shutil.copytree(FIXTURE / which / "kafka-logs", tmp_path / "kafka-logs", symlinks=True)
    if server_log:
        shutil.copy(FIXTURE / which / "server.log", tmp_path / "server.log")
    return tmp_path / "kafka-logs"


def kinds(report: dict[str, Any]) -> list[str]:
    return [f["kind"] for f in report["findings"]]


def corrupt_files(report: dict[str, Any]) -> int:
    """What the service alerts on (``OffsetsCorruptIndexes``: the brokers row's
    ``corrupt_index_files``, ``audit.rows.broker_row``)."""
    return sum(1 for x in report["indexes"] if x["verdict"] in CORRUPT_INDEX_VERDICTS)


def active_indexes(report: dict[str, Any]) -> list[dict[str, Any]]:
    latest: dict[str, int] = {}
    for x in report["indexes"]:
        latest[x["partition"]] = max(latest.get(x["partition"], -1), x["base_offset"])
    return [
        x
        for x in report["indexes"]
        if x["base_offset"] == latest[x["partition"]] and x["kind"] in ("offset", "time")
    ]


def test_the_running_broker_is_running_and_has_nothing_to_rebuild(tmp_path: Path) -> None:
    log_dir = copy("live", tmp_path)
    with held(log_dir / ".lock") as broker:
        report = audit(log_dir)
    version = report["kafka_version"]
    assert (version["range"], version["server_log"]) == (
        ["2.3.0", "2.3.0"],
        {"file": str(tmp_path / "server.log"), "how": "found beside the log dir"},
    )
    (b,) = report["brokers"]
    assert b["broker_state"]["state"] == "running"
    assert f"process {broker.pid} holds a write lock on .lock" in b["broker_state"]["evidence"]
    assert b["clean_shutdown"] is None  # no OffsetsCorruptIndexes{reason="unclean-shutdown"}
    assert "unclean-shutdown" not in kinds(report)
    assert "corrupt-index" not in kinds(report)
    assert corrupt_files(report) == 0
    (running,) = [f for f in report["findings"] if f["kind"] == "broker-running"]
    assert running["severity"] == "info"
    assert f"process {broker.pid}" in running["detail"]
    # after a clean stop nothing is re-read; were it killed now, every unflushed segment
    assert b["recovery"]["segments_to_recover"] == 0
    assert b["recovery"]["if_crashed"]["segments_to_recover"] > 0


def test_preallocated_active_indexes_are_what_a_running_broker_has(tmp_path: Path) -> None:
    """Judged as Kafka 2.1.0 (which checks every index at load, and calls a killed broker's
    preallocated time index corrupt): while the broker runs, its active segments' indexes are
    preallocated, and trimmed at a clean shutdown to entries that pass."""
    log_dir = copy("live", tmp_path)
    with held(log_dir / ".lock"):
        running = audit(log_dir, "2.1.0")
    stopped = audit(log_dir, "2.1.0")  # the same bytes, no one holding the lock
    preallocated = [x for x in active_indexes(running) if "preallocated (" in x["reason"]]
    assert len(preallocated) >= 9  # every active .index and .timeindex with a zero tail
    assert {x["verdict"] for x in active_indexes(running)} == {"ok"}
    assert corrupt_files(running) == 0
    # the same files, were the broker dead: what the issue saw as a false alarm on a live one
    timeindexes = [x for x in active_indexes(stopped) if x["kind"] == "time"]
    corrupt = [x for x in timeindexes if x["verdict"] == "corrupt"]
    assert corrupt and corrupt_files(stopped) == len(corrupt)
    assert all("last timestamp is 0" in x["reason"] for x in corrupt)


def test_a_running_broker_needs_no_version_to_be_told_healthy(tmp_path: Path) -> None:
    """Without its server.log the files allow 2.1.0 to 2.3.1; running, every version of that
    range agrees that nothing is to rebuild."""
    log_dir = copy("live", tmp_path, server_log=False)
    with held(log_dir / ".lock"):
        report = audit(log_dir)
    assert report["kafka_version"]["range"] == ["2.1.0", "2.3.1"]
    assert report["kafka_version"]["server_log"] is None
    assert not {"corrupt-index", "unclean-shutdown", "startup-depends-on-version"} & set(
        kinds(report)
    )
    assert corrupt_files(report) == 0
    # were it killed now, how much the next start re-reads does depend on the version
    crashed = report["brokers"][0]["recovery"]["if_crashed"]
    by_version = {tuple(d["kafka_versions"]): d for d in crashed["depends_on_version"]}
    assert set(by_version) == {("2.1.0", "2.2.2"), ("2.3.0", "2.3.1")}
    least = by_version[("2.3.0", "2.3.1")]["segments_to_recover"]
    assert crashed["segments_to_recover"] == least
    assert by_version[("2.1.0", "2.2.2")]["segments_to_recover"] > least
    (running,) = [f for f in report["findings"] if f["kind"] == "broker-running"]
    assert (
        f"if it crashed now (kill -9, an OOM kill, a power loss), at least {least:,}"
        in (running["detail"])
    )


def broker_restart(which: str = "killed") -> Any:
    """What the real broker's restart after the kill did, from its own server.log."""
    lines = fs.iter_lines(FIXTURE / which / "server.log")
    return fold_lines(lines, kafka_version="2.3.0")


def test_after_kill_9_the_numbers_are_the_restarts(tmp_path: Path) -> None:
    log_dir = copy("killed", tmp_path)
    report = audit(log_dir)
    assert report["kafka_version"]["range"] == ["2.3.0", "2.3.0"]  # from the restart's log
    (b,) = report["brokers"]
    assert b["broker_state"]["state"] == "stopped"
    assert b["clean_shutdown"] is False
    restart = broker_restart()
    recovery = b["recovery"]
    assert recovery["segments_to_recover"] == restart.segments_recovered > 0
    assert corrupt_files(report) == restart.index_files_rebuilt == 0
    (unclean,) = [f for f in report["findings"] if f["kind"] == "unclean-shutdown"]
    assert "no process holds a lock on .lock" in unclean["detail"]
    assert f"re-reads {restart.segments_recovered:,} segments" in unclean["detail"]


def test_after_kill_9_without_a_version_only_what_the_range_agrees_on(tmp_path: Path) -> None:
    """No server.log: 2.1.0 to 2.3.1. 2.1.0-2.2.x would call the active time indexes corrupt
    and read their segments twice, 2.3.x checks none: the corrupt files are said to depend on
    the version (info, not counted), the restart's numbers as at least 2.3.x's, with each."""
    log_dir = copy("killed", tmp_path, server_log=False)
    report = audit(log_dir)
    assert report["kafka_version"]["range"] == ["2.1.0", "2.3.1"]
    restart = broker_restart()
    recovery = report["brokers"][0]["recovery"]
    assert recovery["segments_to_recover"] == restart.segments_recovered
    by_version = {tuple(d["kafka_versions"]): d for d in recovery["depends_on_version"]}
    assert by_version[("2.3.0", "2.3.1")]["segments_to_recover"] == restart.segments_recovered
    assert by_version[("2.1.0", "2.2.2")]["segments_to_recover"] > restart.segments_recovered
    assert "corrupt-index" not in kinds(report)
    assert corrupt_files(report) == 0
    depends = [f for f in report["findings"] if f["kind"] == "startup-depends-on-version"]
    assert depends and {f["severity"] for f in depends} == {"info"}
    assert all("Kafka 2.1.0 to 2.2.2: corrupt" in f["detail"] for f in depends)
    assert all("Kafka 2.3.0 to 2.3.1: not-checked" in f["detail"] for f in depends)
    (unclean,) = [f for f in report["findings"] if f["kind"] == "unclean-shutdown"]
    assert f"at least {restart.segments_recovered:,} segments" in unclean["detail"]


@pytest.mark.parametrize("which", ["live", "killed"])
def test_the_fixture_is_the_broker_s_own(which: str) -> None:
    """The copies keep what the broker left: its .lock, no clean-shutdown marker."""
    log_dir = FIXTURE / which / "kafka-logs"
    assert (log_dir / ".lock").is_file()
    assert not (log_dir / ".kafka_cleanshutdown").exists()
    assert "Kafka version: 2.3.0" in (FIXTURE / which / "server.log").read_text(encoding="utf-8")
