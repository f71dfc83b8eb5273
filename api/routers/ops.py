"""For Kubernetes, Prometheus and Alertmanager: ``/healthz``, ``/readyz``, ``/metrics``,
``/alerts``."""

from __future__ import annotations

import time
from typing import Any

from fastapi import APIRouter, Request, Response
from fastapi.responses import JSONResponse
from prometheus_client.exposition import CONTENT_TYPE_PLAIN_0_0_4, choose_encoder

from api.alerts import all_alerts
from api.deps import SettingsDep, StoreDep
from api.models import AlertOut, Health, Readiness
from api.store import ResultsStore

router = APIRouter(tags=["operations"])


@router.get("/healthz", response_model=Health)
async def healthz() -> dict[str, str]:
    """The process is up (liveness)."""
    return {"status": "ok"}


@router.get(
    "/readyz",
    response_model=Readiness,
    responses={503: {"model": Readiness, "description": "no run loaded"}},
)
async def readyz(store: StoreDep) -> Any:
    """A run is loaded (readiness). Still ready, with a message saying so, when the newest run
    is unreadable and the previous one is served."""
    ready, message = store.readiness()
    body = {
        "ready": ready,
        "run_id": store.current.run_id if store.current is not None else None,
        "message": message,
        "newest_run_unreadable": store.newest_error is not None,
        "load_errors_total": store.load_errors_total,
    }
    return body if ready else JSONResponse(body, status_code=503)


@router.get(
    "/metrics",
    response_class=Response,
    responses={200: {"content": {CONTENT_TYPE_PLAIN_0_0_4: {}}, "description": "Prometheus text"}},
)
async def metrics(request: Request) -> Response:
    """The served run's numbers in Prometheus' text format 0.0.4 (OpenMetrics when the scraper's
    Accept header asks for it). Names: docs/metrics.md."""
    encoder, content_type = choose_encoder(request.headers.get("accept", ""))
    store: ResultsStore = request.app.state.store
    # the exposition changes only with the served run and the store's own state: rendered once
    # for each (the collector builds every family afresh from the run when it renders)
    run = store.current
    key = (
        (run.run_id, run.loaded_at) if run is not None else None,
        store.load_errors_total,
        store.newest_error is None,
        content_type,
    )
    cache = request.app.state.metrics_cache
    if cache.get("key") != key:
        cache.update(key=key, body=encoder(request.app.state.registry))
    return Response(cache["body"], headers={"Content-Type": content_type})


@router.get("/alerts", response_model=list[AlertOut])
async def alerts(store: StoreDep, settings: SettingsDep) -> list[dict[str, Any]]:
    """Active alerts in Alertmanager's shape (alert names: docs/metrics.md), critical first."""
    found = all_alerts(store.current, store.trends, store.newest_error, settings, time.time())
    return [a.to_alertmanager(settings.runbook_base_url) for a in found]
