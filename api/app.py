"""The FastAPI app, built by ``create_app(settings)``: the store and its poller are created in
the lifespan (nothing is read at import), the metrics registry is the app's own."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from fastapi import FastAPI
from prometheus_client import CollectorRegistry

from api.cluster import ClusterViews
from api.exposition import Exposition
from api.live import LiveWatcher, client_config
from api.metrics import RunCollector
from api.models import BAD_REQUEST
from api.routers import clusters as clusters_router
from api.routers import groups, ops, status, tables
from api.settings import Settings
from api.store import Poller, ResultsStore

DESCRIPTION = """\
Serves the newest run of every scan that publishes to a results dir (one per broker host, or
one scan of many log dirs), merged: the cleaner's verdicts,
partition health, recovered group offsets, findings, alerts and Prometheus metrics.
Read-only; it never touches a broker's disks.

Group ids go percent-encoded in the path (`/groups/a%2Fb/coordinator-partition`), or in the
query form (`/group/coordinator-partition?group=a/b`), the only form for the empty id
(`?group=`). Long lists are paged with `limit` (1-1000) and `offset`.
"""


def create_app(settings: Settings, *, poll: bool = True) -> FastAPI:
    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        store: ResultsStore = app.state.store
        store.refresh()
        poller = Poller(store, settings.poll_seconds) if poll else None
        if poller is not None:
            poller.start()
        watcher: LiveWatcher | None = app.state.live
        if watcher is not None and poll:
            watcher.start()
        try:
            yield
        finally:
            if poller is not None:
                poller.stop()
            if watcher is not None and poll:
                watcher.stop()

    app = FastAPI(
        title="offsets-auditor",
        version="0.1.0",
        description=DESCRIPTION,
        lifespan=lifespan,
        responses=BAD_REQUEST,
    )
    store = ResultsStore(settings.results)
    live = live_watcher(settings)
    clusters = ClusterViews(store, live, live_max_age(settings))
    exposition = Exposition(store, clusters)
    registry = CollectorRegistry(auto_describe=False)
    registry.register(RunCollector(exposition))
    app.state.settings = settings
    app.state.store = store
    app.state.exposition = exposition
    app.state.registry = registry
    app.state.metrics_cache = {}
    app.state.live = live
    app.state.clusters = clusters
    for router in (status.router, ops.router, groups.router, tables.router, clusters_router.router):
        app.include_router(router)
    app.add_middleware(groups.GroupIdPath)

    return app


def live_watcher(settings: Settings) -> LiveWatcher | None:
    """The live cluster's watcher when ``--bootstrap-server`` is given (``api.cli`` checked
    its settings first)."""
    if settings.bootstrap_server is None:
        return None
    return LiveWatcher(
        settings.bootstrap_server,
        client_config(settings.command_config),
        refresh_seconds=settings.live_refresh_seconds,
        timeout_seconds=settings.live_timeout_seconds,
        lookup_wait_seconds=settings.live_lookup_wait_seconds,
    )


def live_max_age(settings: Settings) -> float:
    """The live metadata is used while younger than this: three refreshes (and at least one
    minute)."""
    return max(3 * settings.live_refresh_seconds, 60.0)
