"""The service's cluster view as pure functions (no server, no Spark): the partition count and the
coordinator from every broker's published evidence, never one broker's dirs; brokers known to
exist but not scanned; the live cluster's answer beside the disk; replicas of different
publishers' runs compared. A numbered table where the rule is a table."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

from api.cluster import ClusterState, build_clusters, scanned_brokers
from api.cluster_page import broker_lines
from api.coordination import answer
from api.live import LiveLookup, LiveSnapshot
from api.results import LoadedRun, RunTables
from api.samples import cluster_families
from api.view import View, merge
from offsets_auditor import published
from offsets_auditor.cluster.metadata import MetadataSource, OffsetsTopicMetadata
from offsets_auditor.cluster.metadata import PartitionLeadership as L
from offsets_auditor.coordinator import coordinator_partition
from offsets_auditor.live_cluster.client import CoordinatorLookup, CoordinatorState

NOW = 1_800_000_000.0


def broker(broker_id: int | None, held: list[int], n: int | None = 4, **values: Any) -> dict:
    row = {c: None for c, _ in published.TABLES["brokers"]}
    return {
        **row,
        "cluster_id": "c1",
        "broker_id": broker_id,
        "log_dir": "/var/lib/kafka/data",  # the same path on every broker's host
        "offsets_partitions_held": held,
        "offsets_topic_num_partitions": n,
        "offsets_topic_num_partitions_origin": "unknown" if n is None else "set",
        **values,
    }


def partition(broker_id: int, number: int, **values: Any) -> dict:
    row = {c: None for c, _ in published.TABLES["partitions"]}
    return {
        **row,
        "cluster_id": "c1",
        "broker_id": broker_id,
        "log_dir": "/var/lib/kafka/data",
        "partition": number,
        "size_bytes": 1000 * (broker_id + 1),
        "segment_count": 1,
        "log_end_offset": 100,
        "outcome": "single-pass",
        "load_estimate_seconds": 0.5 * (broker_id + 1),
        "load_estimate_basis": "assumed",
        **values,
    }


GROUP_COLUMNS = {c: t for c, t in published.TABLES["groups"]}


def groups_table(rows: list[dict]) -> pa.Table:
    types = {"int64": pa.int64(), "string": pa.string(), "bool": pa.bool_()}
    return pa.table(
        {c: pa.array([r.get(c) for r in rows], types[t]) for c, t in GROUP_COLUMNS.items()}
    )


def run(
    publisher: str,
    brokers: list[dict],
    partitions: list[dict],
    finished: float = NOW - 60,
    groups: list[dict] | None = None,
) -> LoadedRun:
    iso = __import__("datetime").datetime.fromtimestamp(finished, __import__("datetime").UTC)
    tables = RunTables(
        run_id=f"run-{publisher}",
        publisher=publisher,
        path=Path("/nowhere"),
        manifest={"finished_at": iso.isoformat().replace("+00:00", "Z"), "config": {}},
        brokers=brokers,
        partitions=partitions,
        findings=[],
    )
    return LoadedRun(tables, segments=[], indexes=[], groups=groups_table(groups or []))


def states(view: View, live: LiveSnapshot | None = None, seen: Any = None) -> dict:
    return build_clusters(scanned_brokers(view.brokers, {}), seen or {}, live, 90.0, NOW)


# -- the count and the partition -----------------------------------------------------------


def test_the_issue_one_broker_of_a_4_partition_topic() -> None:
    """Issue 20: a broker holding __consumer_offsets-0 and -1 of 4, configured with 4: the
    service answered 'partition 0 of 2'; Kafka answers 2 of 4."""
    view = merge([run("b0", [broker(0, [0, 1])], [partition(0, 0), partition(0, 1)])])
    found = answer(view, states(view), "payments/v2", ["c1"], None, NOW)
    (c,) = found["clusters"]
    assert (
        (c["partition"], c["partitions"]) == (2, 4) == (coordinator_partition("payments/v2", 4), 4)
    )
    assert c["partitions_source"] == "broker-config" and c["partitions_uncertain"]
    assert any("no scanned broker holds partition(s) 2-3" in r for r in c["reasons"])
    assert c["replicas"] == []  # nobody scanned holds partition 2


# (held by each broker, their configs, expected count, source)
COUNT_CASES = [
    # 1. three brokers, RF 2: the union is complete and every config says 6
    ([[0, 1, 4, 5], [1, 2, 3, 5], [0, 2, 3, 4]], [6, 6, 6], 6, "partition-dirs"),
    # 2. two of the three: 0-5 but not complete? {0,1,2,3,4,5} is complete: still the dirs
    ([[0, 1, 4, 5], [1, 2, 3, 5]], [6, 6], 6, "partition-dirs"),
    # 3. one broker, its config: the config, uncertain
    ([[0, 1, 4, 5]], [6], 6, "broker-config"),
    # 4. no config at all and the dirs incomplete: no count, never a modulo over 6
    ([[0, 1, 4, 5]], [None], None, "none"),
    # 5. a dir beyond every config: the topic was created with another value
    ([[0, 1, 7]], [4], None, "none"),
]


@pytest.mark.parametrize(("held", "configs", "count", "source"), COUNT_CASES)
def test_the_count_from_every_broker(
    held: list[list[int]], configs: list[int | None], count: int | None, source: str
) -> None:
    rows = [broker(i, h, n) for i, (h, n) in enumerate(zip(held, configs, strict=True))]
    view = merge([run(f"b{i}", [row], []) for i, row in enumerate(rows)])
    (c,) = answer(view, states(view), "g", ["c1"], None, NOW)["clusters"]
    assert (c["partitions"], c["partitions_source"]) == (count, source)
    if count is None:
        assert c["partition"] is None and c["uncertain"]
        assert any("no count is supported" in r for r in c["reasons"])
    else:
        assert c["partition"] == coordinator_partition("g", count)


# -- the leader ------------------------------------------------------------------------------


def _kraft(partitions: int) -> str:
    return json.dumps(
        {
            "exists": True,
            "partitions": [
                {"partition": p, "leader": p % 3, "replicas": [p % 3, (p + 1) % 3],
                 "isr": [p % 3], "leader_epoch": 4}
                for p in range(partitions)
            ],
            "detail": "/var/lib/kafka/data/__cluster_metadata-0 read to offset 99",
            "read_to": 99,
            "snapshot": None,
        }
    )  # fmt: skip


def test_the_leader_from_a_kraft_metadata_log_on_disk() -> None:
    """A KRaft broker's log dir holds the metadata log: the count and the leader offline, the
    leader's address from the listeners its scan was configured with."""
    b0 = broker(0, [0, 2, 3, 5], 50, kraft_offsets_topic_json=_kraft(6), kraft_metadata_read_to=99)
    b1 = broker(1, [0, 1, 3, 4], 50)
    view = merge(
        [
            run("b0", [b0], [partition(0, p) for p in (0, 2, 3, 5)]),
            run("b1", [b1], [partition(1, p) for p in (0, 1, 3, 4)]),
        ]
    )
    configs = {"b1": {"advertised.listeners": "PLAINTEXT://kafka-1:9092"}}
    found = build_clusters(scanned_brokers(view.brokers, configs), {}, None, 90, NOW)
    group = next(g for g in (f"g{i}" for i in range(100)) if coordinator_partition(g, 6) == 4)
    (c,) = answer(view, found, group, ["c1"], None, NOW)["clusters"]
    # the KRaft count wins over the brokers' 50 (the config counts only when the topic is made)
    assert (c["partition"], c["partitions"], c["partitions_source"]) == (4, 6, "kraft-metadata-log")
    assert c["coordinator"]["broker_id"] == 1 and c["coordinator"]["leader_epoch"] == 4
    assert c["coordinator"]["listeners"] == "PLAINTEXT://kafka-1:9092"
    assert c["coordinator"]["source"] == "kraft-metadata-log"
    (replica,) = c["replicas"]
    assert replica["broker_id"] == 1 and replica["leader"] and replica["in_isr"]
    assert c["load_estimate_seconds"] == 1.0 and "broker 1" in c["load_estimate_from"]
    assert c["replicas_not_scanned"] == [2]
    # broker 2 is a replica the metadata log names, and nobody scans it
    assert found["c1"].missing == [2]


def _live(at: float | None, brokers: tuple = ((0, "h0", 9092), (1, "h1", 9093))) -> LiveSnapshot:
    meta = OffsetsTopicMetadata(
        MetadataSource.LIVE,
        True,
        tuple(L(p, p % 2, (p % 2, (p + 1) % 2), (p % 2,), 7) for p in range(4)),
        "Metadata v7 from broker 0",
        "c1",
    )
    return LiveSnapshot("h0:9092", at, meta, brokers)


def test_the_live_cluster_beside_the_disk() -> None:
    view = merge([run("b0", [broker(0, [0, 1])], [partition(0, 0), partition(0, 1)])])
    group = next(g for g in (f"g{i}" for i in range(100)) if coordinator_partition(g, 4) == 1)
    lookup = CoordinatorLookup(
        group, 1, "h1", 9093, None, CoordinatorState.LOADING, "broker 1: loading", None
    )
    found = states(view, _live(NOW - 5))
    (c,) = answer(view, found, group, ["c1"], None, NOW, LiveLookup(lookup, NOW), "c1")["clusters"]
    assert (c["partition"], c["partitions_source"], c["partitions_uncertain"]) == (
        1,
        "live-cluster",
        False,
    )
    assert c["coordinator"] == {
        "broker_id": 1,
        "host": "h1",
        "port": 9093,
        "listeners": None,
        "source": "live-cluster",
        "leader_epoch": 7,
        "isr": [1],
    }
    assert c["loading"] is True and c["live"]["state"] == "loading"
    # broker 0's replica is the only one scanned: its estimate, said to be the largest's
    assert (
        c["load_estimate_seconds"] == 0.5 and "the leader is not scanned" in c["load_estimate_from"]
    )
    # broker 1 is known from the live cluster and scanned by nobody
    assert found["c1"].missing == [1] and found["c1"].known[1] == ("live-cluster",)


def test_live_metadata_gone_quiet_is_not_used() -> None:
    view = merge([run("b0", [broker(0, [0, 1, 2, 3])], [])])
    found = states(view, _live(NOW - 600))
    state = found["c1"]
    assert state.live is None and state.count.source.value == "partition-dirs"
    assert state.live_note is not None and "not answered for 600 s" in state.live_note


def test_find_coordinator_not_answered_in_time() -> None:
    view = merge([run("b0", [broker(0, [0, 1, 2, 3])], [])])
    pending = LiveLookup(None, None, pending=True)
    (c,) = answer(view, states(view, _live(NOW)), "g", ["c1"], None, NOW, pending, "c1")["clusters"]
    assert c["live"] == {"pending": True, "state": None} and c["loading"] is None
    assert "FindCoordinator: no answer yet" in c["reasons"]


# -- brokers: stale and missing ----------------------------------------------------------------


def test_stale_and_missing_brokers() -> None:
    """Broker 1's scans stopped 4 h ago; broker 2 was seen in an earlier run only; broker 3 is
    known from the live cluster. Only they are flagged, each for its own reason."""
    view = merge(
        [
            run("b0", [broker(0, [0, 1])], [], finished=NOW - 60),
            run("b1", [broker(1, [2, 3])], [], finished=NOW - 4 * 3600),
        ]
    )
    live = _live(NOW, ((0, "h0", 1), (1, "h1", 1), (3, "h3", 1)))
    state = states(view, live, seen={("c1", 2): NOW - 86400, ("c1", 0): NOW - 60})["c1"]
    lines = {x["broker_id"]: x for x in broker_lines(state, NOW, 3 * 3600)}
    assert {b: x["state"] for b, x in lines.items()} == {
        0: "ok",
        1: "stale",
        2: "missing",
        3: "missing",
    }
    assert lines[2]["known_from"] == ["earlier-run"]
    assert lines[3]["known_from"] == ["live-cluster"]
    assert lines[1]["data_age_seconds"] == pytest.approx(4 * 3600)
    families = {f.name: f.vector() for f in cluster_families([], [], {"c1": state})}
    missing = families["offsets_auditor_broker_missing"]
    assert {dict(k)["broker_id"]: v for k, v in missing.items()} == {
        "0": 0.0,
        "1": 0.0,
        "2": 1.0,
        "3": 1.0,
    }


# -- replicas of different publishers' runs --------------------------------------------------


def _commit(broker_id: int, group: str, offset: int, log_offset: int) -> dict:
    return {
        "cluster_id": "c1",
        "broker_id": broker_id,
        "log_dir": "/var/lib/kafka/data",
        "group": group,
        "coordinator_partition": 1,
        "topic": "orders",
        "partition": 0,
        "offset": offset,
        "log_offset": log_offset,
        "pending": False,
    }


def test_replicas_from_two_publishers_are_compared() -> None:
    """Partition 1 on brokers 0 and 1, each scanned by its own publisher: group b's commit
    below both log ends differs (diverged), group c's is above broker 1's end (not compared),
    group a's agrees."""
    commits0 = [_commit(0, "a", 5, 10), _commit(0, "b", 7, 20), _commit(0, "c", 9, 95)]
    commits1 = [_commit(1, "a", 5, 10), _commit(1, "b", 8, 21), _commit(1, "c", 3, 40)]
    view = merge(
        [
            run("b0", [broker(0, [1])], [partition(0, 1, log_end_offset=100)], groups=commits0),
            run("b1", [broker(1, [1])], [partition(1, 1, log_end_offset=60)], groups=commits1),
        ]
    )
    (finding,) = view.cross_findings
    assert finding["kind"] == "replica-divergence" and finding["group"] == "b"
    assert finding["partition"] == "__consumer_offsets-1" and finding["broker_id"] == 0
    assert "1 committed offset(s) differ" in finding["detail"]
    assert "below offset 60" in finding["detail"]
    assert finding in view.findings
    families = {f.name: f.vector() for f in cluster_families(view.partitions, view.findings, {})}
    key = (("cluster_id", "c1"), ("partition", "1"))
    assert families["offsets_auditor_replica_divergences"][key] == 1
    # the same data in one run: the scan compared them itself, the service does not again
    same = merge(
        [
            run(
                "both",
                [broker(0, [1]), {**broker(1, [1]), "log_dir": "/other"}],
                [partition(0, 1), {**partition(1, 1), "log_dir": "/other"}],
                groups=commits0 + [{**c, "log_dir": "/other"} for c in commits1],
            )
        ]
    )
    assert same.cross_findings == []


def test_agreeing_replicas_are_not_a_finding() -> None:
    commits = [_commit(0, "a", 5, 10), _commit(0, "b", 7, 20)]
    view = merge(
        [
            run("b0", [broker(0, [1])], [partition(0, 1)], groups=commits),
            run(
                "b1",
                [broker(1, [1])],
                [partition(1, 1)],
                groups=[{**c, "broker_id": 1} for c in commits],
            ),
        ]
    )
    assert view.cross_findings == []


def test_a_cluster_state_answers_every_partition() -> None:
    rows = [broker(0, [0, 1, 4, 5], 6), broker(1, [1, 2, 3, 5], 6), broker(2, [0, 2, 3, 4], 6)]
    view = merge([run(f"b{i}", [r], []) for i, r in enumerate(rows)])
    state: ClusterState = states(view)["c1"]
    views = state.views()
    assert [v.partition for v in views] == list(range(6))
    assert [sorted(v.held_by) for v in views] == [
        ["0", "2"],
        ["0", "1"],
        ["1", "2"],
        ["1", "2"],
        ["0", "2"],
        ["0", "1"],
    ]


def test_a_group_on_two_brokers_with_the_same_log_dir_path_is_two_copies() -> None:
    """Brokers scanned on their own hosts often share the log dir path: copies of a group
    stay apart by broker (before, they merged into one)."""
    from api.routers.groups import _copies

    view = merge(
        [
            run("b0", [broker(0, [1])], [partition(0, 1)], groups=[_commit(0, "a", 5, 10)]),
            run("b1", [broker(1, [1])], [partition(1, 1)], groups=[_commit(1, "a", 6, 12)]),
        ]
    )
    copies = _copies(view, "a", None)
    assert sorted((c["broker_id"], c["offsets"][0]["offset"]) for c in copies) == [(0, 5), (1, 6)]


@pytest.mark.parametrize(
    ("scanned_as", "live_id", "attached"),
    [
        # ZooKeeper brokers before 2.4 write no cluster.id: the live cluster (2.3.0: Metadata
        # v2 says its id) is the scanned cluster without one whose brokers it lists
        ("", "rtEes1wOSt6-9yHQBkXfVA", True),
        # 0.9: no id on either side
        ("", None, True),
        # scanned with --cluster-id, the live 0.9 cluster has none: its brokers decide
        ("prod-09", None, True),
        # the ids differ: another cluster
        ("other", "rtEes1wOSt6-9yHQBkXfVA", False),
    ],
)
def test_which_scanned_cluster_the_live_one_is(
    scanned_as: str, live_id: str | None, attached: bool
) -> None:
    rows = [{**broker(i, [i, i + 1], 4), "cluster_id": scanned_as or None} for i in range(2)]
    view = merge([run(f"b{i}", [r], []) for i, r in enumerate(rows)])
    snapshot = _live(NOW, ((0, "h0", 1), (1, "h1", 1), (2, "h2", 1)))
    meta = snapshot.metadata
    assert meta is not None
    live = LiveSnapshot(
        "h0:1", NOW, OffsetsTopicMetadata(meta.source, True, meta.partitions, "m", live_id),
        snapshot.brokers,
    )  # fmt: skip
    state = states(view, live)[scanned_as]
    assert state.live_attached is attached
    assert (state.count.source.value == "live-cluster") is attached
    if attached and live_id != scanned_as:
        assert state.live_note is not None and "taken to be the scanned cluster" in state.live_note
