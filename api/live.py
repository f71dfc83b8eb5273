"""The live cluster beside the disk (``serve --bootstrap-server``; optional: everything works
offline without it). One worker thread owns the client (``offsets_auditor.live_cluster``,
kafka-python: not thread-safe) and does, in order, what it is asked:

- every ``refresh_seconds``, Metadata for ``__consumer_offsets`` (leaders, replicas, ISR) and
  the brokers' addresses, kept as the latest :class:`LiveSnapshot` (connecting again after an
  error; every call bounded by ``timeout_seconds``);
- for a looked-up group, FindCoordinator and whether that coordinator is loading
  (COORDINATOR_LOAD_IN_PROGRESS), kept a few seconds per group.

A request never waits for the cluster longer than ``lookup_wait_seconds``: it takes the cached
snapshot as it is, and a FindCoordinator not answered in time is said to be pending (the next
lookup finds it answered). Nothing here is imported unless ``--bootstrap-server`` is given.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import queue
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from offsets_auditor.cluster.metadata import OffsetsTopicMetadata
from offsets_auditor.live_cluster.client import CoordinatorLookup, LiveCluster, LiveError, connect
from offsets_auditor.live_cluster.client_config import ClientConfig, parse_client_properties

log = logging.getLogger("offsets_auditor.serve.live")

#: a broker as the cluster's metadata names it: (node id, host, port)
Address = tuple[int, str, int]


@dataclass(frozen=True, slots=True)
class LiveSnapshot:
    """What the live cluster said last: ``metadata`` and ``brokers`` as of ``at`` (Unix
    seconds; ``None`` before its first answer), ``error`` the newest failure (one line)."""

    bootstrap: str
    at: float | None = None
    metadata: OffsetsTopicMetadata | None = None
    brokers: tuple[Address, ...] = ()
    error: str | None = None
    error_at: float | None = None

    def address(self, broker_id: int) -> tuple[str, int] | None:
        return next(((h, p) for n, h, p in self.brokers if n == broker_id), None)

    def to_json(self, now: float) -> dict[str, Any]:
        return {
            "bootstrap": self.bootstrap,
            "metadata_age_seconds": None if self.at is None else round(now - self.at, 3),
            "brokers": [{"broker_id": n, "host": h, "port": p} for n, h, p in self.brokers],
            "error": self.error,
        }


@dataclass(frozen=True, slots=True)
class LiveLookup:
    """FindCoordinator for a group as the live cluster answered (``answer``: a lookup or an
    error), or ``None`` with ``pending`` when it has not answered yet."""

    answer: CoordinatorLookup | LiveError | None
    at: float | None
    pending: bool = False


@dataclass
class _Job:
    run: Callable[[], object]
    future: Future[object] = field(default_factory=Future)


class LiveWatcher:
    """The worker thread and its cache. ``connector`` makes a :class:`LiveCluster` (tests give
    their own)."""

    def __init__(
        self,
        bootstrap: str,
        config: ClientConfig,
        *,
        refresh_seconds: float = 30.0,
        timeout_seconds: float = 5.0,
        lookup_wait_seconds: float = 2.0,
        lookup_cache_seconds: float = 5.0,
        connector: Callable[[], LiveCluster | LiveError] | None = None,
    ) -> None:
        self.bootstrap = bootstrap
        self.refresh_seconds = refresh_seconds
        self.timeout_seconds = timeout_seconds
        self.lookup_wait_seconds = lookup_wait_seconds
        self.lookup_cache_seconds = lookup_cache_seconds
        self._connect = connector or (lambda: connect(bootstrap, config, timeout_seconds))
        self._client: LiveCluster | None = None
        self._snapshot = LiveSnapshot(bootstrap)
        self._lookups: dict[str, LiveLookup] = {}
        self._asked: dict[str, Future[object]] = {}
        self._jobs: queue.Queue[_Job | None] = queue.Queue(maxsize=256)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._work, name="live-cluster", daemon=True)
        #: changes whenever the snapshot does (the metrics are rendered once per version)
        self.version = 0

    # -- the request side: never waits long ---------------------------------------------

    def snapshot(self) -> LiveSnapshot:
        return self._snapshot

    async def coordinator(self, group: str) -> LiveLookup:
        """FindCoordinator's answer for ``group``: cached, or asked and waited for at most
        ``lookup_wait_seconds``."""
        cached = self._lookups.get(group)
        now = time.time()
        at = None if cached is None else cached.at
        if cached is not None and at is not None and now - at < self.lookup_cache_seconds:
            return cached
        future = self._asked.get(group)
        if future is None:
            future = self._submit(lambda: self._find(group))
            if future is None:
                return LiveLookup(LiveError("the live cluster's queue is full"), now)
            self._asked[group] = future
        try:
            await asyncio.wait_for(
                asyncio.shield(asyncio.wrap_future(future)), self.lookup_wait_seconds
            )
        except TimeoutError:
            return LiveLookup(None, None, pending=True)
        except Exception as error:  # a bug in the worker's call: said, and asked again next time
            self._asked.pop(group, None)
            return LiveLookup(LiveError(f"{type(error).__name__}: {error}"), time.time())
        found = self._lookups.get(group)
        return found if found is not None else LiveLookup(None, None, pending=True)

    def _submit(self, run: Callable[[], object]) -> Future[object] | None:
        job = _Job(run)
        try:
            self._jobs.put_nowait(job)
        except queue.Full:
            return None
        return job.future

    # -- the worker ------------------------------------------------------------------------

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        with contextlib.suppress(queue.Full):
            self._jobs.put_nowait(None)
        self._thread.join(timeout=self.timeout_seconds + 5)

    def refresh(self) -> None:
        """One metadata refresh, on the caller's thread (the worker calls it; so may tests)."""
        client = self._ensure()
        if isinstance(client, LiveError):
            self._failed(client.reason)
            return
        meta = client.offsets_topic()
        if isinstance(meta, LiveError):
            self._failed(meta.reason)
            self._drop()
            return
        try:
            brokers = tuple(client.brokers())
        except Exception as error:  # the client's cluster view, never fatal
            brokers = self._snapshot.brokers
            log.warning("live cluster brokers: %s", error)
        self._snapshot = LiveSnapshot(self.bootstrap, time.time(), meta, brokers)
        self.version += 1

    def _work(self) -> None:
        next_refresh = 0.0
        while not self._stop.is_set():
            wait = max(next_refresh - time.monotonic(), 0.0)
            try:
                job = self._jobs.get(timeout=wait) if wait > 0 else None
            except queue.Empty:
                job = None
            if self._stop.is_set():
                break
            if job is not None:
                try:
                    job.future.set_result(job.run())
                except Exception as error:  # keep the worker alive
                    job.future.set_exception(error)
                continue
            try:
                self.refresh()
            except Exception as error:
                self._failed(f"{type(error).__name__}: {error}")
                self._drop()
            next_refresh = time.monotonic() + self.refresh_seconds
        self._drop()

    def _find(self, group: str) -> object:
        client = self._ensure()
        answer: CoordinatorLookup | LiveError
        answer = client if isinstance(client, LiveError) else client.find_coordinator(group)
        if isinstance(answer, LiveError) and not isinstance(client, LiveError):
            self._drop()
        self._lookups[group] = LiveLookup(answer, time.time())
        self._asked.pop(group, None)
        if len(self._lookups) > 10_000:  # bounded: drop the oldest half
            for key in sorted(self._lookups, key=lambda k: self._lookups[k].at or 0)[:5_000]:
                del self._lookups[key]
        return answer

    def _ensure(self) -> LiveCluster | LiveError:
        if self._client is None:
            made = self._connect()
            if isinstance(made, LiveError):
                return made
            self._client = made
        return self._client

    def _drop(self) -> None:
        if self._client is not None:
            with contextlib.suppress(Exception):  # closing a broken client
                self._client.close()
            self._client = None

    def _failed(self, reason: str) -> None:
        log.warning("live cluster %s: %s", self.bootstrap, reason)
        old = self._snapshot
        self._snapshot = LiveSnapshot(
            self.bootstrap, old.at, old.metadata, old.brokers, reason, time.time()
        )
        self.version += 1


def client_config(command_config: Path | None) -> ClientConfig:
    """The client properties of ``--command-config`` (defaults without it); raises
    ``OSError``/``ValueError`` (``ClientConfigError``) saying what is wrong."""
    if command_config is None:
        return ClientConfig()
    return parse_client_properties(command_config.read_text(encoding="utf-8"))
