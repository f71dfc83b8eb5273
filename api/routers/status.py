"""``GET /``: the status page (``api.page``)."""

from __future__ import annotations

import time
from typing import Annotated

from fastapi import APIRouter, HTTPException, Query
from fastapi.responses import HTMLResponse

from api.alerts import all_alerts
from api.cluster_page import cluster_section, with_cluster_section
from api.coordination import BadGroupId, check_group_id, lookup
from api.deps import ClustersDep, ExpositionDep, LiveDep, SettingsDep, StoreDep
from api.page import render

router = APIRouter(tags=["status page"])


@router.get("/", response_class=HTMLResponse)
async def status_page(
    store: StoreDep,
    exposition: ExpositionDep,
    settings: SettingsDep,
    views: ClustersDep,
    live: LiveDep,
    group: Annotated[str | None, Query(max_length=3 * 32767)] = None,
) -> HTMLResponse:
    """The status page (HTML). ``?group=ID`` shows the group lookup's answer."""
    run = store.current
    ready, message = store.readiness()
    now = time.time()
    alerts = all_alerts(exposition.timeline(now), settings.thresholds(), now)
    found, error = None, None
    if group is not None:
        if run is None:
            error = message
        else:
            try:
                found = await lookup(run, views, live, check_group_id(group), run.clusters(), None)
            except (BadGroupId, HTTPException) as problem:
                error = str(problem)
    html = render(
        run,
        message,
        store.newest_error is not None,
        alerts,
        found,
        error,
        group,
        settings.never_compacted_threshold_bytes,
    )
    html = with_cluster_section(html, cluster_section(views.now(now)[1], now, settings))
    return HTMLResponse(html, status_code=200 if ready else 503)
