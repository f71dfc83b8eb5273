"""Issue 20's acceptance on REAL clusters (opt-in: OFFSETS_AUDITOR_BROKER_TESTS=1): one
ZooKeeper and three brokers on loopback (scripts/fixtures/kafka_cluster.sh), the offsets topic
of 6 partitions with replication factor 2 (no broker holds every partition), groups committing
all along. Each broker's log dir is scanned by its own ``offsets-auditor scan`` process (its own
publisher, its own server.properties) into one results dir; the service (with
``--bootstrap-server``) merges them.

2.3.0: one cluster of 3 brokers, every offsets partition with its replicas as the live metadata
names them; for 100 group ids the coordinator partition is ``Utils.abs(hashCode) % 6`` and the
broker is FindCoordinator's answer (asked by the test itself, kafka-python's raw request); then
broker 2's scans stop while brokers 0 and 1 are scanned again: broker 2, and only it, goes
stale. 0.9.0.1: the same lookups (GroupCoordinator v0).

Ports: ZK_PORT / KAFKA_PORT (2.3.0, default 27682 / 34692..34694) and ZK09_PORT / KAFKA09_PORT
(0.9.0.1, default 28682 / 35692..35694). About 10 minutes on 2 cores.
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest

from offsets_auditor.coordinator import coordinator_partition
from tests.support.service import LiveServer

pytestmark = [
    pytest.mark.broker,
    pytest.mark.slow,
    pytest.mark.skipif(
        os.environ.get("OFFSETS_AUDITOR_BROKER_TESTS") != "1",
        reason="drives real Kafka 2.3.0 and 0.9.0.1 clusters: set OFFSETS_AUDITOR_BROKER_TESTS=1",
    ),
]

ROOT = Path(__file__).resolve().parent.parent.parent
SCRIPT = ROOT / "scripts" / "fixtures" / "kafka_cluster.sh"
CLI = Path(sys.executable).parent / "offsets-auditor"
PORTS = {
    "2.3.0": (os.environ.get("ZK_PORT", "27682"), int(os.environ.get("KAFKA_PORT", "34692"))),
    "0.9.0.1": (os.environ.get("ZK09_PORT", "28682"), int(os.environ.get("KAFKA09_PORT", "35692"))),
}
API = {"2.3.0": None, "0.9.0.1": (0, 9)}
GROUPS = ["payments/v2", "", "zahlungen-ü", "😀-emoji", "polygenelubricants", "Aa", "BB"] + [
    f"cg-{i:03d}" for i in range(93)
]
#: the scans' schedule told to the service: a broker's data is stale after 3 intervals
INTERVAL = 40.0
#: what the test measured, printed at the end (pytest -s) for the report
MEASURED: dict[str, Any] = {}


def _cluster(version: str, work: Path, command: str, *args: str) -> str:
    zk, kafka = PORTS[version]
    env = {**os.environ, "ZK_PORT": zk, "KAFKA_PORT": str(kafka)}
    done = subprocess.run(
        [str(SCRIPT), version, command, str(work), *args],
        env=env,
        check=True,
        timeout=600,
        capture_output=True,
        text=True,
    )
    return done.stdout


class Committer:
    """Commits for every group, again and again (OffsetCommit through kafka-python's admin
    client), until stopped: the brokers write while they are scanned."""

    def __init__(self, version: str) -> None:
        from kafka import KafkaAdminClient

        _, port = PORTS[version]
        self.admin = KafkaAdminClient(
            bootstrap_servers=f"127.0.0.1:{port}",
            api_version=API[version],
            request_timeout_ms=10000,
        )
        self.rounds = 0
        self.commits = 0
        self.errors: list[str] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def commit_all(self, offset: int) -> None:
        from kafka.structs import OffsetAndMetadata, TopicPartition

        for g in GROUPS:
            offsets = {
                TopicPartition("orders", p): OffsetAndMetadata(offset + p, "m", -1)
                for p in range(3)
            }
            for _ in range(30):
                try:
                    self.admin.alter_group_offsets(g, offsets)
                    self.commits += 1
                    break
                except Exception as error:  # a coordinator moving or loading: try again
                    self.errors.append(f"{g}: {type(error).__name__}")
                    time.sleep(0.5)
        self.rounds += 1

    def _run(self) -> None:
        while not self._stop.is_set():
            self.commit_all(100 + self.rounds)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(timeout=120)
        self.admin.close()


def _find_coordinator(version: str, groups: list[str]) -> dict[str, tuple[int, str, int]]:
    """FindCoordinator (0.9: GroupCoordinator v0) for each group, kafka-python's raw request:
    (node id, host, port)."""
    from kafka.net.compat import KafkaNetClient
    from kafka.protocol.metadata import FindCoordinatorRequest

    _, port = PORTS[version]
    client = KafkaNetClient(
        bootstrap_servers=f"127.0.0.1:{port}", api_version=API[version], request_timeout_ms=10000
    )
    client._manager.bootstrap(30000)
    out = {}
    try:
        for g in groups:
            for _ in range(30):
                r = client.send_and_receive(
                    client.least_loaded_node(),
                    FindCoordinatorRequest(key=g, key_type=0, max_version=2),
                    10000,
                )
                if r.error_code == 0:
                    out[g] = (r.node_id, r.host, r.port)
                    break
                time.sleep(0.5)
    finally:
        client.close()
    return out


def _scan(work: Path, results: Path, broker: int, cluster_id: str | None) -> subprocess.Popen:
    b = work / f"broker-{broker}"
    args = [
        str(CLI),
        "scan",
        str(b / "kafka-logs"),
        "--broker-config",
        str(b / "server.properties"),
        "--out",
        str(results),
        "--publisher",
        f"broker-{broker}",
        "--master",
        "local[1]",
        "--driver-memory",
        "1g",
    ]
    if cluster_id:
        args.append(f"--cluster-id={cluster_id}")  # an id may begin with "-"
    return subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)


def _scans(work: Path, results: Path, brokers: list[int], cluster_id: str | None) -> float:
    """The brokers' scans as separate processes at once; their wall time."""
    started = time.monotonic()
    running = [(b, _scan(work, results, b, cluster_id)) for b in brokers]
    for b, process in running:
        out, _ = process.communicate(timeout=900)
        assert process.returncode in (0, 1, 2), (b, out[-3000:])
    return time.monotonic() - started


def _start(version: str, work: Path) -> Committer:
    _cluster(version, work, "start", "3", "auto.create.topics.enable=false")
    zk, _ = PORTS[version]
    _cluster(
        version,
        work,
        "tool",
        "kafka-topics.sh",
        "--zookeeper",
        f"127.0.0.1:{zk}",
        "--create",
        "--topic",
        "orders",
        "--partitions",
        "3",
        "--replication-factor",
        "2",
    )
    time.sleep(2)
    committer = Committer(version)
    committer.commit_all(10)  # creates the offsets topic and every group
    return committer


def _lookups(server: LiveServer, version: str, cluster: str) -> None:
    truth = _find_coordinator(version, GROUPS)
    assert len(truth) == len(GROUPS)
    agreed = answered_live = 0
    for g in GROUPS:
        path = f"/group/coordinator-partition?group={quote(g, safe='')}&cluster={cluster}"
        (c,) = server.json(path)["clusters"]
        assert c["partition"] == coordinator_partition(g, 6), g
        assert (c["partitions"], c["partitions_source"]) == (6, "live-cluster"), c["reasons"]
        node, host, port = truth[g]
        assert c["coordinator"]["broker_id"] == node, (g, c["reasons"])
        assert (c["coordinator"]["host"], c["coordinator"]["port"]) == (host, port)
        leader = [r["broker_id"] for r in c["replicas"] if r["leader"]]
        assert leader == [node] and len(c["replicas"]) == 2
        agreed += 1
        if c["live"] is not None and not c["live"]["pending"]:
            assert c["live"]["broker_id"] == node
            answered_live += 1
    MEASURED[f"{version} lookups"] = (
        f"{agreed}/100 agree; service's own FindCoordinator {answered_live}"
    )


def _one_cluster(server: LiveServer, cluster: str) -> dict[str, Any]:
    page = server.json("/clusters")
    assert [c["cluster_id"] for c in page["items"]] == [cluster]
    (view,) = page["items"]
    assert [b["broker_id"] for b in view["brokers"]] == [0, 1, 2]
    for p in view["offsets_partitions"]:
        assert p["source"] == "live-cluster"
        assert sorted(r["broker_id"] for r in p["on_disk"]) == sorted(p["replicas"]), p
    assert len(view["offsets_partitions"]) == 6
    return view


def test_three_scans_one_view_2_3_0(tmp_path: Path) -> None:
    version = "2.3.0"
    work, results = tmp_path / "cluster", tmp_path / "results"
    committer = None
    try:
        committer = _start(version, work)
        from offsets_auditor.live_cluster.client import LiveError, connect
        from offsets_auditor.live_cluster.client_config import ClientConfig

        _, port = PORTS[version]
        live = connect(f"127.0.0.1:{port}", ClientConfig(), timeout_s=10)
        assert not isinstance(live, LiveError), live
        with live:
            meta = live.offsets_topic()
        cluster = meta.cluster_id  # type: ignore[union-attr]
        assert cluster  # the brokers' log dirs have none (2.3.0): the scans are given it
        committer.start()
        first = _scans(work, results, [0, 1, 2], cluster)
        MEASURED["first round: 3 scans at once"] = f"{first:.1f} s"
        with LiveServer(
            results,
            poll_seconds=0.5,
            scan_interval_seconds=INTERVAL,
            bootstrap_server=f"127.0.0.1:{port}",
            live_refresh_seconds=5,
        ) as server:
            deadline = time.monotonic() + 60
            while server.app.state.live.snapshot().metadata is None:
                assert time.monotonic() < deadline, server.app.state.live.snapshot().error
                time.sleep(0.5)
            view = _one_cluster(server, cluster)
            assert {b["state"] for b in view["brokers"]} == {"ok"}
            _lookups(server, version, cluster)
            # broker 2's scans stop; 0 and 1 go on, until broker 2's data is over 3 intervals
            rounds = 0
            broker2 = next(b["data_age_seconds"] for b in view["brokers"] if b["broker_id"] == 2)
            since = time.monotonic() - broker2
            while time.monotonic() - since < 3 * INTERVAL + 5:
                _scans(work, results, [0, 1], cluster)
                rounds += 1
            time.sleep(1.5)  # the service's poll
            (view,) = server.json(f"/clusters?cluster={cluster}")["items"]
            states = {b["broker_id"]: b["state"] for b in view["brokers"]}
            MEASURED["after broker 2's scans stopped"] = (
                f"{rounds} more rounds of brokers 0 and 1; states {states}; ages "
                + ", ".join(
                    f"{b['broker_id']}: {b['data_age_seconds']:.0f} s" for b in view["brokers"]
                )
            )
            assert states == {0: "ok", 1: "ok", 2: "stale"}
            alerts = [
                a["labels"] for a in server.json("/alerts")
                if a["labels"]["alertname"] == "OffsetsBrokerStale"
            ]  # fmt: skip
            assert [(a["cluster_id"], a["broker_id"]) for a in alerts] == [(cluster, "2")]
            MEASURED["commits while scanned"] = (
                f"{committer.commits} commits in {committer.rounds} rounds,"
                f" {len(committer.errors)} retried"
            )
    finally:
        if committer is not None:
            committer.stop()
        _cluster(version, work, "stop")
        print("\nMEASURED", MEASURED)


def test_the_same_lookups_on_0_9_0_1(tmp_path: Path) -> None:
    version = "0.9.0.1"
    work, results = tmp_path / "cluster", tmp_path / "results"
    committer = None
    try:
        committer = _start(version, work)
        committer.start()
        took = _scans(work, results, [0, 1, 2], None)  # 0.9: no cluster id anywhere
        MEASURED["0.9.0.1: 3 scans at once"] = f"{took:.1f} s"
        _, port = PORTS[version]
        with LiveServer(
            results,
            poll_seconds=0.5,
            bootstrap_server=f"127.0.0.1:{port}",
            live_refresh_seconds=5,
        ) as server:
            deadline = time.monotonic() + 60
            while server.app.state.live.snapshot().metadata is None:
                assert time.monotonic() < deadline, server.app.state.live.snapshot().error
                time.sleep(0.5)
            view = _one_cluster(server, "")
            assert any("has no cluster id in its Metadata" in r for r in view["reasons"])
            _lookups(server, version, "")
    finally:
        if committer is not None:
            committer.stop()
        _cluster(version, work, "stop")
        print("\nMEASURED", MEASURED)
