"""The benchmark cluster (``benchmarks/cluster.py``) at a tiny scale is what brokers write: the
auditor reads every broker's log dir without a damage finding, recovers exactly the groups and
offsets the generator committed, each group in the partition ``partitionFor`` gives it, and
Kafka's own index checks (the versions that still ran them) pass; kafka-python reads the
segments; replicas are the same files; the same seed gives the same bytes."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from kafka.record.memory_records import MemoryRecords

from benchmarks.cluster import TOPIC, ClusterSpec, generate_cluster, log_dir
from offsets_auditor.logdir.meta_properties import parse_meta_properties

SCALE = 0.001  # 1,000 groups, 105 KB segments, a 2.1 MB hot partition: ~6 MB per broker


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any]]:
    root = tmp_path_factory.mktemp("cluster") / "c"
    return root, generate_cluster(root, ClusterSpec(scale=SCALE), jobs=1)


def audit(broker: dict[str, Any], now_ms: int, *extra: str) -> dict[str, Any]:
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "offsets_auditor.cli.main",
            "audit",
            broker["log_dir"],
            "--broker-config",
            broker["server_properties"],
            "--now",
            str(now_ms),
            "--json",
            *extra,
        ],
        capture_output=True,
        text=True,
    )
    assert out.returncode in (0, 1), out.stderr  # 1: warnings (the hot partition's skew)
    report: dict[str, Any] = json.loads(out.stdout)
    return report


def test_the_shape(cluster: tuple[Path, dict[str, Any]]) -> None:
    root, manifest = cluster
    spec = manifest["spec"]
    assert spec["groups"] == 1000 and len(manifest["brokers"]) == 3
    hot = manifest["partitions"][manifest["hot_partition"]]
    assert hot["segments"] == 21  # 2 GiB in 100 MiB segments, scaled: 20 rolled + the active
    assert spec["hot_bytes"] <= hot["bytes"] < spec["hot_bytes"] + spec["segment_bytes"]
    assert hot["cleaner_checkpoint"] is None
    for p in manifest["partitions"]:
        assert len(p["replicas"]) == 3
        if not p["hot"]:
            assert p["segments"] == 2 and p["cleaner_checkpoint"] == p["active_base_offset"]
    for partition in (log_dir(root, 1) / f"{TOPIC}-{manifest['hot_partition']}").glob("*.log"):
        assert partition.stat().st_size <= spec["segment_bytes"]


@pytest.mark.slow
def test_audit_reads_every_broker_without_damage(cluster: tuple[Path, dict[str, Any]]) -> None:
    _, manifest = cluster
    for broker in manifest["brokers"]:
        report = audit(broker, manifest["now_ms"])
        kinds = {f["kind"] for f in report["findings"]}
        assert kinds == {"partition-skew"}, report["findings"]  # no damage, no misplaced group
        (skew,) = report["findings"]
        assert f"{TOPIC}-{manifest['hot_partition']}" in skew["detail"]
        assert report["kafka_version"]["range"][0] == "2.4.0"  # cluster.id: 2.4.0 or later
        partitions = report["partitions"]
        assert len(partitions) == 50
        assert sum(p["size_bytes"] for p in partitions) == broker["bytes"]
        groups = report["groups"]
        assert len(groups) == manifest["groups"]  # every group committed at least once
        live = [g for g in groups if g["offsets"]]
        assert len(live) == broker["live_groups"]
        assert sum(len(g["offsets"]) for g in groups) == broker["live_offsets"]
        assert all(g["coordinator_partition"] == g["expected_partition"] for g in groups)


@pytest.mark.slow
def test_indexes_pass_the_checks_of_brokers_that_ran_them(
    cluster: tuple[Path, dict[str, Any]],
) -> None:
    """2.3.0+ skips the offset and time index checks at load; 2.2.0 and 0.10.1.0 ran them."""
    _, manifest = cluster
    broker = manifest["brokers"][0]
    segments = sum(p["segments"] for p in manifest["partitions"])
    for version in ("2.2.0", "0.10.1.0"):
        report = audit(broker, manifest["now_ms"], "--kafka-version", version)
        verdicts = [(i["kind"], i["verdict"]) for i in report["indexes"]]
        assert sorted(verdicts) == sorted([("offset", "ok"), ("time", "ok")] * segments)


def test_replicas_are_the_same_files_on_three_brokers(
    cluster: tuple[Path, dict[str, Any]],
) -> None:
    root, manifest = cluster
    ids = []
    clusters = set()
    for broker in manifest["brokers"]:
        meta = parse_meta_properties((Path(broker["log_dir"]) / "meta.properties").read_bytes())
        ids.append(meta.broker_id)
        clusters.add(meta.cluster_id)
    assert ids == [1, 2, 3] and clusters == {manifest["cluster_id"]}
    name = f"{TOPIC}-{manifest['hot_partition']}"
    inodes = {
        tuple(sorted((f.name, f.stat().st_ino) for f in (log_dir(root, b) / name).iterdir()))
        for b in (1, 2, 3)
    }
    assert len(inodes) == 1


def test_kafka_python_reads_the_hot_partition(cluster: tuple[Path, dict[str, Any]]) -> None:
    root, manifest = cluster
    directory = log_dir(root, 1) / f"{TOPIC}-{manifest['hot_partition']}"
    expected = 0
    for path in sorted(directory.glob("*.log")):
        data = path.read_bytes()
        assert int(path.stem) == expected
        records = MemoryRecords(data)
        while (batch := records.next_batch()) is not None:
            assert batch.magic == 2 and batch.validate_crc()
            for record in batch:
                assert record.offset == expected
                expected += 1
        assert records.valid_bytes() == len(data)
    assert expected == manifest["partitions"][manifest["hot_partition"]]["log_end_offset"]


def test_same_seed_same_bytes(tmp_path: Path) -> None:
    digests = []
    for name, jobs in (("a", 1), ("b", 2)):
        root = tmp_path / name
        generate_cluster(root, ClusterSpec(scale=0.0002), jobs=jobs)
        digests.append(
            {
                str(f.relative_to(root)): hashlib.sha256(f.read_bytes()).hexdigest()
                for f in sorted(root.rglob("*"))
                if f.is_file() and f.name != "cluster.json"
            }
        )
    assert digests[0] == digests[1] and len(digests[0]) > 300


def test_measure_sees_the_peak_of_a_process_and_its_children() -> None:
    """``benchmarks/measure.py``, which the scan benchmark's memory numbers come from."""
    from benchmarks.measure import run

    child = "import time; x = bytearray(96 << 20); x[::4096] = b'1' * len(x[::4096]); time.sleep(1)"
    parent = f"import subprocess, sys; subprocess.run([sys.executable, '-c', {child!r}])"
    measured = run([sys.executable, "-c", parent], interval=0.05)
    assert measured.returncode == 0
    roles = sorted(role for role, _ in measured.peaks.values())
    assert roles == ["driver", "other"]
    assert measured.peak("other") >= 96 << 20 > measured.peak("driver")
    assert measured.cpu_seconds > 0
