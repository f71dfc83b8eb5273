"""The partition-count rules (offsets_auditor.cluster.partition_count) as a numbered table of
cases, each with why the expected answer is right (Burrow's caching_test.go style). The real
cluster data is in test_cluster_real.py; these are the disagreements a real cluster seldom shows.
"""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from offsets_auditor.cluster.coordinator_answer import coordinator_answer
from offsets_auditor.cluster.evidence import BrokerEvidence, ConfigOrigin
from offsets_auditor.cluster.metadata import (
    MetadataSource,
    OffsetsTopicMetadata,
    PartitionLeadership,
)
from offsets_auditor.cluster.partition_count import CountSource, decide_partition_count


def broker(
    bid: int,
    held: set[int],
    config: int | None,
    cluster: str = "c1",
    origin: ConfigOrigin | None = None,
) -> BrokerEvidence:
    if origin is None:
        origin = ConfigOrigin.UNKNOWN if config is None else ConfigOrigin.SET
    return BrokerEvidence(f"host-{bid}", bid, cluster, frozenset(held), config, origin)


def meta(
    source: MetadataSource, n: int, missing: set[int] = frozenset(), cluster: str | None = None
):  # type: ignore[assignment]
    parts = tuple(
        PartitionLeadership(p, p % 3, (p % 3, (p + 1) % 3), (p % 3,), 7)
        for p in range(n)
        if p not in missing
    )
    return OffsetsTopicMetadata(source, True, parts, f"{source.value} test", cluster_id=cluster)


@dataclass
class Case:
    why: str
    brokers: list[BrokerEvidence]
    count: int | None
    source: CountSource
    uncertain: bool
    reason: str  # a fragment one of the reasons must hold
    live: OffsetsTopicMetadata | None = None
    kraft: OffsetsTopicMetadata | None = None


LIVE, KRAFT = MetadataSource.LIVE, MetadataSource.KRAFT_LOG
CASES = [
    # 1. The issue's case: one broker of a 4-partition topic holds 0 and 1, its config says 4.
    #    Kafka answers modulo 4; the dirs (2) are no count. Uncertain: 2 and 3 on the config's word.
    Case(
        "one broker, partial dirs, config 4",
        [broker(0, {0, 1}, 4)],
        4,
        CountSource.BROKER_CONFIG,
        True,
        "no scanned broker holds partition(s) 2-3",
    ),
    # 2. All brokers together hold 0..5 and all say 6: the disks agree with the config: certain.
    Case(
        "union complete, configs agree",
        [broker(0, {0, 1, 4, 5}, 6), broker(1, {1, 2, 3, 5}, 6), broker(2, {0, 2, 3, 4}, 6)],
        6,
        CountSource.PARTITION_DIRS,
        False,
        "hold every partition 0..5",
    ),
    # 3. Union complete but the configs say 50 (the default: never set): the topic was created
    #    before with 6, or the config changed. No config fits 6 and 50 >= 6 fits: the config's 50
    #    is taken, uncertain, and the partitions 6..49 held by nobody are said.
    Case(
        "union complete, default config 50",
        [broker(0, {0, 1, 2, 3, 4, 5}, 50, origin=ConfigOrigin.DEFAULT)],
        50,
        CountSource.BROKER_CONFIG,
        True,
        "partition(s) 6-49",
    ),
    # 4. A dir beyond the config: broker holds __consumer_offsets-7, config says 4. The config
    #    is contradicted (the topic was created with more): no count, at least 8.
    Case(
        "dir beyond config",
        [broker(0, {0, 7}, 4)],
        None,
        CountSource.NONE,
        True,
        "beyond every configured count",
    ),
    # 5. Configs disagree (4 vs 6), the union 0..5 is complete and matches 6: 6, uncertain.
    Case(
        "configs disagree, dirs pick one",
        [broker(0, {0, 1, 2}, 4), broker(1, {3, 4, 5}, 6)],
        6,
        CountSource.PARTITION_DIRS,
        True,
        "disagree",
    ),
    # 6. Configs disagree (6 vs 8), dirs 0..2 fit both: no count.
    Case(
        "configs disagree, dirs fit both",
        [broker(0, {0, 1}, 6), broker(1, {2}, 8)],
        None,
        CountSource.NONE,
        True,
        "disagree",
    ),
    # 7. Configs disagree (2 vs 6), dirs 0..4 rule out 2: 6, uncertain, the conflict said.
    Case(
        "configs disagree, dirs rule one out",
        [broker(0, {0, 1, 4}, 2), broker(1, {2}, 6)],
        6,
        CountSource.BROKER_CONFIG,
        True,
        "disagree",
    ),
    # 8. No config at all and complete dirs: the dirs alone are no count (a broker not scanned
    #    may hold more partitions): none, at least 3.
    Case(
        "no config", [broker(0, {0, 1, 2}, None)], None, CountSource.NONE, True, "no broker config"
    ),
    # 9. Live metadata wins over everything; the config that differs is said, not decisive.
    Case(
        "live wins",
        [broker(0, {0, 1}, 4)],
        6,
        CountSource.LIVE,
        False,
        "offsets.topic.num.partitions=4, not 6",
        live=meta(LIVE, 6),
    ),
    # 10. Live metadata lacking a partition: the count is still its highest + 1, uncertain.
    Case(
        "live incomplete",
        [],
        6,
        CountSource.LIVE,
        True,
        "lacks partition(s) 3",
        live=meta(LIVE, 6, {3}),
    ),
    # 11. The live cluster has no offsets topic, the disks have none either: no count, certain.
    Case(
        "live, no topic",
        [broker(0, set(), 50)],
        None,
        CountSource.LIVE,
        False,
        "no __consumer_offsets topic",
        live=OffsetsTopicMetadata(LIVE, False, (), "b:9092"),
    ),
    # 12. KRaft metadata on disk, no live cluster: its count; the config that differs is said.
    Case(
        "kraft",
        [broker(1, {0, 9}, 4)],
        12,
        CountSource.KRAFT_LOG,
        False,
        "offsets.topic.num.partitions=4, not 12",
        kraft=meta(KRAFT, 12),
    ),
    # 13. KRaft metadata missing a PartitionRecord: uncertain.
    Case(
        "kraft incomplete",
        [],
        12,
        CountSource.KRAFT_LOG,
        True,
        "lacks PartitionRecords for 5",
        kraft=meta(KRAFT, 12, {5}),
    ),
    # 14. Live and KRaft disagree: live wins, the log's count said.
    Case(
        "live over kraft",
        [],
        6,
        CountSource.LIVE,
        False,
        "the KRaft metadata log says 12",
        live=meta(LIVE, 6),
        kraft=meta(KRAFT, 12),
    ),
    # 15. Brokers of two clusters: never one view; the answer says so and is uncertain.
    Case(
        "two clusters",
        [broker(0, {0, 1, 2}, 3, "c1"), broker(1, {0, 1, 2}, 3, "c2")],
        3,
        CountSource.PARTITION_DIRS,
        True,
        "2 clusters",
    ),
    # 16. No evidence at all.
    Case("nothing", [], None, CountSource.NONE, True, "no broker config"),
]


@pytest.mark.parametrize("case", CASES, ids=[c.why for c in CASES])
def test_partition_count_rules(case: Case) -> None:
    decided = decide_partition_count(case.brokers, case.live, case.kraft)
    assert (decided.count, decided.source, decided.uncertain) == (
        case.count,
        case.source,
        case.uncertain,
    ), decided.reasons
    assert any(case.reason in r for r in decided.reasons), decided.reasons
    answer = coordinator_answer("payments/v2", case.brokers, case.live, case.kraft)
    assert answer.count == decided
    if decided.count is None:
        assert answer.partition is None and answer.uncertain
    else:
        assert answer.partition is not None and 0 <= answer.partition < decided.count
        assert answer.uncertain or not decided.uncertain


def test_dir_beyond_config_keeps_at_least() -> None:
    decided = decide_partition_count([broker(0, {0, 7}, 4)])
    assert decided.at_least == 8
    assert "the topic has at least 8 partitions" in decided.reasons


def test_issue_example_answers_two_of_four() -> None:
    """Issue 20: payments/v2 on a broker holding 0 and 1 of 4 answered 'partition 0 of 2';
    Kafka answers 2 of 4."""
    answer = coordinator_answer("payments/v2", [broker(0, {0, 1}, 4)])
    assert (answer.partition, answer.count.count) == (2, 4)
    assert answer.coordinator is None and answer.uncertain


def test_leader_from_live_metadata_and_kraft_disagreement_noted() -> None:
    live = meta(LIVE, 6)
    kraft_parts = tuple(
        PartitionLeadership(p.partition, (p.leader + 1) % 3, p.replicas, p.isr, 8)
        for p in live.partitions
    )
    kraft = OffsetsTopicMetadata(KRAFT, True, kraft_parts, "log")
    answer = coordinator_answer("payments/v2", [], live, kraft)
    assert answer.partition == 2 and answer.coordinator == 2 % 3
    assert any("kraft-metadata-log says broker 0 leads" in r for r in answer.reasons)


def test_partition_without_leader_has_no_coordinator() -> None:
    parts = tuple(PartitionLeadership(p, -1 if p == 2 else 0, (0,), ()) for p in range(4))
    answer = coordinator_answer("payments/v2", [], OffsetsTopicMetadata(LIVE, True, parts, "b"))
    assert answer.partition == 2 and answer.coordinator is None
    assert any("has no leader" in r for r in answer.reasons)


def test_evidence_from_scan_config() -> None:
    assert (
        BrokerEvidence.from_scan(
            "a", broker_id=1, cluster_id=None, partitions_held=[0], config={}
        ).offsets_topic_partitions
        == 50
    )
    bad = BrokerEvidence.from_scan(
        "a",
        broker_id=1,
        cluster_id=None,
        partitions_held=[0],
        config={"offsets.topic.num.partitions": "0"},
    )
    assert (bad.offsets_topic_partitions, bad.config_origin) == (None, ConfigOrigin.UNKNOWN)
    set_ = BrokerEvidence.from_scan(
        "a",
        broker_id=1,
        cluster_id=None,
        partitions_held=[0],
        config={"offsets.topic.num.partitions": " 6 "},
    )
    assert (set_.offsets_topic_partitions, set_.config_origin) == (6, ConfigOrigin.SET)
