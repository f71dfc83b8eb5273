"""The run being served, and how a new one is picked up: ``ResultsStore.refresh`` (called at
start and then every ``poll_seconds`` by ``Poller``) loads the run ``LATEST`` names when it is
not the one served. An unreadable run is counted once, reported (``/readyz``, the
``offsets_auditor_results_*`` metrics, ``OffsetsResultsUnreadable``) and never retried; the
previous run stays served. At start, with an unreadable newest run, the newest readable older
run is served.
"""

from __future__ import annotations

import logging
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from api.history import RunHistory, RunTrend
from api.results import LoadedRun, UnreadableRun, load_run
from offsets_auditor import published

log = logging.getLogger("offsets_auditor.serve")


@dataclass(frozen=True, slots=True)
class LoadError:
    run_id: str
    message: str
    at: float


class ResultsStore:
    def __init__(self, results: Path) -> None:
        self.results = results
        self.history = RunHistory(results)
        #: the run served (None until one is read)
        self.current: LoadedRun | None = None
        #: the newest run, when it could not be read (the served one is older)
        self.newest_error: LoadError | None = None
        #: runs that could not be read, each counted once
        self.load_errors_total = 0
        self.trends: list[RunTrend] = []
        self._failed: dict[str, LoadError] = {}
        self._lock = threading.Lock()

    def latest_id(self) -> str | None:
        """The run ``LATEST`` names, else the newest in ``runs/``."""
        try:
            named = (self.results / published.LATEST).read_text(encoding="utf-8").strip()
        except OSError:
            named = ""
        if named:
            return named
        ids = self._run_ids()
        return ids[-1] if ids else None

    def _run_ids(self) -> list[str]:
        try:
            runs = (self.results / published.RUNS).iterdir()
            return sorted(p.name for p in runs if (p / published.MANIFEST).is_file())
        except OSError:
            return []

    def refresh(self) -> None:
        with self._lock:
            latest = self.latest_id()
            if latest is None or (self.current is not None and latest == self.current.run_id):
                return
            if latest in self._failed:
                return
            if self._try_load(latest):
                self.newest_error = None
            else:
                self.newest_error = self._failed[latest]
                if self.current is None:
                    self._fall_back(latest)
            self.trends = self.history.runs()

    def _try_load(self, run_id: str) -> bool:
        run_dir = self.results / published.RUNS / run_id
        try:
            if not run_dir.is_dir():
                raise UnreadableRun(f"LATEST names run {run_id}, which is not in runs/")
            run = load_run(run_dir)
        except UnreadableRun as error:
            self._failed[run_id] = LoadError(run_id, str(error), time.time())
            self.load_errors_total += 1
            log.warning("run %s is unreadable, keeping the previous one: %s", run_id, error)
            return False
        except Exception as error:  # anything else a damaged file makes a reader raise
            self._failed[run_id] = LoadError(
                run_id, f"{type(error).__name__}: {error}", time.time()
            )
            self.load_errors_total += 1
            log.exception("run %s is unreadable, keeping the previous one", run_id)
            return False
        self.current = run
        log.info("serving run %s", run_id)
        return True

    def _fall_back(self, newest: str) -> None:
        """At start: the newest run older than ``newest`` that reads."""
        for run_id in reversed([r for r in self._run_ids() if r < newest]):
            if run_id not in self._failed and self._try_load(run_id):
                return

    def failed_run(self, run_id: str) -> LoadError | None:
        """Why ``run_id`` could not be read, if it could not."""
        return self._failed.get(run_id)

    def readiness(self) -> tuple[bool, str]:
        run, error = self.current, self.newest_error
        if run is None:
            if error is not None:
                return False, (
                    f"no readable run: the newest, {error.run_id}, is unreadable: {error.message}"
                )
            return False, f"no run published in {self.results} yet"
        if error is not None:
            return True, (
                f"serving run {run.run_id}; the newest run, {error.run_id}, is unreadable:"
                f" {error.message}"
            )
        return True, f"serving run {run.run_id}"


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
