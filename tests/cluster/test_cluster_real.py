"""The coordinator answer on REAL multi-broker clusters (tests/fixtures/kafka-*/cluster/, written by
scripts/fixtures/cluster_generate.sh): three brokers, 6 offsets partitions, replication factor 2,
so each broker holds 4 of the 6. ``truth.json`` is what the live cluster answered: Metadata (leader,
replicas, ISR per partition) and FindCoordinator for 100 group ids.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from offsets_auditor.cluster.coordinator_answer import coordinator_answer, partition_views
from offsets_auditor.cluster.evidence import BrokerEvidence, ConfigOrigin
from offsets_auditor.cluster.metadata import (
    MetadataSource,
    OffsetsTopicMetadata,
    PartitionLeadership,
)
from offsets_auditor.cluster.partition_count import CountSource, decide_partition_count
from offsets_auditor.coordinator import coordinator_partition
from offsets_auditor.logdir.meta_properties import parse_java_properties
from offsets_auditor.logdir.model import offsets_partitions, read_log_dir

CLUSTERS = Path(__file__).parent.parent / "fixtures"
VERSIONS = ["kafka-2.3.0", "kafka-0.9.0.1"]


def _truth(version: str) -> dict:
    return json.loads((CLUSTERS / version / "cluster" / "truth.json").read_text())


def _evidence(version: str, broker_dir: str, with_config: bool = True) -> BrokerEvidence:
    root = CLUSTERS / version / "cluster" / broker_dir
    logdir = read_log_dir(root / "kafka-logs")
    config = None
    if with_config:
        config = dict(parse_java_properties((root / "server.properties").read_text()))
    return BrokerEvidence.from_scan(
        broker_dir,
        broker_id=logdir.broker_id,
        cluster_id=logdir.cluster_id,
        partitions_held=[p.partition for p in offsets_partitions(logdir)],
        config=config,
    )


def _brokers(version: str) -> list[BrokerEvidence]:
    return [_evidence(version, f"broker-{i}") for i in range(3)]


def _live(truth: dict) -> OffsetsTopicMetadata:
    """The recorded Metadata answer, as the live client turns it into metadata."""
    parts = tuple(
        PartitionLeadership(int(p), v["leader"], tuple(v["replicas"]), tuple(v["isr"]))
        for p, v in sorted(truth["offsets_topic"]["partitions"].items(), key=lambda kv: int(kv[0]))
    )
    return OffsetsTopicMetadata(
        MetadataSource.LIVE, True, parts, truth["bootstrap"], cluster_id=truth["cluster_id"]
    )


@pytest.mark.parametrize("version", VERSIONS)
def test_no_broker_holds_every_partition(version: str) -> None:
    brokers = _brokers(version)
    assert all(len(b.partitions_held) == 4 for b in brokers)
    assert frozenset().union(*(b.partitions_held for b in brokers)) == set(range(6))
    assert [b.broker_id for b in brokers] == [0, 1, 2]


@pytest.mark.parametrize("version", VERSIONS)
def test_hundred_groups_partition_and_coordinator(version: str) -> None:
    """For the 100 recorded ids: the partition is Utils.abs(hashCode) % 6, from the disks alone
    (the union of the three brokers' dirs, complete, and their configs say 6); with the live
    metadata, the leader is the broker FindCoordinator named."""
    truth = _truth(version)
    brokers = _brokers(version)
    offline = decide_partition_count(brokers)
    assert (offline.count, offline.source, offline.uncertain) == (
        6,
        CountSource.PARTITION_DIRS,
        False,
    )
    live = _live(truth)
    count = decide_partition_count(brokers, live)
    assert (count.count, count.source, count.uncertain) == (6, CountSource.LIVE, False)
    assert len(truth["groups"]) == 100
    for g in truth["groups"]:
        found = g["find_coordinator"]
        assert found["error_code"] == 0, g
        answer = coordinator_answer(g["group_id"], brokers, live, count=count)
        assert answer.partition == g["partition"] == coordinator_partition(g["group_id"], 6), g
        assert answer.coordinator == found["node_id"], g
        assert not answer.uncertain, answer.reasons
        assert found["port"] == next(
            b["port"] for b in truth["brokers"] if b["node_id"] == found["node_id"]
        )
        offline_answer = coordinator_answer(g["group_id"], brokers, count=offline)
        assert offline_answer.partition == g["partition"]
        assert offline_answer.coordinator is None and offline_answer.uncertain  # leader not on disk
        assert set(offline_answer.view.held_by) == {  # type: ignore[union-attr]
            str(r) for r in truth["offsets_topic"]["partitions"][str(g["partition"])]["replicas"]
        }


@pytest.mark.parametrize("version", VERSIONS)
def test_special_group_ids(version: str) -> None:
    """The ids that test the hash: the empty id, non-ASCII, a surrogate pair, hashCode ==
    Integer.MIN_VALUE (Utils.abs maps it to 0), equal hashCodes."""
    by_id = {g["group_id"]: g for g in _truth(version)["groups"]}
    assert by_id["polygenelubricants"]["java_hash_code"] == -(2**31)
    assert by_id["polygenelubricants"]["partition"] == 0
    assert by_id["Aa"]["java_hash_code"] == by_id["BB"]["java_hash_code"]
    for gid in ("", "zahlungen-ü", "支付-v2", "😀-emoji", "payments/v2"):
        assert by_id[gid]["find_coordinator"]["error_code"] == 0
        assert by_id[gid]["committed_offsets"]["0"]["error_code"] == 0


@pytest.mark.parametrize("version", VERSIONS)
def test_one_broker_alone_answers_modulo_its_config(version: str) -> None:
    """The issue's wrong on-call answer: one broker holding 4 of 6 partitions, its config saying
    6, answers modulo 6 (flagged uncertain: partitions it lacks are taken on the config's word),
    never modulo the 4 dirs it holds."""
    truth = _truth(version)
    for i in range(3):
        alone = [_evidence(version, f"broker-{i}")]
        count = decide_partition_count(alone)
        assert (count.count, count.source, count.uncertain) == (6, CountSource.BROKER_CONFIG, True)
        assert any("no scanned broker holds partition(s)" in r for r in count.reasons)
        for g in truth["groups"]:
            assert coordinator_answer(g["group_id"], alone, count=count).partition == g["partition"]


@pytest.mark.parametrize("version", VERSIONS)
def test_one_broker_without_config_gives_no_partition(version: str) -> None:
    """Without a config, one broker's dirs support no count: no partition, never a modulo over
    the dirs it holds (4, or its highest + 1)."""
    alone = [_evidence(version, "broker-0", with_config=False)]
    assert alone[0].config_origin is ConfigOrigin.UNKNOWN
    count = decide_partition_count(alone)
    assert count.count is None and count.uncertain and count.source is CountSource.NONE
    assert count.at_least == max(alone[0].partitions_held) + 1
    answer = coordinator_answer("payments/v2", alone, count=count)
    assert answer.partition is None and answer.uncertain


def test_every_partition_with_its_replicas_across_brokers() -> None:
    truth = _truth("kafka-2.3.0")
    brokers = _brokers("kafka-2.3.0")
    views = partition_views(brokers, _live(truth))
    assert [v.partition for v in views] == list(range(6))
    for v in views:
        recorded = truth["offsets_topic"]["partitions"][str(v.partition)]
        assert v.leadership is not None and v.leadership.leader == recorded["leader"]
        assert sorted(v.held_by) == sorted(str(r) for r in recorded["replicas"])
        assert v.notes == ()


def test_a_stale_leader_on_a_broker_that_holds_no_replica_is_said() -> None:
    """Metadata naming replicas whose broker's scan lacks the dir: said, per partition."""
    truth = _truth("kafka-2.3.0")
    brokers = _brokers("kafka-2.3.0")
    live = _live(truth)
    moved = tuple(
        PartitionLeadership(p.partition, p.leader, (0, 1, 2), p.isr) if p.partition == 0 else p
        for p in live.partitions
    )
    view = partition_views(brokers, OffsetsTopicMetadata(live.source, True, moved, "test"))[0]
    missing = {0, 1, 2} - {int(b) for b in view.held_by}
    assert len(missing) == 1
    assert any(
        "are replicas of partition 0 but their scans do not hold its dir" in n for n in view.notes
    )
