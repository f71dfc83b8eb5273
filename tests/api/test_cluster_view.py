"""One cluster view from per-broker scans, on the committed data of REAL clusters
(tests/fixtures/kafka-2.3.0/cluster and kafka-0.9.0.1/cluster: three brokers, offsets topic of 6
partitions with replication factor 2, so no broker holds every partition; ``truth.json`` is
what the live cluster answered). Each broker's log dir is scanned on its own, as its own host
would (its own publisher, its own server.properties), into one results dir; the service merges
them. The same against live brokers: tests/cluster/test_cluster_acceptance.py (opt-in).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest

from api.live import LiveWatcher
from offsets_auditor.cluster.metadata import MetadataSource, OffsetsTopicMetadata
from offsets_auditor.cluster.metadata import PartitionLeadership as L
from offsets_auditor.coordinator import coordinator_partition
from offsets_auditor.live_cluster.client import CoordinatorLookup, CoordinatorState
from offsets_auditor.live_cluster.client_config import ClientConfig
from offsets_auditor.logdir.meta_properties import parse_java_properties
from tests.support.service import LiveServer

pytestmark = pytest.mark.slow

FIXTURES = Path(__file__).parent.parent / "fixtures"
#: the cluster each version's scans publish: 2.3.0's log dirs have no cluster.id (written from
#: 2.4), so its scans are given the id its brokers reported (--cluster-id); 0.9 has no id at all
VERSIONS = {"2.3.0": "rtEes1wOSt6-9yHQBkXfVA", "0.9.0.1": ""}


def truth(version: str) -> dict[str, Any]:
    return json.loads((FIXTURES / f"kafka-{version}" / "cluster" / "truth.json").read_text())


def _scan(spark: Any, results: Path, version: str, broker: int) -> None:
    from spark_jobs.job import ScanOptions, run_scan

    root = FIXTURES / f"kafka-{version}" / "cluster" / f"broker-{broker}"
    properties = parse_java_properties((root / "server.properties").read_text())
    options = ScanOptions(
        log_dirs=(root / "kafka-logs",),
        out=results,
        publisher=f"kafka-{version}-broker-{broker}",
        properties=tuple(properties),
        cluster_id=VERSIONS[version] or None,
    )
    run_scan(spark, options)


@pytest.fixture(scope="module")
def results(spark: Any, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Per cluster, three scans, one per broker, each its own publisher, into one dir (and
    both clusters' publishers in a third)."""
    root = tmp_path_factory.mktemp("cluster-view")
    out = {}
    for version in VERSIONS:
        out[version] = root / version
        for broker in range(3):
            _scan(spark, out[version], version, broker)
    both = root / "both" / "publishers"
    both.mkdir(parents=True)
    for version in VERSIONS:
        for home in (out[version] / "publishers").iterdir():
            (both / home.name).symlink_to(home)
    out["both"] = both.parent
    return out


@pytest.fixture(scope="module")
def server(results: dict[str, Path]) -> Iterator[LiveServer]:
    """Both clusters in one service."""
    with LiveServer(results["both"], poll_seconds=0.2) as s:
        yield s


@pytest.mark.parametrize("version", VERSIONS)
def test_one_cluster_of_three_brokers_every_partition_with_its_replicas(
    server: LiveServer, version: str
) -> None:
    cluster = VERSIONS[version]
    page = server.json(f"/clusters?cluster={cluster}")
    (view,) = page["items"]
    assert [b["broker_id"] for b in view["brokers"]] == [0, 1, 2]
    assert {b["state"] for b in view["brokers"]} == {"ok"}
    assert [len(b["publishers"]) for b in view["brokers"]] == [1, 1, 1]
    # no broker holds them all; the three together do, and their configs say 6
    assert (view["partitions"], view["partitions_source"], view["uncertain"]) == (
        6,
        "partition-dirs",
        False,
    )
    recorded = truth(version)["offsets_topic"]["partitions"]
    for p in view["offsets_partitions"]:
        replicas = recorded[str(p["partition"])]["replicas"]
        assert sorted(int(b) for b in p["held_by"]) == sorted(replicas)
        assert sorted(r["broker_id"] for r in p["on_disk"]) == sorted(replicas)
        assert p["leader"] is None  # ZooKeeper keeps it: not on any disk
        assert p["divergences"] == 0


@pytest.mark.parametrize("version", VERSIONS)
def test_a_hundred_groups_offline(server: LiveServer, version: str) -> None:
    """Offline: Utils.abs(hashCode) % 6 for every recorded group, the replicas the live
    cluster named, the leader unknown (a ZooKeeper cluster's leaders are not on disk)."""
    cluster = VERSIONS[version]
    recorded = truth(version)
    assert len(recorded["groups"]) == 100
    for g in recorded["groups"]:
        path = f"/group/coordinator-partition?group={quote(g['group_id'], safe='')}"
        answer = server.json(f"{path}&cluster={cluster}")
        (c,) = answer["clusters"]
        assert c["partition"] == g["partition"] == coordinator_partition(g["group_id"], 6), g
        assert c["partitions"] == 6 and not c["partitions_uncertain"]
        assert c["coordinator"] is None and c["uncertain"]
        replicas = recorded["offsets_topic"]["partitions"][str(g["partition"])]["replicas"]
        assert sorted(r["broker_id"] for r in c["replicas"]) == sorted(replicas)
        if g["commit"] and not g["commit"].get("errors") and g["group_id"]:
            assert answer["in_run"], g["group_id"]


class RecordedCluster:
    """The real cluster's answers as recorded in truth.json (Metadata; FindCoordinator per
    group), in the client's shape: the service's live path on real answers, offline."""

    def __init__(self, recorded: dict[str, Any]) -> None:
        self.recorded = recorded
        self.by_group = {g["group_id"]: g["find_coordinator"] for g in recorded["groups"]}

    def offsets_topic(self) -> OffsetsTopicMetadata:
        parts = tuple(
            L(int(p), v["leader"], tuple(v["replicas"]), tuple(v["isr"]))
            for p, v in sorted(
                self.recorded["offsets_topic"]["partitions"].items(), key=lambda kv: int(kv[0])
            )
        )
        cluster = self.recorded.get("cluster_id")
        return OffsetsTopicMetadata(MetadataSource.LIVE, True, parts, "recorded", cluster)

    def brokers(self) -> list[tuple[int, str, int]]:
        return [(b["node_id"], b["host"], b["port"]) for b in self.recorded["brokers"]]

    def find_coordinator(self, group: str) -> CoordinatorLookup:
        f = self.by_group[group]
        return CoordinatorLookup(
            group, f["node_id"], f["host"], f["port"], None, CoordinatorState.READY, "recorded"
        )

    def close(self) -> None:
        pass


@pytest.mark.parametrize("version", VERSIONS)
def test_with_the_live_cluster_the_broker_is_find_coordinators(
    results: dict[str, Path], version: str
) -> None:
    """One cluster per service here: a 0.9 cluster states no cluster id, and both fixture
    clusters have brokers 0, 1, 2, so with both served the live one could be either (the
    service then attaches it to neither: test_service_cluster)."""
    recorded = truth(version)
    fake = RecordedCluster(recorded)
    with LiveServer(results[version], poll_seconds=0.2) as s:
        watcher = LiveWatcher(
            recorded["bootstrap"],
            ClientConfig(),
            connector=lambda: fake,  # type: ignore[arg-type,return-value]
            refresh_seconds=3600,
        )
        watcher.refresh()
        watcher.start()  # the worker answering FindCoordinator
        s.app.state.live = watcher
        s.app.state.clusters.live = watcher
        cluster = VERSIONS[version]
        for g in recorded["groups"]:
            path = f"/group/coordinator-partition?group={quote(g['group_id'], safe='')}"
            (c,) = s.json(f"{path}&cluster={cluster}")["clusters"]
            found = g["find_coordinator"]
            assert c["partitions_source"] == "live-cluster" and c["partition"] == g["partition"]
            assert c["coordinator"]["broker_id"] == found["node_id"], g["group_id"]
            assert (c["coordinator"]["host"], c["coordinator"]["port"]) == (
                found["host"],
                found["port"],
            )
            assert c["live"]["broker_id"] == found["node_id"] and c["loading"] is False
            assert not c["uncertain"], c["reasons"]
            leader = [r for r in c["replicas"] if r["leader"]]
            assert [r["broker_id"] for r in leader] == [found["node_id"]]
            assert c["load_estimate_seconds"] == leader[0]["load_estimate_seconds"]
        watcher.stop()


def test_a_broker_whose_scans_stopped_is_the_only_stale_one(
    results: dict[str, Path], tmp_path: Path
) -> None:
    """Broker 2 of the 2.3.0 cluster last published 5 hours ago (its manifest says so): with
    hourly scans it is stale, and only it: on /clusters, in OffsetsBrokerStale, on the page."""
    import shutil

    copy = tmp_path / "results"
    shutil.copytree(results["both"], copy, symlinks=False)
    home = copy / "publishers" / "kafka-2.3.0-broker-2"
    (run,) = (home / "runs").iterdir()
    manifest = json.loads((run / "manifest.json").read_text())
    old = datetime.now(UTC).timestamp() - 5 * 3600
    manifest["finished_at"] = datetime.fromtimestamp(old, UTC).isoformat().replace("+00:00", "Z")
    (run / "manifest.json").write_text(json.dumps(manifest))
    with LiveServer(copy, poll_seconds=0.2, scan_interval_seconds=3600) as s:
        (view,) = s.json(f"/clusters?cluster={VERSIONS['2.3.0']}")["items"]
        states = {b["broker_id"]: b["state"] for b in view["brokers"]}
        assert states == {0: "ok", 1: "ok", 2: "stale"}
        (other,) = s.json("/clusters?cluster=")["items"]
        assert {b["state"] for b in other["brokers"]} == {"ok"}
        stale = [a for a in s.json("/alerts") if a["labels"]["alertname"] == "OffsetsBrokerStale"]
        assert [(a["labels"]["cluster_id"], a["labels"]["broker_id"]) for a in stale] == [
            (VERSIONS["2.3.0"], "2")
        ]
        assert "5h 0m" in stale[0]["annotations"]["summary"]
        assert not [
            a for a in s.json("/alerts") if a["labels"]["alertname"] == "OffsetsBrokerMissing"
        ]
        _, _, body = s.get("/")
        page = body.decode()
        assert (
            page.count('class="broker stale"') == 1 and "broker 2: data 5.0 h old (stale)" in page
        )
