"""The FastAPI app, built by ``create_app(settings)``: the store and its poller are created in
the lifespan (nothing is read at import), the metrics registry is the app's own."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from importlib import resources
from typing import Any, Final

from fastapi import FastAPI, Request
from fastapi.encoders import jsonable_encoder
from fastapi.exceptions import RequestValidationError
from fastapi.openapi.docs import get_redoc_html, get_swagger_ui_html
from fastapi.responses import HTMLResponse, JSONResponse
from fastapi.staticfiles import StaticFiles
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
        version=package_version(),
        description=DESCRIPTION,
        lifespan=lifespan,
        responses=BAD_REQUEST,
        docs_url=None,  # served below from local files: the defaults load from a CDN
        redoc_url=None,
    )
    add_docs(app)
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
    app.add_exception_handler(RequestValidationError, validation_error)

    return app


#: The most of a rejected value a 422 repeats (FastAPI's own handler repeats all of it: a
#: 100 KB group id came back whole, in every error about it).
MAX_ECHO: Final = 200


async def validation_error(request: Request, error: Exception) -> JSONResponse:
    """FastAPI's 422 (``{"detail": [...]}``), with each rejected ``input`` cut to
    :data:`MAX_ECHO` characters and its length said."""
    assert isinstance(error, RequestValidationError)
    details = [_shortened(e) for e in error.errors()]
    return JSONResponse(status_code=422, content={"detail": jsonable_encoder(details)})


def _shortened(detail: Any) -> Any:
    value = detail.get("input") if isinstance(detail, dict) else None
    if isinstance(value, str | bytes) and len(value) > MAX_ECHO:
        head = value[:MAX_ECHO]
        if isinstance(head, bytes):
            head = head.decode("utf-8", "replace")
        return {**detail, "input": f"{head}... ({len(value):,} characters in all)"}
    return detail


def package_version() -> str:
    import importlib.metadata

    return importlib.metadata.version("offsets-auditor")


#: Where the API viewers' files are served from.
DOCS_ASSETS: Final = "/docs-assets"


def add_docs(app: FastAPI) -> None:
    """``/docs`` (Swagger UI) and ``/redoc`` (ReDoc) with their scripts, styles and icon
    served by this service, from the ``fastapi-offline`` package's copies (FastAPI's offline
    docs recipe, ``fastapi.openapi.docs``): they work where no CDN can be reached."""
    static = resources.files("fastapi_offline") / "static"
    app.mount(DOCS_ASSETS, StaticFiles(directory=str(static)), name="docs-assets")

    @app.get("/docs", include_in_schema=False)
    async def swagger_ui() -> HTMLResponse:
        return get_swagger_ui_html(
            openapi_url="/openapi.json",
            title="offsets-auditor API",
            swagger_js_url=f"{DOCS_ASSETS}/swagger-ui-bundle.js",
            swagger_css_url=f"{DOCS_ASSETS}/swagger-ui.css",
            swagger_favicon_url=f"{DOCS_ASSETS}/favicon.png",
        )

    @app.get("/redoc", include_in_schema=False)
    async def redoc() -> HTMLResponse:
        return get_redoc_html(
            openapi_url="/openapi.json",
            title="offsets-auditor API",
            redoc_js_url=f"{DOCS_ASSETS}/redoc.standalone.js",
            redoc_favicon_url=f"{DOCS_ASSETS}/favicon.png",
            with_google_fonts=False,
        )


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
