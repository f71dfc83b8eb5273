"""The PromQL of every panel of the dashboard, as Grafana would send it with every variable at
"All" (``.*``)."""

from __future__ import annotations

import json
import re
from typing import Any

from tests.deploy.conftest import DEPLOY

DASHBOARD = DEPLOY / "grafana" / "dashboards" / "offsets-auditor.json"
ALL = {"cluster": ".*", "broker": ".*"}


def load() -> dict[str, Any]:
    dashboard: dict[str, Any] = json.loads(DASHBOARD.read_text())
    return dashboard


def substitute(expr: str) -> str:
    def one(match: re.Match[str]) -> str:
        name = match.group(1) or match.group(2)
        return ALL[name]

    return re.sub(r"\$\{(\w+)\}|\$(\w+)", one, expr)


def panel_queries(dashboard: dict[str, Any] | None = None) -> list[tuple[str, str]]:
    """(panel title, expr) for every target of every panel, variables substituted."""
    dashboard = dashboard or load()
    out = []
    for panel in dashboard["panels"]:
        for target in panel.get("targets", ()):
            out.append((f"{panel['title']} [{target['refId']}]", substitute(target["expr"])))
    return out
