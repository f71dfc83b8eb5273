"""read_log_dir on real broker log dirs and on hand-built ones (leftovers, bad names, bad files)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from offsets_auditor.logdir.layout import DirState, parse_partition_dir_name
from offsets_auditor.logdir.model import LeftoverKind, LogDir, offsets_partitions, read_log_dir
from offsets_auditor.versions import KafkaVersion

V0901 = KafkaVersion.parse("0.9.0.1")
V230 = KafkaVersion.parse("2.3.0")


def _segments(logdir: LogDir) -> dict[str, list[int]]:
    return {p.name: [s.base_offset for s in p.segments] for p in offsets_partitions(logdir)}


# --- real broker dirs -----------------------------------------------------------------------


def test_real_0901_log_dir(cleaner_died: Path) -> None:
    logdir = read_log_dir(cleaner_died / "kafka-logs", V0901)
    assert logdir.broker_id == 0 and logdir.cluster_id is None
    assert logdir.clean_shutdown.present
    assert logdir.clean_shutdown.content is not None and logdir.clean_shutdown.content.empty
    assert logdir.cleaner_checkpoint is not None
    assert logdir.cleaner_checkpoint.offsets() == {("__consumer_offsets", 2): 0}
    assert logdir.log_start_checkpoint is None  # 0.9 has no such file
    assert _segments(logdir) == {
        "__consumer_offsets-0": [0],
        "__consumer_offsets-1": [0],
        "__consumer_offsets-2": [0, 61680],
        "__consumer_offsets-3": [0, 20000, 36320],
    }
    p2 = logdir.partition("__consumer_offsets-2")
    assert p2 is not None
    assert [(s.log.size, s.index and s.index.size) for s in p2.segments] == [
        (4194300, 8088),
        (566152, 1088),
    ]
    assert all(s.time_index is None and s.txn_index is None for s in p2.segments)
    assert len(logdir.partitions) == 7
    (long_topic,) = [p for p in logdir.partitions if p.topic.startswith("orders.")]
    assert long_topic.partition == 0 and len(long_topic.topic) > 180
    assert logdir.findings == ()


def test_real_230_log_dir(small_gzip: Path) -> None:
    logdir = read_log_dir(small_gzip / "kafka-logs", V230)
    assert logdir.broker_id == 0
    assert _segments(logdir) == {
        "__consumer_offsets-0": [0],
        "__consumer_offsets-1": [0, 980, 1469],
        "__consumer_offsets-2": [0, 967, 1448],
        "__consumer_offsets-3": [0, 967, 1448],
    }
    p2 = logdir.partition("__consumer_offsets-2")
    assert p2 is not None
    last = p2.segments[-1]
    assert last.txn_index is not None and last.txn_index.size == 34
    assert last.time_index is not None and last.time_index.size == 24
    assert [s.offset for s in p2.snapshots] == [967, 1448, 1506]
    assert p2.leader_epoch_checkpoint is not None
    assert p2.leftovers == ()
    # present but empty is not absent
    assert logdir.log_start_checkpoint is not None and logdir.log_start_checkpoint.entries == ()
    assert sum(p.topic == "__transaction_state" for p in logdir.partitions) == 50
    assert logdir.findings == ()


# --- hand-built dirs --------------------------------------------------------------------------


def _write(path: Path, data: bytes | str = b"") -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data.encode() if isinstance(data, str) else data)


def _base(root: Path) -> Path:
    logs = root / "kafka-logs"
    _write(logs / "meta.properties", "version=0\nbroker.id=7\ncluster.id=c1\n")
    _write(logs / "recovery-point-offset-checkpoint", "0\n1\n__consumer_offsets 0 5\n")
    _write(logs / "replication-offset-checkpoint", "0\n1\n__consumer_offsets 0 5\n")
    seg = logs / "__consumer_offsets-0"
    _write(seg / "00000000000000000000.log", b"x" * 10)
    _write(seg / "00000000000000000000.index")
    return logs


def test_absent_cleaner_checkpoint_is_none_and_empty_is_not(tmp_path: Path) -> None:
    logs = _base(tmp_path)
    assert read_log_dir(logs).cleaner_checkpoint is None
    _write(logs / "cleaner-offset-checkpoint", "")
    empty = read_log_dir(logs).cleaner_checkpoint
    assert empty is not None and empty.entries == () and empty.readable_by_broker


def test_missing_recovery_checkpoint_is_a_finding(tmp_path: Path) -> None:
    logs = _base(tmp_path)
    (logs / "recovery-point-offset-checkpoint").unlink()
    logdir = read_log_dir(logs)
    assert logdir.recovery_point_checkpoint is None
    assert [f.file for f in logdir.findings if f.kind == "missing-checkpoint"] == [
        "recovery-point-offset-checkpoint"
    ]


def test_malformed_checkpoint_is_a_finding(tmp_path: Path) -> None:
    logs = _base(tmp_path)
    _write(logs / "cleaner-offset-checkpoint", "0\n2\n__consumer_offsets 0 1\n")
    (finding,) = [f for f in read_log_dir(logs, V230).findings if f.kind == "malformed-checkpoint"]
    # 2.3.0 CheckpointFile.scala, with the path the broker would print
    assert finding.detail == (
        f"Expected 2 entries in checkpoint file ({logs / 'cleaner-offset-checkpoint'}), "
        "but found only 1"
    )


def test_leftovers_are_listed_apart_from_live_segments(tmp_path: Path) -> None:
    logs = _base(tmp_path)
    part = logs / "__consumer_offsets-0"
    for name in (
        "00000000000000000000.log.deleted",  # async delete pending: removed at startup
        "00000000000000000000.index.deleted",
        "00000000000000000003.log.cleaned",  # cleaner output never swapped in
        "00000000000000000003.log.swap",  # swap in progress: completed at startup
        "00000000000000000009.index",  # no 9.log: "Found an orphaned index file"
        "00000000000000000009.timeindex",
    ):
        _write(part / name, b"\0" * 8)
    p0 = read_log_dir(logs).partition("__consumer_offsets-0")
    assert p0 is not None
    assert [s.base_offset for s in p0.segments] == [0]
    assert sorted((x.file.name, x.kind) for x in p0.leftovers) == [
        ("00000000000000000000.index.deleted", LeftoverKind.DELETED),
        ("00000000000000000000.log.deleted", LeftoverKind.DELETED),
        ("00000000000000000003.log.cleaned", LeftoverKind.CLEANED),
        ("00000000000000000003.log.swap", LeftoverKind.SWAP),
        ("00000000000000000009.index", LeftoverKind.ORPHAN_INDEX),
        ("00000000000000000009.timeindex", LeftoverKind.ORPHAN_INDEX),
    ]


def test_segments_sorted_by_base_offset_not_name(tmp_path: Path) -> None:
    logs = _base(tmp_path)
    part = logs / "t-1"
    # Kafka takes the name up to the first '.' as the base offset (Log.offsetFromFileName):
    # a short name still parses, and numeric order is not string order.
    for name in ("00000000000000000100.log", "99.log", "00000000000000000005.log"):
        _write(part / name, b"y")
    p = read_log_dir(logs).partition("t-1")
    assert p is not None and [s.base_offset for s in p.segments] == [5, 99, 100]


def test_non_utf8_names_do_not_crash(tmp_path: Path) -> None:
    logs = _base(tmp_path)
    raw = os.fsencode(logs)
    fd = os.open(raw + b"/__consumer_offsets-0/caf\xe9.tmp.bak", os.O_CREAT | os.O_WRONLY, 0o644)
    os.close(fd)
    os.mkdir(raw + b"/caf\xe9-0")  # the JVM decodes this as "caf\ufffd-0" and loads it
    logdir = read_log_dir(logs)
    odd = [p for p in logdir.partitions if p.partition == 0 and p.topic.startswith("caf")]
    assert len(odd) == 1 and odd[0].name == "caf\\xe9-0"
    assert any(f.file == "caf\\xe9-0" for f in logdir.findings)
    p0 = logdir.partition("__consumer_offsets-0")
    assert p0 is not None and [f.name for f in p0.other_files] == ["caf\\xe9.tmp.bak"]
    for finding in logdir.findings:
        json.dumps(finding.to_dict())  # everything is printable


def test_partition_dir_names() -> None:
    # 2.3.0 Log.parseTopicPartitionName: last '-' splits; suffixed dirs are
    # topic-partition.uniqueId-{delete,future}; 3.x adds -stray.
    assert parse_partition_dir_name("__consumer_offsets-49") == (
        "__consumer_offsets",
        49,
        DirState.LIVE,
    )
    assert parse_partition_dir_name("a.b-c-3") == ("a.b-c", 3, DirState.LIVE)
    uid = "0123456789abcdef0123456789abcdef"
    assert parse_partition_dir_name(f"orders-2.{uid}-delete") == ("orders", 2, DirState.DELETE)
    assert parse_partition_dir_name(f"orders-2.{uid}-future") == ("orders", 2, DirState.FUTURE)
    assert parse_partition_dir_name(f"orders-2.{uid}-stray") == ("orders", 2, DirState.STRAY)
    assert parse_partition_dir_name("t" * 255 + "-0") == ("t" * 255, 0, DirState.LIVE)
    # the broker throws "... is not in the form of topic-partition ..." for these
    for bad in ("lost+found", "-0", "topic-", "topic-x", "orders-2-delete", "t-99999999999"):
        assert parse_partition_dir_name(bad) is None, bad


def test_bad_directory_is_critical(tmp_path: Path) -> None:
    logs = _base(tmp_path)
    (logs / "lost+found").mkdir()
    (finding,) = [f for f in read_log_dir(logs).findings if f.file == "lost+found"]
    assert finding.kind == "unexpected-file" and finding.severity.value == "critical"


def test_unexpected_segment_like_file(tmp_path: Path) -> None:
    logs = _base(tmp_path)
    _write(logs / "__consumer_offsets-0" / "foo.log", b"z")
    findings = [f for f in read_log_dir(logs).findings if f.kind == "unexpected-file"]
    assert [f.file for f in findings] == ["__consumer_offsets-0/foo.log"]


def test_kraft_clean_shutdown_json(tmp_path: Path) -> None:
    logs = _base(tmp_path)
    _write(logs / ".kafka_cleanshutdown", '{"version":0,"brokerEpoch":1234}')
    shutdown = read_log_dir(logs).clean_shutdown
    assert shutdown.present and shutdown.content is not None
    assert shutdown.content.broker_epoch == 1234


def test_no_clean_shutdown_marker(tmp_path: Path) -> None:
    logdir = read_log_dir(_base(tmp_path))
    assert not logdir.clean_shutdown.present and logdir.clean_shutdown.content is None
    assert logdir.broker_id == 7 and logdir.cluster_id == "c1"


def _chmod_stops_reads(tmp_path: Path) -> bool:
    """False as root (os.geteuid() == 0 with CAP_DAC_OVERRIDE reads a chmod 000 file)."""
    probe = tmp_path / "probe"
    probe.write_bytes(b"x")
    probe.chmod(0)
    try:
        probe.read_bytes()
    except PermissionError:
        return True
    finally:
        probe.chmod(0o644)
    return False


def test_unreadable_files_are_findings(tmp_path: Path) -> None:
    if not _chmod_stops_reads(tmp_path):
        pytest.skip("running as root: chmod 000 does not stop reads")
    logs = _base(tmp_path)
    index = logs / "__consumer_offsets-0" / "00000000000000000000.index"
    checkpoint = logs / "recovery-point-offset-checkpoint"
    index.chmod(0)
    checkpoint.chmod(0)
    try:
        logdir = read_log_dir(logs)
    finally:
        index.chmod(0o644)
        checkpoint.chmod(0o644)
    unreadable = {f.file for f in logdir.findings if f.kind == "unreadable-file"}
    assert unreadable == {
        "recovery-point-offset-checkpoint",
        "__consumer_offsets-0/00000000000000000000.index",
    }
    assert logdir.recovery_point_checkpoint is None


def test_missing_log_dir(tmp_path: Path) -> None:
    logdir = read_log_dir(tmp_path / "nope")
    assert logdir.partitions == () and logdir.findings[0].kind == "unreadable-file"


def test_real_0901_unclean_shutdown_dir(fixtures: Path) -> None:
    case = fixtures / "kafka-0.9.0.1" / "unclean-shutdown"
    assert (case / "README.md").exists(), f"{case} is missing: regenerate it (scripts/fixtures/)"
    crashed = read_log_dir(case / "kafka-logs", V0901)
    assert not crashed.clean_shutdown.present  # copied right after kill -9
    assert crashed.findings == ()  # .lock is a known root file
    assert _segments(crashed)["__consumer_offsets-0"] == [0, 13091]
    p0 = crashed.partition("__consumer_offsets-0")
    assert p0 is not None
    # the cleaner's replaced originals, scheduled for deletion just before the kill
    assert [(x.file.name, x.kind) for x in p0.leftovers] == [
        ("00000000000000000000.index.deleted", LeftoverKind.DELETED),
        ("00000000000000000000.log.deleted", LeftoverKind.DELETED),
    ]
    active = p0.segments[-1]
    assert active.index is not None and active.index.size == 10485760  # preallocated
    assert crashed.recovery_point_checkpoint is not None
    assert crashed.recovery_point_checkpoint.offsets()[("__consumer_offsets", 0)] == 13091
    # after the restart (recovery) and a clean shutdown, Log.loadSegments removed the .deleted
    # files and close() trimmed the index
    after = read_log_dir(case / "kafka-logs-after", V0901)
    assert after.clean_shutdown.present
    p0_after = after.partition("__consumer_offsets-0")
    assert p0_after is not None and p0_after.leftovers == ()
    last = p0_after.segments[-1]
    assert last.index is not None and last.index.size < 10485760
