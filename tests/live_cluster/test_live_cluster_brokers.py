"""The live-cluster client against REAL clusters (opt-in: OFFSETS_AUDITOR_BROKER_TESTS=1): three
Kafka 2.3.0 brokers, then three 0.9.0.1 brokers, each with one ZooKeeper, started by
scripts/fixtures/kafka_cluster.sh in a temporary dir (offsets topic of 6 partitions, replication
factor 2). For 100 group ids: FindCoordinator's node equals the leader of
Utils.abs(hashCode) % 6 in the live Metadata, and the cluster package's answer from the live log
dirs (read-only) plus that metadata names the same broker. Ports: ZK_PORT/KAFKA_PORT (2.3.0,
default 24682/31692..31694) and ZK09_PORT/KAFKA09_PORT (0.9.0.1, default 25682/32692..32694).
About 3 minutes (most of it the brokers' controlled shutdown).
"""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

import pytest

from offsets_auditor.cluster.coordinator_answer import coordinator_answer
from offsets_auditor.cluster.evidence import BrokerEvidence
from offsets_auditor.cluster.metadata import OffsetsTopicMetadata
from offsets_auditor.cluster.partition_count import CountSource, decide_partition_count
from offsets_auditor.coordinator import coordinator_partition
from offsets_auditor.live_cluster.client import (
    CoordinatorLookup,
    CoordinatorState,
    LiveCluster,
    LiveError,
    connect,
)
from offsets_auditor.live_cluster.client_config import ClientConfig
from offsets_auditor.logdir.meta_properties import parse_java_properties
from offsets_auditor.logdir.model import offsets_partitions, read_log_dir

pytestmark = [
    pytest.mark.broker,
    pytest.mark.slow,
    pytest.mark.skipif(
        os.environ.get("OFFSETS_AUDITOR_BROKER_TESTS") != "1",
        reason="drives real Kafka 2.3.0 and 0.9.0.1 clusters: set OFFSETS_AUDITOR_BROKER_TESTS=1",
    ),
]

SCRIPT = Path(__file__).parent.parent.parent / "scripts" / "fixtures" / "kafka_cluster.sh"
PORTS = {
    "2.3.0": (os.environ.get("ZK_PORT", "24682"), int(os.environ.get("KAFKA_PORT", "31692"))),
    "0.9.0.1": (os.environ.get("ZK09_PORT", "25682"), int(os.environ.get("KAFKA09_PORT", "32692"))),
}
GROUPS = ["payments/v2", "", "zahlungen-ü", "😀-emoji", "polygenelubricants"] + [
    f"cg-{i:03d}" for i in range(95)
]


def _cluster(version: str, work: Path, command: str) -> None:
    zk, kafka = PORTS[version]
    env = {**os.environ, "ZK_PORT": zk, "KAFKA_PORT": str(kafka)}
    subprocess.run(
        [str(SCRIPT), version, command, str(work), *(["3"] if command == "start" else [])],
        env=env,
        check=True,
        timeout=600,
        capture_output=True,
    )


def _wait_for_offsets_topic(live: LiveCluster) -> OffsetsTopicMetadata:
    """FindCoordinator creates the offsets topic; wait until its 6 partitions have leaders."""
    for _ in range(90):
        live.find_coordinator("warm-up")
        meta = live.offsets_topic()
        if (
            isinstance(meta, OffsetsTopicMetadata)
            and meta.partition_count == 6
            and all(p.has_leader for p in meta.partitions)
        ):
            return meta
        time.sleep(1)
    raise AssertionError(f"no offsets topic with leaders: {meta}")


def _ready(live: LiveCluster, group: str) -> CoordinatorLookup:
    """The lookup once the named broker has the group loaded: right after the topic is created
    a leader can still answer NOT_COORDINATOR (it has not processed its LeaderAndIsr yet)."""
    for _ in range(60):
        found = live.find_coordinator(group)
        assert not isinstance(found, LiveError), found
        if found.state is not CoordinatorState.NOT_COORDINATOR:
            return found
        time.sleep(0.5)
    return found


def _evidence(work: Path) -> list[BrokerEvidence]:
    out = []
    for i in range(3):
        logdir = read_log_dir(work / f"broker-{i}" / "kafka-logs")
        config = dict(
            parse_java_properties((work / f"broker-{i}" / "server.properties").read_text())
        )
        out.append(
            BrokerEvidence.from_scan(
                f"broker-{i}",
                broker_id=logdir.broker_id,
                cluster_id=logdir.cluster_id,
                partitions_held=[p.partition for p in offsets_partitions(logdir)],
                config=config,
            )
        )
    return out


@pytest.mark.parametrize("version", ["2.3.0", "0.9.0.1"])
def test_live_client_against_find_coordinator(version: str, tmp_path: Path) -> None:
    work = tmp_path / version
    _cluster(version, work, "start")
    try:
        _, port = PORTS[version]
        started = time.monotonic()
        live = connect(f"127.0.0.1:{port}", ClientConfig(), timeout_s=10)
        assert not isinstance(live, LiveError), live
        connect_s = time.monotonic() - started
        with live:
            assert live.pre_api_versions is (version == "0.9.0.1")
            meta = _wait_for_offsets_topic(live)
            assert (meta.cluster_id is None) is (version == "0.9.0.1")  # Metadata v0 has none
            brokers = _evidence(work)
            assert all(len(b.partitions_held) == 4 for b in brokers)
            count = decide_partition_count(brokers, meta)
            assert (count.count, count.source, count.uncertain) == (6, CountSource.LIVE, False)
            assert decide_partition_count(brokers).count == 6  # the disks alone agree
            for group in GROUPS:
                found = _ready(live, group)
                assert found.error is None and found.state is CoordinatorState.READY, found
                partition = coordinator_partition(group, 6)
                leadership = meta.leadership(partition)
                assert leadership is not None and found.node_id == leadership.leader, (group, found)
                assert found.port == port + found.node_id  # broker i listens on KAFKA_PORT + i
                answer = coordinator_answer(group, brokers, meta, count=count)
                assert (answer.partition, answer.coordinator) == (partition, found.node_id)
            versions = live.broker_versions()
            assert [v.node_id for v in versions] == [0, 1, 2]
            for v in versions:
                if version == "2.3.0":
                    assert v.release is not None and v.release.text == "2.3.x", v
                else:
                    assert v.api_versions is None and "before Kafka 0.10.0" in v.reason, v
        assert connect_s < 5
    finally:
        _cluster(version, work, "stop")
