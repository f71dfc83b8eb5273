"""``GET /``: the status page (``api.page``)."""

from __future__ import annotations

import time
from typing import Annotated

from fastapi import APIRouter, HTTPException, Query
from fastapi.responses import HTMLResponse

from api.alerts import all_alerts
from api.coordination import BadGroupId, answer, check_group_id
from api.deps import ExpositionDep, SettingsDep, StoreDep
from api.page import render

router = APIRouter(tags=["status page"])


@router.get("/", response_class=HTMLResponse)
async def status_page(
    store: StoreDep,
    exposition: ExpositionDep,
    settings: SettingsDep,
    group: Annotated[str | None, Query(max_length=3 * 32767)] = None,
) -> HTMLResponse:
    """The status page (HTML). ``?group=ID`` shows the group lookup's answer."""
    run = store.current
    ready, message = store.readiness()
    now = time.time()
    alerts = all_alerts(exposition.timeline(now), settings.thresholds(), now)
    lookup, error = None, None
    if group is not None:
        if run is None:
            error = message
        else:
            try:
                lookup = answer(run, check_group_id(group), run.clusters(), None)
            except (BadGroupId, HTTPException) as problem:
                error = str(problem)
    html = render(
        run,
        message,
        store.newest_error is not None,
        alerts,
        lookup,
        error,
        group,
        settings.never_compacted_threshold_bytes,
    )
    return HTMLResponse(html, status_code=200 if ready else 503)
