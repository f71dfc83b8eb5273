"""For Kubernetes, Prometheus and Alertmanager: ``/healthz``, ``/readyz``, ``/metrics``,
``/alerts``."""

from __future__ import annotations

import re
import time
from importlib import resources
from typing import Any

from fastapi import APIRouter, HTTPException, Request, Response
from fastapi.responses import JSONResponse, PlainTextResponse
from prometheus_client.exposition import CONTENT_TYPE_PLAIN_0_0_4, choose_encoder

from api.alerts import all_alerts
from api.deps import ExpositionDep, SettingsDep, StoreDep
from api.models import AlertOut, Health, Problem, Readiness
from api.settings import Settings
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
        "run_ids": store.current.run_ids if store.current is not None else {},
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
    # the exposition changes only when the store does: rendered once for each version
    live = request.app.state.live
    key = (store.version, None if live is None else live.version, content_type)
    cache = request.app.state.metrics_cache
    if cache.get("key") != key:
        cache.update(key=key, body=encoder(request.app.state.registry))
    return Response(cache["body"], headers={"Content-Type": content_type})


@router.get("/alerts", response_model=list[AlertOut])
async def alerts(
    request: Request, exposition: ExpositionDep, settings: SettingsDep
) -> list[dict[str, Any]]:
    """Active alerts in Alertmanager's shape (alert names: docs/metrics.md), critical first;
    ``startsAt`` is when each fired, kept while its condition continues from run to run."""
    now = time.time()
    found = all_alerts(exposition.timeline(now), settings.thresholds(), now)
    base = runbook_base(request, settings)
    return [a.to_alertmanager(base) for a in found]


def runbook_base(request: Request, settings: Settings) -> str:
    """Where the alerts' runbooks are: ``--runbook-base-url``, else this service's own
    ``/runbooks/`` (absolute)."""
    if settings.runbook_base_url:
        return settings.runbook_base_url
    return str(request.url_for("runbook", name="x")).removesuffix("x")


@router.get(
    "/runbooks/{name}",
    name="runbook",
    responses={
        200: {"content": {"text/markdown": {}}, "description": "the runbook (Markdown)"},
        404: {"model": Problem, "description": "no alert of that name"},
    },
)
async def runbook(name: str) -> PlainTextResponse:
    """An alert's runbook (Markdown), as the alerts' ``runbook_url`` names it."""
    page = name if name.endswith(".md") else f"{name}.md"
    if not RUNBOOK_NAME.fullmatch(page):
        raise HTTPException(404, f"no runbook {name!r}")
    try:
        text = (resources.files("api") / "runbooks" / page).read_text(encoding="utf-8")
    except (FileNotFoundError, NotADirectoryError):
        raise HTTPException(404, f"no runbook {name!r}") from None
    return PlainTextResponse(text, media_type="text/markdown; charset=utf-8")


RUNBOOK_NAME = re.compile(r"[A-Za-z0-9]+\.md")
