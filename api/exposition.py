"""What the service exposes, now and at any moment of the history it keeps: the metric
families of ``api.samples`` over the state of that moment. The state at ``t``: each
publisher's newest readable run finished by ``t`` (``api.view``'s rule for a log dir two
publishers hold), the failures recorded by ``t``, the runs found unreadable by ``t``.

``GET /metrics`` renders :meth:`Exposition.families_at` now; ``GET /alerts`` evaluates the
alert rules over :meth:`Exposition.timeline`, one snapshot per change, built lazily and only
for the metrics a rule reads. A run's families are computed once (runs never change).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass

from api.cluster import ClusterViews, build_clusters, scanned_brokers
from api.promql import Snapshot, Timeline, Vector
from api.results import RunTables
from api.samples import (
    Family,
    PublisherAt,
    cluster_families,
    data_families,
    publisher_families,
    service_families,
)
from api.store import ResultsStore
from api.view import LogDirKey, broker_rows, current_log_dirs, log_dir_key, merged_rows


@dataclass(frozen=True, slots=True)
class State:
    """The store at one moment."""

    runs: tuple[RunTables, ...]
    publishers: tuple[PublisherAt, ...]
    load_errors: int
    #: publisher -> its newest run, found unreadable, when newer than the one it serves
    unreadable: dict[str, str]


class Exposition:
    def __init__(self, store: ResultsStore, clusters: ClusterViews | None = None) -> None:
        self.store = store
        #: the live cluster's snapshot, when the service has one (present knowledge: used at
        #: every moment of the history)
        self.clusters = clusters
        self._runs: dict[tuple[str, str], tuple[Family, ...]] = {}

    def state_at(self, t: float) -> State:
        runs, publishers = [], []
        for state in self.store.publishers.values():
            run = next((r for r in reversed(state.history) if r.finished_at <= t), None)
            since = run.finished_at if run is not None else float("-inf")
            before = [f for f in state.failures if f.failed_at <= t]
            if run is not None:
                runs.append(run)
            publishers.append(
                PublisherAt(
                    name=state.name,
                    run_id=None if run is None else run.run_id,
                    run_finished_at=None if run is None else run.finished_at,
                    run_duration_seconds=(
                        None if run is None else run.manifest.get("duration_seconds")
                    ),
                    failures=sum(f.failed_at > since for f in before),
                    last_failure_at=max((f.failed_at for f in before), default=None),
                )
            )
        errors = [e for e in self.store.load_errors() if e.at <= t]
        served = {r.publisher: r.run_id for r in runs}
        unreadable: dict[str, str] = {}
        for e in errors:
            if e.run_id > max(served.get(e.publisher, ""), unreadable.get(e.publisher, "")):
                unreadable[e.publisher] = e.run_id
        return State(
            runs=tuple(runs),
            publishers=tuple(publishers),
            load_errors=len(errors),
            unreadable=unreadable,
        )

    def families_at(self, t: float) -> list[Family]:
        """Every family as exposed at ``t``, the runs' series joined."""
        state = self.state_at(t)
        families: dict[str, Family] = {f.name: f for f in self._own(state)}
        families.update({f.name: f for f in self._cluster(state, t)})
        for part in self._data(state):
            for family in part:
                mine = families.get(family.name)
                families[family.name] = (
                    family
                    if mine is None
                    else Family(
                        mine.name, mine.kind, mine.help, mine.labels, mine.series + family.series
                    )
                )
        return list(families.values())

    def snapshot_at(self, t: float) -> Snapshot:
        """What a scrape at ``t`` saw, its vectors built when a rule first reads them."""
        state = self.state_at(t)
        return Snapshot(
            t,
            _Samples(lambda: [self._own(state), self._cluster(state, t), *self._data(state)]),
        )

    def timeline(self, now: float) -> Timeline:
        """One snapshot per change up to ``now``: the service's start, each kept run's end, each
        failure and each unreadable run found."""
        store = self.store
        points = {store.started_at}
        for state in store.publishers.values():
            points |= {r.finished_at for r in state.history}
            points |= {f.failed_at for f in state.failures}
        points |= {e.at for e in store.load_errors()}
        return Timeline(tuple(self.snapshot_at(t) for t in sorted(p for p in points if p <= now)))

    def _own(self, state: State) -> tuple[Family, ...]:
        return (
            *service_families(
                loaded=bool(state.runs),
                load_errors_total=state.load_errors,
                unreadable=state.unreadable,
                newest_run_at=max((r.finished_at for r in state.runs), default=None),
            ),
            *publisher_families(state.publishers),
        )

    def _cluster(self, state: State, t: float) -> tuple[Family, ...]:
        """The families only the runs of every publisher together show (``api.cluster``)."""
        owner = current_log_dirs(state.runs)
        brokers = broker_rows(state.runs, owner)
        partitions = merged_rows(state.runs, "partitions", owner)
        findings = merged_rows(state.runs, "findings", owner)
        view = self.store.current
        served = {(r.publisher, r.run_id) for r in state.runs}
        if view is not None and served == {(r.tables.publisher, r.run_id) for r in view.runs}:
            findings = findings + view.cross_findings  # what the service found between runs
        seen = {k: at for k, at in self.store.seen.items() if at <= t}
        live = None if self.clusters is None or self.clusters.live is None else self.clusters.live
        max_age = float("inf") if self.clusters is None else self.clusters.live_max_age
        clusters = build_clusters(
            scanned_brokers(brokers, {}),
            seen,
            None if live is None else live.snapshot(),
            max_age,
            time.time(),
        )
        return tuple(cluster_families(partitions, findings, clusters))

    def _data(self, state: State) -> list[tuple[Family, ...]]:
        """Each run's families; a run some of whose log dirs a newer run holds, less those."""
        owner = current_log_dirs(state.runs)
        parts = []
        for run in state.runs:
            whole = all(owner.get(k) is run for k in _keys(run))
            if whole:
                parts.append(self._run(run))
            else:
                parts.append(tuple(_families(run, owner)))
        return parts

    def _run(self, run: RunTables) -> tuple[Family, ...]:
        key = (run.publisher, run.run_id)
        if key not in self._runs:
            alone = current_log_dirs([run])
            self._runs[key] = tuple(_families(run, alone))
            live = {(s.name, r.run_id) for s in self.store.publishers.values() for r in s.history}
            for gone in set(self._runs) - live:
                del self._runs[gone]
        return self._runs[key]


def _keys(run: RunTables) -> list[LogDirKey]:
    return [log_dir_key(b) for b in run.brokers]


def _families(run: RunTables, owner: dict[LogDirKey, RunTables]) -> list[Family]:
    return data_families(
        broker_rows([run], owner),
        merged_rows([run], "partitions", owner),
        merged_rows([run], "findings", owner),
    )


class _Samples(Mapping[str, Vector]):
    """A snapshot's vectors by metric name, joined across its parts on first read."""

    def __init__(self, parts: Callable[[], list[tuple[Family, ...]]]) -> None:
        self._parts = parts
        self._by_name: dict[str, list[Family]] | None = None
        self._vectors: dict[str, Vector] = {}

    def _index(self) -> dict[str, list[Family]]:
        if self._by_name is None:
            self._by_name = {}
            for part in self._parts():
                for family in part:
                    self._by_name.setdefault(family.name, []).append(family)
        return self._by_name

    def __getitem__(self, name: str) -> Vector:
        if name not in self._vectors:
            families = self._index()[name]
            vector: Vector = {}
            for family in families:
                vector.update(family.vector())
            self._vectors[name] = vector
        return self._vectors[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._index())

    def __len__(self) -> int:
        return len(self._index())
