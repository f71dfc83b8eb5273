"""One view per cluster from every broker's published evidence: the offsets topic's partition
count and each partition's leader and replicas, decided by ``offsets_auditor.cluster`` over the
evidence of every broker of the cluster in the served view (each broker's scan publishing its
own: ``brokers.offsets_partitions_held``, ``offsets_topic_num_partitions`` and its origin, the
KRaft metadata its log dir holds), with the live cluster's metadata when ``serve
--bootstrap-server`` gives one. Never one broker's dirs alone.

Also which brokers the cluster has, so that a broker nobody scans shows: those scanned (in the
served view), those the live cluster's metadata names, the replicas a KRaft metadata log names,
and those seen in earlier runs. Pure functions over the view's rows.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from api.live import Address, LiveSnapshot, LiveWatcher
from api.results import cluster_key
from api.store import ResultsStore
from api.view import View
from offsets_auditor.cluster.coordinator_answer import PartitionView, partition_view
from offsets_auditor.cluster.evidence import BrokerEvidence, ConfigOrigin
from offsets_auditor.cluster.metadata import (
    MetadataSource,
    OffsetsTopicMetadata,
    PartitionLeadership,
)
from offsets_auditor.cluster.partition_count import PartitionCount, decide_partition_count

#: a broker of a cluster: (cluster key, broker id)
BrokerKey = tuple[str, int]


class KnownFrom:
    """Where the service learnt that a broker exists."""

    SCANNED = "scanned"
    LIVE = "live-cluster"
    KRAFT = "kraft-metadata-log"
    EARLIER = "earlier-run"


@dataclass(frozen=True, slots=True)
class ScannedBroker:
    """A broker as the served view holds it: its log dirs (each from the newest run holding
    it), the publishers of those runs, and ``data_at``: when the oldest of them finished (the
    broker's data is that old)."""

    cluster_id: str
    broker_id: int | None
    log_dirs: tuple[str, ...]
    publishers: tuple[str, ...]
    data_at: float
    evidence: BrokerEvidence
    #: ``advertised.listeners`` (else ``listeners``) of the config its scan was given
    listeners: str | None
    #: the offsets topic as a KRaft metadata log in its log dirs states it, read to
    #: ``kraft_read_to``
    kraft: OffsetsTopicMetadata | None = None
    kraft_read_to: int | None = None

    @property
    def label(self) -> str:
        return self.evidence.label


@dataclass(frozen=True, slots=True)
class ClusterState:
    """One cluster: ``scanned`` brokers, every broker known to exist (``known``: id ->
    where from), the metadata used (``live`` only when fresh), the decided ``count``."""

    cluster_id: str
    scanned: tuple[ScannedBroker, ...]
    known: dict[int, tuple[str, ...]]
    live: OffsetsTopicMetadata | None
    live_brokers: tuple[Address, ...]
    live_note: str | None
    kraft: OffsetsTopicMetadata | None
    #: the live cluster (``serve --bootstrap-server``) is this one
    live_attached: bool
    count: PartitionCount

    @property
    def evidence(self) -> list[BrokerEvidence]:
        return [b.evidence for b in self.scanned]

    def scanned_broker(self, broker_id: int | None) -> ScannedBroker | None:
        return next((b for b in self.scanned if b.broker_id == broker_id), None)

    @property
    def missing(self) -> list[int]:
        """Brokers known to exist that no served run holds."""
        have = {b.broker_id for b in self.scanned}
        return sorted(b for b in self.known if b not in have)

    def view(self, partition: int) -> PartitionView:
        return partition_view(partition, self.evidence, self.live, self.kraft)

    def views(self) -> list[PartitionView]:
        n = self.count.count if self.count.count is not None else self.count.at_least
        return [self.view(p) for p in range(n)]

    def address(self, broker_id: int) -> tuple[str, int] | None:
        return next(((h, p) for n, h, p in self.live_brokers if n == broker_id), None)


def kraft_metadata(row: Mapping[str, Any]) -> OffsetsTopicMetadata | None:
    """The offsets topic as the broker row's KRaft metadata log states it (None: no metadata
    log in that log dir, or it states nothing)."""
    text = row.get("kraft_offsets_topic_json")
    if not text:
        return None
    try:
        data = json.loads(text)
        partitions = tuple(
            PartitionLeadership(
                int(p["partition"]),
                int(p["leader"]),
                tuple(int(r) for r in p["replicas"]),
                tuple(int(r) for r in p["isr"]),
                None if p.get("leader_epoch") is None else int(p["leader_epoch"]),
            )
            for p in data["partitions"]
        )
    except (ValueError, KeyError, TypeError):
        return None
    if not data.get("exists"):
        return None
    return OffsetsTopicMetadata(
        MetadataSource.KRAFT_LOG,
        True,
        partitions,
        str(data.get("detail") or row.get("log_dir")),
        row.get("cluster_id"),
    )


def evidence_of(rows: Sequence[Mapping[str, Any]], label: str) -> BrokerEvidence:
    """One broker's evidence from its log dirs' rows (a broker with several log dirs holds the
    union of their partitions; its config is the same for all)."""
    first = rows[0]
    held: set[int] = set()
    for row in rows:
        held.update(row.get("offsets_partitions_held") or ())
    origin = first.get("offsets_topic_num_partitions_origin")
    try:
        config_origin = ConfigOrigin(origin) if origin else ConfigOrigin.UNKNOWN
    except ValueError:
        config_origin = ConfigOrigin.UNKNOWN
    value = first.get("offsets_topic_num_partitions")
    if value is None:
        config_origin = ConfigOrigin.UNKNOWN
    return BrokerEvidence(
        label,
        first.get("broker_id"),
        first.get("cluster_id") or None,
        frozenset(held),
        value if config_origin is not ConfigOrigin.UNKNOWN else None,
        config_origin,
    )


def scanned_brokers(
    brokers: Iterable[Mapping[str, Any]], configs: Mapping[str, Mapping[str, str]]
) -> dict[str, list[ScannedBroker]]:
    """The view's broker rows (one per log dir) as brokers, per cluster. ``configs``:
    publisher -> the broker config its newest run was given."""
    grouped: dict[tuple[str, int | None, str], list[Mapping[str, Any]]] = {}
    for row in brokers:
        cluster = cluster_key(row.get("cluster_id"))
        broker = row.get("broker_id")
        # a log dir without a broker id is a broker of its own
        key = (cluster, broker, "" if broker is not None else row.get("log_dir") or "")
        grouped.setdefault(key, []).append(row)
    out: dict[str, list[ScannedBroker]] = {}
    for (cluster, broker, _), rows in sorted(grouped.items(), key=lambda kv: _order(kv[0])):
        publishers = tuple(sorted({str(r.get("publisher") or "") for r in rows}))
        label = ", ".join(p for p in publishers if p) or str(rows[0].get("log_dir"))
        config = configs.get(publishers[0], {}) if publishers else {}
        krafts = [(r.get("kraft_metadata_read_to") or -1, r) for r in rows]
        read_to, kraft_row = max(krafts, key=lambda x: x[0])
        out.setdefault(cluster, []).append(
            ScannedBroker(
                cluster,
                broker,
                tuple(str(r.get("log_dir")) for r in rows),
                publishers,
                min(float(r.get("run_finished_at") or 0.0) for r in rows),
                evidence_of(rows, label),
                config.get("advertised.listeners") or config.get("listeners"),
                kraft_metadata(kraft_row),
                None if read_to < 0 else read_to,
            )
        )
    return out


def _order(key: tuple[str, int | None, str]) -> tuple[str, int, str]:
    cluster, broker, log_dir = key
    return (cluster, -1 if broker is None else broker, log_dir)


def live_cluster_of(
    snapshot: LiveSnapshot | None, scanned: Mapping[str, Sequence[ScannedBroker]]
) -> tuple[str | None, str | None]:
    """(the scanned cluster the live one is, how that was decided when not by its id). By its
    cluster id (Metadata v2+, Kafka 0.10.1+); else, since ZooKeeper-mode log dirs have no
    cluster id before 2.4 (and 0.9's Metadata has none either), the one scanned cluster whose
    brokers are all brokers of the live cluster, when exactly one is."""
    if snapshot is None or snapshot.metadata is None:
        return None, None
    said = snapshot.metadata.cluster_id
    if said and said in scanned:
        return said, None
    live = {node for node, _host, _port in snapshot.brokers}
    candidates = [
        name
        for name, brokers in scanned.items()
        if (name == "" or not said)
        and (ids := {b.broker_id for b in brokers if b.broker_id is not None})
        and ids <= live
    ]
    if len(candidates) != 1:
        return None, None
    (name,) = candidates
    members = sorted(b.broker_id for b in scanned[name] if b.broker_id is not None)
    why = "has no cluster id in its Metadata (before 0.10.1)" if not said else f"is {said}"
    shown = f"'{name}'" if name else "without a cluster id"
    return name, (
        f"the live cluster ({snapshot.bootstrap}) {why}; taken to be the scanned cluster {shown}:"
        f" its brokers {', '.join(map(str, members))} are all in the live metadata"
    )


def build_clusters(
    scanned: Mapping[str, Sequence[ScannedBroker]],
    seen: Mapping[BrokerKey, float],
    live: LiveSnapshot | None,
    live_max_age: float,
    now: float,
) -> dict[str, ClusterState]:
    """Every cluster of the view (and a cluster known only from earlier runs), decided."""
    names = set(scanned) | {c for c, _ in seen}
    attached, matched = live_cluster_of(live, scanned)
    out = {}
    for cluster in sorted(names):
        brokers = list(scanned.get(cluster, ()))
        known: dict[int, list[str]] = {}
        for b in brokers:
            if b.broker_id is not None:
                known.setdefault(b.broker_id, []).append(KnownFrom.SCANNED)
        kraft = _newest_kraft(brokers)
        if kraft is not None:
            for p in kraft.partitions:
                for r in p.replicas:
                    known.setdefault(r, []).append(KnownFrom.KRAFT)
        meta: OffsetsTopicMetadata | None = None
        addresses: tuple[Address, ...] = ()
        note: str | None = None
        if live is not None and attached == cluster:
            addresses = live.brokers
            note = matched
            age = None if live.at is None else now - live.at
            if age is not None and age <= live_max_age:
                meta = live.metadata
            else:
                note = (
                    f"the live cluster ({live.bootstrap}) has not answered for"
                    f" {'ever' if age is None else f'{age:,.0f} s'}: not used"
                    + (f" ({live.error})" if live.error else "")
                )
            for node, _host, _port in live.brokers:
                known.setdefault(node, []).append(KnownFrom.LIVE)
        for (c, broker), _at in seen.items():
            if c == cluster:
                known.setdefault(broker, []).append(KnownFrom.EARLIER)
        evidence = [b.evidence for b in brokers]
        out[cluster] = ClusterState(
            cluster,
            tuple(brokers),
            {b: tuple(dict.fromkeys(w)) for b, w in sorted(known.items())},
            meta,
            tuple(addresses),
            note,
            kraft,
            attached == cluster,
            decide_partition_count(evidence, meta, kraft),
        )
    return out


def _newest_kraft(brokers: Sequence[ScannedBroker]) -> OffsetsTopicMetadata | None:
    """The KRaft metadata read furthest among the brokers' log dirs (a controller's or a
    broker's copy of ``__cluster_metadata``)."""
    found = [b for b in brokers if b.kraft is not None]
    newest = max(found, key=lambda b: b.kraft_read_to or -1, default=None)
    return None if newest is None else newest.kraft


class ClusterViews:
    """The clusters of the served view, built once per change of the store or of the live
    cluster's snapshot (and every ``10`` s, as the live snapshot ages)."""

    def __init__(self, store: ResultsStore, live: LiveWatcher | None, live_max_age: float) -> None:
        self.store = store
        self.live = live
        self.live_max_age = live_max_age
        self._key: object = None
        self._value: tuple[View | None, dict[str, ClusterState]] = (None, {})

    def now(self, now: float) -> tuple[View | None, dict[str, ClusterState]]:
        view = self.store.current
        live = None if self.live is None else self.live.snapshot()
        key = (id(view), self.store.version, id(live), int(now // 10))
        if key != self._key:
            self._value = (view, self.build(view, live, now))
            self._key = key
        return self._value

    def build(
        self, view: View | None, live: LiveSnapshot | None, now: float
    ) -> dict[str, ClusterState]:
        if view is None:
            return build_clusters({}, self.store.seen, live, self.live_max_age, now)
        configs = {
            name: (state.served.tables.manifest.get("config") or {}).get("properties") or {}
            for name, state in self.store.publishers.items()
            if state.served is not None
        }
        scanned = scanned_brokers(view.brokers, configs)
        return build_clusters(scanned, self.store.seen, live, self.live_max_age, now)
