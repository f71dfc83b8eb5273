"""The Grafana dashboard (deploy/grafana/): generated, the datasource a variable, every query
valid PromQL (promtool parses it) over the metrics of docs/metrics.md and the project's recording
rules, the panels the issue asks for; provisioning files that load it. That every query returns
data from a real Prometheus scraping the service is test_end_to_end's job."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import yaml

from tests.deploy.conftest import DEPLOY, ROOT, deploy_script
from tests.deploy.dashboard_queries import load, panel_queries

dashboard_script = deploy_script("dashboard")
rules = deploy_script("rules")


def contract_metrics() -> set[str]:
    text = (ROOT / "docs" / "metrics.md").read_text()
    return set(re.findall(r"^\| `(offsets_auditor_\w+)` \|", text, flags=re.M))


def test_written_file_is_the_generators_output() -> None:
    assert dashboard_script.main(["--check"]) == 0, "run: python scripts/deploy/dashboard.py"


def test_datasource_is_a_variable_used_by_every_panel_and_query() -> None:
    dashboard = load()
    (variable,) = [v for v in dashboard["templating"]["list"] if v["type"] == "datasource"]
    assert variable["query"] == "prometheus"
    ref = {"type": "prometheus", "uid": f"${{{variable['name']}}}"}
    for v in dashboard["templating"]["list"]:
        if v["type"] == "query":
            assert v["datasource"] == ref
    panels = [p for p in dashboard["panels"] if p["type"] != "row"]
    assert len(panels) >= 15
    for p in panels:
        assert p["datasource"] == ref, p["title"]
        assert p["targets"], p["title"]
        for t in p["targets"]:
            assert t["datasource"] == ref, p["title"]
    ids = [p["id"] for p in dashboard["panels"]]
    assert len(ids) == len(set(ids))


def test_every_query_reads_contract_metrics_or_recording_rules() -> None:
    known = contract_metrics() | {record for record, _ in rules.RECORDING}
    assert len(contract_metrics()) == 43
    used = set()
    for title, expr in panel_queries():
        names = set(re.findall(r"[a-z_]+:[a-z_:]+|offsets_auditor_\w+", expr))
        assert names, title
        assert names <= known, (title, names - known)
        used |= names
    # every recording rule is there for the dashboard
    assert {record for record, _ in rules.RECORDING} <= used


def test_the_panels_the_issue_asks_for() -> None:
    wanted = {
        "never compacted": "offsets_auditor_partition_never_compacted",
        "map headroom": "offsets_auditor_partition_offset_map_headroom_ratio",
        "dirty ratio": "offsets_auditor_partition_dirty_ratio",
        "size per partition": "offsets_auditor_partition_log_size_bytes",
        "size per broker": "broker:offsets_auditor_partition_log_size_bytes:sum",
        "reclaimable": "offsets_auditor_partition_reclaimable_bytes",
        "coordinator load": "offsets_auditor_partition_coordinator_load_seconds",
        "corrupt indexes": "offsets_auditor_broker_corrupt_index_files",
        "run freshness": "offsets_auditor:publisher_run_age_seconds",
        "scan failures": "offsets_auditor_scan_failures",
        "last real cleaning": "offsets_auditor_partition_last_cleaning_timestamp_seconds",
        "cleaner's pace": "offsets_auditor_broker_cleaner_capacity_bytes_per_second",
        "commit rate": "offsets_auditor_broker_commit_rate_bytes_per_second",
        "dead cleaner threads": "offsets_auditor_broker_cleaner_threads_dead",
        "uncleanable partitions": "offsets_auditor_partition_marked_uncleanable",
    }
    exprs = " ".join(expr for _, expr in panel_queries())
    for what, metric in wanted.items():
        assert metric in exprs, what


def test_every_query_parses(prometheus_bin: Path, tmp_path: Path) -> None:
    """promtool parses each query (as the expression of a recording rule)."""
    queries = panel_queries()
    document = {
        "groups": [
            {
                "name": "dashboard",
                "rules": [
                    {"record": f"dashboard:query_{i}", "expr": expr}
                    for i, (_, expr) in enumerate(queries)
                ],
            }
        ]
    }
    path = tmp_path / "dashboard-queries.yml"
    path.write_text(yaml.safe_dump(document, width=1 << 20))
    done = subprocess.run(
        [str(prometheus_bin / "promtool"), "check", "rules", str(path)],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"SUCCESS: {len(queries)} rules found" in done.stdout


def test_provisioning_files() -> None:
    provisioning = DEPLOY / "grafana" / "provisioning"
    datasources = yaml.safe_load(
        (provisioning / "datasources" / "offsets-auditor.yaml").read_text()
    )
    (source,) = datasources["datasources"]
    assert source["type"] == "prometheus"
    providers = yaml.safe_load((provisioning / "dashboards" / "offsets-auditor.yaml").read_text())
    (provider,) = providers["providers"]
    assert provider["type"] == "file"
    assert provider["options"]["path"].startswith("/")
