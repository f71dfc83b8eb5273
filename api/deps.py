"""FastAPI dependencies: the settings and the store live on ``app.state`` (made by the app
factory), the served run is taken once per request. Handlers and dependencies that only compute
over the loaded run are ``async``: they run on the event loop, not in the thread pool (which
costs more than the work itself); those that read files stay plain functions."""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, HTTPException, Query, Request

from api.cluster import ClusterViews
from api.exposition import Exposition
from api.live import LiveWatcher
from api.settings import Settings
from api.store import ResultsStore
from api.view import View


async def get_settings(request: Request) -> Settings:
    settings: Settings = request.app.state.settings
    return settings


async def get_store(request: Request) -> ResultsStore:
    store: ResultsStore = request.app.state.store
    return store


async def get_exposition(request: Request) -> Exposition:
    exposition: Exposition = request.app.state.exposition
    return exposition


async def get_clusters(request: Request) -> ClusterViews:
    clusters: ClusterViews = request.app.state.clusters
    return clusters


async def get_live(request: Request) -> LiveWatcher | None:
    live: LiveWatcher | None = request.app.state.live
    return live


async def get_run(store: Annotated[ResultsStore, Depends(get_store)]) -> View:
    run = store.current
    if run is None:
        raise HTTPException(503, store.readiness()[1])
    return run


SettingsDep = Annotated[Settings, Depends(get_settings)]
StoreDep = Annotated[ResultsStore, Depends(get_store)]
RunDep = Annotated[View, Depends(get_run)]
ExpositionDep = Annotated[Exposition, Depends(get_exposition)]
ClustersDep = Annotated[ClusterViews, Depends(get_clusters)]
LiveDep = Annotated[LiveWatcher | None, Depends(get_live)]

MAX_LIMIT = 1000
Limit = Annotated[int, Query(ge=1, le=MAX_LIMIT, description="items per page (1-1000)")]
Offset = Annotated[int, Query(ge=0, le=2**31 - 1, description="items to skip")]
ClusterFilter = Annotated[
    str | None,
    Query(
        max_length=255,
        description="only this cluster (cluster.id of meta.properties; empty: log dirs without"
        " one)",
    ),
]
