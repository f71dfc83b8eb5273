"""What is served, and how new runs are picked up. ``ResultsStore.refresh`` (at start, then
every ``poll_seconds`` from ``Poller``) looks at every publisher of the results dir
(``api.publishers``): it loads a publisher's newest run when it is not the one served, reads
the small tables of every kept run once (the history behind trends and alerts) and its failure
records, and merges the newest run of each publisher into the served :class:`~api.view.View`.

An unreadable run is counted once, reported (``/readyz``, the ``offsets_auditor_results_*``
metrics, ``OffsetsResultsUnreadable``) and never retried; that publisher's previous run stays
served (at start: its newest readable one). Once the run is gone (deleted, or pruned by
``--keep``) and LATEST no longer names it, it is forgotten: it is reported no more (the
counter keeps counting). The results dir need not exist yet: the service
waits for the first scan, and says so.
"""

from __future__ import annotations

import logging
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from api.publishers import Failure, Publisher, publishers
from api.results import (
    LoadedRun,
    RunTables,
    UnreadableRun,
    cluster_key,
    load_run,
    read_run_tables,
)
from api.view import View, merge

log = logging.getLogger("offsets_auditor.serve")


@dataclass(frozen=True, slots=True)
class LoadError:
    run_id: str
    message: str
    at: float
    publisher: str = ""


@dataclass
class PublisherState:
    """One publisher as the store knows it."""

    publisher: Publisher
    #: its run served (None until one is read)
    served: LoadedRun | None = None
    #: the small tables of every kept run that reads, oldest first
    history: list[RunTables] = field(default_factory=list)
    #: its failure records, oldest first
    failures: list[Failure] = field(default_factory=list)
    #: its newest run, when that could not be read (the served one is older)
    newest_error: LoadError | None = None

    @property
    def name(self) -> str:
        return self.publisher.name

    def failures_since_served(self) -> list[Failure]:
        """The failures since its served run finished (all of them when none is served)."""
        since = self.served.finished_at if self.served is not None else float("-inf")
        return [f for f in self.failures if f.failed_at > since]


class ResultsStore:
    def __init__(self, results: Path, now: float | None = None) -> None:
        self.results = results
        #: when the service started: the history before any run begins here
        self.started_at = time.time() if now is None else now
        self.publishers: dict[str, PublisherState] = {}
        #: the served view (None until a run is read)
        self.current: View | None = None
        #: every broker seen in a run read since the service started, with the newest run's
        #: end: a broker of a cluster that no served run holds any more is missing
        self.seen: dict[tuple[str, int], float] = {}
        #: runs that could not be read, each counted once
        self.load_errors_total = 0
        #: changes whenever anything the service shows may have (runs, history, failures)
        self.version = 0
        self._signature: object = None
        self._failed: dict[tuple[str, str], LoadError] = {}
        self._tables: dict[tuple[str, str], RunTables] = {}
        self._lock = threading.Lock()

    @property
    def newest_error(self) -> LoadError | None:
        """The newest unreadable run among the publishers' newest ones, if any."""
        errors = [s.newest_error for s in self.publishers.values() if s.newest_error is not None]
        return max(errors, key=lambda e: e.at) if errors else None

    def refresh(self) -> None:
        with self._lock:
            changed = False
            found = {p.name: p for p in publishers(self.results)}
            for name in set(self.publishers) - set(found):
                del self.publishers[name]
                self._forget_failures(name, keep=set())
                changed = True
            for name, publisher in found.items():
                state = self.publishers.setdefault(name, PublisherState(publisher))
                changed |= self._refresh(state)
                for run in state.history:
                    for b in run.brokers:
                        if b.get("broker_id") is not None:
                            key = (cluster_key(b.get("cluster_id")), int(b["broker_id"]))
                            self.seen[key] = max(self.seen.get(key, 0.0), run.finished_at)
            if changed:
                served = [s.served for s in self.publishers.values() if s.served is not None]
                self.current = merge(served) if served else None
            signature = (
                tuple(
                    (n, tuple(r.run_id for r in s.history), len(s.failures))
                    for n, s in sorted(self.publishers.items())
                ),
                None if self.current is None else self.current.run_ids,
                len(self._failed),
                len(self.seen),
            )
            if signature != self._signature:
                self._signature = signature
                self.version += 1

    def _refresh(self, state: PublisherState) -> bool:
        """Bring one publisher up to date; True when its served run changed."""
        publisher = state.publisher
        ids = publisher.run_ids()
        latest = publisher.latest_id()
        self._forget_failures(publisher.name, keep={*ids, latest})
        if state.newest_error is not None and state.newest_error.run_id != latest:
            state.newest_error = None  # LATEST names another run now (the broken one deleted)
        changed = self._serve_latest(state, ids)
        tables = [self._run_tables(publisher, r) for r in ids]
        history = [
            t for t in tables if t is not None and (publisher.name, t.run_id) not in self._failed
        ]
        served = state.served
        if served is not None and served.run_id not in {t.run_id for t in history}:
            history.append(served.tables)  # served, though gone from disk since: still shown
            history.sort(key=lambda t: t.run_id)
        state.history = history
        for key in [k for k in self._tables if k[0] == publisher.name and k[1] not in ids]:
            del self._tables[key]  # pruned by its publisher
        state.failures = publisher.failures()
        return changed

    def _forget_failures(self, publisher: str, keep: set[str | None]) -> None:
        """Forget the unreadable runs of ``publisher`` that are gone: neither in its runs nor
        named by its LATEST."""
        for key in [k for k in self._failed if k[0] == publisher and k[1] not in keep]:
            del self._failed[key]

    def _serve_latest(self, state: PublisherState, ids: list[str]) -> bool:
        """Serve the publisher's newest run (or, at start, its newest readable one)."""
        publisher = state.publisher
        latest = publisher.latest_id()
        if latest is None or (state.served is not None and latest == state.served.run_id):
            return False
        if (publisher.name, latest) in self._failed:
            return False
        run = self._load(publisher, latest)
        if run is not None:
            state.served, state.newest_error = run, None
            return True
        state.newest_error = self._failed[(publisher.name, latest)]
        if state.served is not None:
            return False
        for run_id in reversed([r for r in ids if r < latest]):  # at start: the newest that reads
            if (publisher.name, run_id) not in self._failed:
                run = self._load(publisher, run_id)
                if run is not None:
                    state.served = run
                    return True
        return False

    def _run_tables(self, publisher: Publisher, run_id: str) -> RunTables | None:
        key = (publisher.name, run_id)
        if key not in self._tables and key not in self._failed:
            try:
                self._tables[key] = read_run_tables(publisher.run_dir(run_id), publisher.name)
            except UnreadableRun as error:
                self._fail(publisher, run_id, str(error))
            except Exception as error:  # anything else a damaged file makes a reader raise
                self._fail(publisher, run_id, f"{type(error).__name__}: {error}")
        return self._tables.get(key)

    def _load(self, publisher: Publisher, run_id: str) -> LoadedRun | None:
        run_dir = publisher.run_dir(run_id)
        try:
            if not run_dir.is_dir():
                raise UnreadableRun(f"LATEST names run {run_id}, which is not in runs/")
            tables = self._run_tables(publisher, run_id)
            if tables is None:
                return None
            run = load_run(run_dir, publisher.name, tables)
        except UnreadableRun as error:
            self._fail(publisher, run_id, str(error))
            return None
        except Exception as error:  # anything else a damaged file makes a reader raise
            self._fail(publisher, run_id, f"{type(error).__name__}: {error}")
            log.exception("run %s of %r is unreadable", run_id, publisher.name)
            return None
        log.info("serving run %s of publisher %r", run_id, publisher.name)
        return run

    def _fail(self, publisher: Publisher, run_id: str, message: str) -> None:
        key = (publisher.name, run_id)
        if key in self._failed:
            return
        self._failed[key] = LoadError(run_id, message, time.time(), publisher.name)
        self.load_errors_total += 1
        log.warning(
            "run %s of %r is unreadable, keeping the previous one: %s", run_id, *key[:1], message
        )

    def load_errors(self) -> list[LoadError]:
        """Every run found unreadable, in the order found."""
        return list(self._failed.values())

    def failed_run(self, run_id: str) -> LoadError | None:
        """Why ``run_id`` could not be read, if it could not."""
        return next((e for (_, r), e in self._failed.items() if r == run_id), None)

    def readiness(self) -> tuple[bool, str]:
        view, error = self.current, self.newest_error
        if view is None:
            if error is not None:
                return False, (
                    f"no readable run: the newest, {error.run_id}, is unreadable: {error.message}"
                )
            failing = [s for s in self.publishers.values() if s.failures]
            if failing:
                last = max((f for s in failing for f in s.failures), key=lambda f: f.failed_at)
                return False, (
                    f"no run published in {self.results} yet; the last scan failed"
                    f" ({last.publisher or 'results dir'}): {last.reason}"
                )
            return False, f"waiting for the first scan to publish in {self.results}"
        runs = ", ".join(f"{r.tables.publisher or '-'}: {r.run_id}" for r in view.runs)
        if error is not None:
            return True, (
                f"serving {runs}; the newest run, {error.run_id}, is unreadable: {error.message}"
            )
        return True, f"serving {runs}"


class Poller:
    """A daemon thread calling ``store.refresh()`` every ``seconds`` until ``stop()``."""

    def __init__(self, store: ResultsStore, seconds: float) -> None:
        self._store = store
        self._seconds = seconds
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="results-poller", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(timeout=10)

    def _run(self) -> None:
        while not self._stop.wait(self._seconds):
            try:
                self._store.refresh()
            except Exception:  # keep polling: the next run may be fine
                log.exception("refreshing the results failed")
