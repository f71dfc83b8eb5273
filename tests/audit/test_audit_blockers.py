"""Each other known cause of a non-compacting or costly partition, demonstrated: on real broker
data where a real broker could produce it, on data built with an independent encoder
(kafka-python) where it could not (a segment spanning more than Int.MaxValue offsets would take
two billion real commits)."""

from __future__ import annotations

import json
import struct
from pathlib import Path

import pytest
from kafka.record.default_records import DefaultRecordBatchBuilder

from offsets_auditor.cli.main import main

FIXTURES = Path(__file__).parent.parent / "fixtures"
K23 = FIXTURES / "kafka-2.3.0"


def audit(log_dir: Path, version: str, capsys: pytest.CaptureFixture[str], *extra: str) -> dict:
    main(["audit", str(log_dir), "--kafka-version", version, "--json", *extra])
    return json.loads(capsys.readouterr().out)


def kinds(report: dict) -> dict[str, list[dict]]:
    found: dict[str, list[dict]] = {}
    for finding in report["findings"]:
        found.setdefault(finding["kind"], []).append(finding)
    return found


def test_hanging_transaction_on_real_data(capsys: pytest.CaptureFixture[str]) -> None:
    """2.3.0 `transactions`: producer 2 (ledger-tx) was killed inside a transaction whose first
    record is offset 1605 (Kafka's own dump, README); the broker cleaned only [0, 1101)."""
    fixture = K23 / "transactions"
    report = audit(
        fixture / "kafka-logs",
        "2.3.0",
        capsys,
        "--broker-config",
        str(fixture / "broker-server.properties"),
    )
    hanging = kinds(report)["hanging-transaction"]
    assert len(hanging) == 1
    assert hanging[0]["severity"] == "critical"
    assert "producer 2" in hanging[0]["detail"] and "offset 1605" in hanging[0]["detail"]
    p2 = next(p for p in report["partitions"] if p["name"] == "__consumer_offsets-2")
    assert p2["uncleanable_because"] == "open transaction"
    assert p2["first_uncleanable_offset"] == 1605
    assert "open transaction" in p2["cleaner"]["reason"]


def test_cleaner_disabled_on_real_data(capsys: pytest.CaptureFixture[str]) -> None:
    """2.3.0 `multi-pass` was loaded with log.cleaner.enable=false (broker-server-load.properties):
    with that config nothing ever compacts."""
    fixture = K23 / "multi-pass"
    report = audit(
        fixture / "kafka-logs",
        "2.3.0",
        capsys,
        "--broker-config",
        str(fixture / "broker-server-load.properties"),
    )
    assert "cleaner-disabled" in kinds(report)
    p1 = next(p for p in report["partitions"] if p["name"] == "__consumer_offsets-1")
    assert p1["cleaner"]["outcome"] == "blocked"
    assert report["exit_status"] == 2


def test_partition_count_mismatch(capsys: pytest.CaptureFixture[str]) -> None:
    """Four offsets partition dirs but offsets.topic.num.partitions=50 (the default)."""
    fixture = K23 / "compaction-none"
    report = audit(
        fixture / "kafka-logs",
        "2.3.0",
        capsys,
        "--broker-config",
        str(fixture / "broker-server.properties"),
        "--set",
        "offsets.topic.num.partitions=50",
        "--no-groups",
    )
    assert "offsets-partition-count-mismatch" in kinds(report)


def test_top_writers_and_skew_on_real_data(capsys: pytest.CaptureFixture[str]) -> None:
    """0.9.0.1 `two-threads`: group g1 wrote ~70,000 commits into __consumer_offsets-2."""
    fixture = FIXTURES / "kafka-0.9.0.1" / "two-threads"
    report = audit(
        fixture / "kafka-logs",
        "0.9.0.1",
        capsys,
        "--broker-config",
        str(fixture / "broker-server.properties"),
    )
    p2 = next(p for p in report["partitions"] if p["name"] == "__consumer_offsets-2")
    top = p2["top_writers"][0]
    assert top["group"] == "g1"
    assert top["share"] > 0.99
    assert top["records"] == p2["records"] - sum(w["records"] for w in p2["top_writers"][1:])
    assert top["commits_per_second"] is not None and top["commits_per_second"] > 0
    skewed = {f["partition"] for f in kinds(report).get("partition-skew", [])}
    assert (
        "__consumer_offsets-2" in skewed
        or p2["size_bytes"]
        < 10 * sorted(p["size_bytes"] for p in report["partitions"])[len(report["partitions"]) // 2]
    )


@pytest.mark.parametrize(
    "name", ["compaction-none", "compaction-lz4", "transactions", "multi-pass"]
)
def test_floor_is_what_the_broker_left(name: str, capsys: pytest.CaptureFixture[str]) -> None:
    """The irreducible floor (size once every pass has run) equals the partition's real size in
    `kafka-logs-after`, wherever the broker wrote nothing new during the cleaning run."""
    fixture = K23 / name
    report = audit(
        fixture / "kafka-logs",
        "2.3.0",
        capsys,
        "--broker-config",
        str(fixture / "broker-server.properties"),
        "--no-groups",
    )
    compared = 0
    for p in report["partitions"]:
        before = fixture / "kafka-logs" / p["name"]
        after = fixture / "kafka-logs-after" / p["name"]
        active_before = max(before.glob("*.log")).stat().st_size
        active_after = max(after.glob("*.log")).stat().st_size
        if active_before != active_after:
            continue  # the broker appended during the run (e.g. a group's members timing out)
        real = sum(f.stat().st_size for f in after.glob("*.log"))
        assert p["space"]["floor_bytes"] == real, p["name"]
        assert p["space"]["reclaimable_bytes"] == p["size_bytes"] - real
        compared += 1
    assert compared


def _offset_commit(i: int) -> tuple[bytes, bytes]:
    key = struct.pack(">hh", 1, 1) + b"g" + struct.pack(">h", 1) + b"t" + struct.pack(">i", i)
    value = (
        struct.pack(">hqi", 3, i, -1) + struct.pack(">h", 0) + struct.pack(">q", 1_700_000_000_000)
    )
    return key, value


def _batch(base_offset: int, count: int) -> bytes:
    builder = DefaultRecordBatchBuilder(
        magic=2,
        compression_type=0,
        is_transactional=0,
        producer_id=-1,
        producer_epoch=-1,
        base_sequence=-1,
        batch_size=1 << 20,
    )
    for i in range(count):
        key, value = _offset_commit(i)
        builder.append(i, timestamp=1_700_000_000_000, key=key, value=value, headers=[])
    data = bytearray(builder.build())
    struct.pack_into(">q", data, 0, base_offset)
    return bytes(data)


@pytest.mark.parametrize(("version", "severity"), [("1.1.0", "critical"), ("2.3.0", "warning")])
def test_segment_spanning_more_than_a_relative_index_can_hold(
    tmp_path: Path, version: str, severity: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """KAFKA-5413/KAFKA-6264, on a segment built with kafka-python: offsets 0..1 and then
    3,000,000,000..3,000,000,001 in one segment (what compaction of a huge log can leave)."""
    log_dir = tmp_path / "kafka-logs"
    partition = log_dir / "__consumer_offsets-0"
    partition.mkdir(parents=True)
    (log_dir / "meta.properties").write_text("version=0\nbroker.id=7\n")
    big = 3_000_000_000
    (partition / f"{0:020d}.log").write_bytes(_batch(0, 2) + _batch(big, 2))
    (partition / f"{big + 2:020d}.log").write_bytes(_batch(big + 2, 1))
    report = audit(log_dir, version, capsys, "--no-groups")
    overflow = kinds(report)["segment-offset-overflow"]
    assert [f["file"] for f in overflow] == [f"__consumer_offsets-0/{0:020d}.log"]
    assert overflow[0]["severity"] == severity
