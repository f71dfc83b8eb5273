"""The Prometheus rules (deploy/prometheus/, deploy/k8s/base/prometheusrule.yaml): one source,
the alerts of docs/metrics.md, ``promtool check rules`` clean, and ``promtool test rules`` with a
firing and a not-firing case for every alert (Debian's promtool renders the annotations; the
expected text below is spelled out from the templates with the case's label values)."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.deploy.conftest import DEPLOY, ROOT, deploy_script

rules = deploy_script("rules")

RULES_FILE = DEPLOY / "prometheus" / "offsets-auditor.rules.yml"
PROMETHEUS_RULE = DEPLOY / "k8s" / "base" / "prometheusrule.yaml"


def contract_alerts() -> dict[str, str]:
    """alertname -> severity, from the alerts table of docs/metrics.md."""
    text = (ROOT / "docs" / "metrics.md").read_text()
    table = text.split("## Alerts", 1)[1]
    return dict(re.findall(r"^\| `(\w+)` \| (\w+) \|", table, flags=re.M))


def alerting_rules(groups: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [r for g in groups for r in g["rules"] if "alert" in r]


def test_written_files_are_the_generators_output() -> None:
    assert rules.main(["--check"]) == 0, "run: python scripts/deploy/rules.py"


def test_plain_rules_and_prometheus_rule_hold_the_same_groups() -> None:
    plain = yaml.safe_load(RULES_FILE.read_text())
    resource = yaml.safe_load(PROMETHEUS_RULE.read_text())
    assert resource["kind"] == "PrometheusRule"
    assert resource["spec"]["groups"] == plain["groups"]


def test_every_contract_alert_has_a_rule_with_its_severity_and_nothing_else() -> None:
    contract = contract_alerts()
    assert len(contract) == 12
    found = alerting_rules(yaml.safe_load(RULES_FILE.read_text())["groups"])
    assert {r["alert"] for r in found} == set(contract)
    for rule in found:
        assert rule["labels"]["severity"] == contract[rule["alert"]], rule["alert"]
        annotations = rule["annotations"]
        assert set(annotations) == {"summary", "description", "runbook_url"}
        assert annotations["runbook_url"] == f"docs/runbooks/{rule['alert']}.md"
        assert (ROOT / annotations["runbook_url"]).is_file(), annotations["runbook_url"]


def test_promtool_check_rules(prometheus_bin: Path) -> None:
    for path in (RULES_FILE,):
        done = subprocess.run(
            [str(prometheus_bin / "promtool"), "check", "rules", str(path)],
            capture_output=True,
            text=True,
        )
        assert done.returncode == 0, done.stdout + done.stderr
        assert "SUCCESS: 18 rules found" in done.stdout


# --- promtool test rules ------------------------------------------------------------------------

JOB = 'job="offsets-auditor",instance="svc:8000"'
BROKER = f'{JOB},broker_id="0",log_dir="/data/kafka-logs"'
PARTITION = f'{BROKER},partition="2"'
BROKER_LABELS = {
    "job": "offsets-auditor",
    "instance": "svc:8000",
    "broker_id": "0",
    "log_dir": "/data/kafka-logs",
}
PARTITION_LABELS = {**BROKER_LABELS, "partition": "2"}


def case(
    alert: str,
    firing: dict[str, str],
    quiet: dict[str, str],
    labels: list[dict[str, str]],
    values: list[dict[str, str]],
    eval_time: str = "10m",
) -> dict[str, Any]:
    """One alert's cases: ``firing`` and ``quiet`` series (promtool's expanding notation), the
    labels of each expected alert, and how each renders ``$value`` (keys: ``""`` for plain
    ``{{ $value }}``, else the filter)."""
    return {
        "alert": alert,
        "firing": firing,
        "quiet": quiet,
        "labels": labels,
        "values": values,
        "eval_time": eval_time,
    }


def finding(kind: str, severity: str) -> str:
    return f'offsets_auditor_findings{{{BROKER},kind="{kind}",severity="{severity}"}}'


def verdict(outcome: str) -> str:
    return f'offsets_auditor_partition_cleaner_verdict{{{PARTITION},outcome="{outcome}"}}'


CASES = [
    case(
        "OffsetsCleanerThreadDeath",
        {verdict("thread-death"): "1x20", verdict("single-pass"): "0x20"},
        {verdict("thread-death"): "0x20", verdict("single-pass"): "1x20"},
        [{**PARTITION_LABELS, "outcome": "thread-death", "severity": "critical"}],
        [{}],
    ),
    case(
        "OffsetsPartitionBlocked",
        {verdict("blocked"): "1x20", verdict("thread-death"): "0x20"},
        {verdict("blocked"): "0x20", verdict("thread-death"): "1x20"},
        [{**PARTITION_LABELS, "outcome": "blocked", "severity": "critical"}],
        [{}],
    ),
    case(
        "OffsetsPartitionNeverCompacted",
        {
            f"offsets_auditor_partition_log_size_bytes{{{PARTITION}}}": "209715200x20",
            f"offsets_auditor_partition_never_compacted{{{PARTITION}}}": "1x20",
        },
        {
            # big but compacted once; and never compacted but small
            f"offsets_auditor_partition_log_size_bytes{{{PARTITION}}}": "209715200x20",
            f"offsets_auditor_partition_never_compacted{{{PARTITION}}}": "0x20",
            f'offsets_auditor_partition_log_size_bytes{{{BROKER},partition="3"}}': "1048576x20",
            f'offsets_auditor_partition_never_compacted{{{BROKER},partition="3"}}': "1x20",
        },
        [{**PARTITION_LABELS, "severity": "warning"}],
        [{"humanize1024": "200Mi"}],
    ),
    case(
        "OffsetsCleanerMultiPass",
        {verdict("multi-pass"): "1x20", verdict("single-pass"): "0x20"},
        {verdict("multi-pass"): "0x20", verdict("single-pass"): "1x20"},
        [{**PARTITION_LABELS, "outcome": "multi-pass", "severity": "warning"}],
        [{}],
    ),
    case(
        "OffsetsHangingTransaction",
        {
            finding("hanging-transaction", "warning"): "2x20",
            finding("cleaner-thread-death", "critical"): "1x20",
        },
        {
            finding("hanging-transaction", "warning"): "0x20",
            finding("cleaner-thread-death", "critical"): "1x20",
        },
        [{**BROKER_LABELS, "kind": "hanging-transaction", "severity": "warning"}],
        [{"": "2"}],
    ),
    case(
        "OffsetsCorruptIndexes",
        {
            f"offsets_auditor_broker_corrupt_index_files{{{BROKER}}}": "3x20",
            f"offsets_auditor_broker_clean_shutdown{{{BROKER}}}": "0x20",
        },
        {
            f"offsets_auditor_broker_corrupt_index_files{{{BROKER}}}": "0x20",
            f"offsets_auditor_broker_clean_shutdown{{{BROKER}}}": "1x20",
        },
        [
            {**BROKER_LABELS, "reason": "corrupt-index", "severity": "warning"},
            {**BROKER_LABELS, "reason": "unclean-shutdown", "severity": "warning"},
        ],
        [{"": "3"}, {"": "0"}],
    ),
    case(
        "OffsetsCoordinatorLoadSlow",
        {f"offsets_auditor_partition_coordinator_load_seconds{{{PARTITION}}}": "12.5x20"},
        {f"offsets_auditor_partition_coordinator_load_seconds{{{PARTITION}}}": "9.5x20"},
        [{**PARTITION_LABELS, "severity": "warning"}],
        [{"humanizeDuration": "12.5s"}],
    ),
    case(
        "OffsetsScanStale",
        # the last run finished at t=0; at 3h it is 3h old. Quiet: a run every minute.
        {f"offsets_auditor_run_timestamp_seconds{{{JOB}}}": "0x200"},
        {f"offsets_auditor_run_timestamp_seconds{{{JOB}}}": "0+60x200"},
        [{"job": "offsets-auditor", "instance": "svc:8000", "severity": "warning"}],
        [{"humanizeDuration": "3h 0m 0s"}],
        eval_time="3h",
    ),
    case(
        "OffsetsResultsUnreadable",
        {f"offsets_auditor_results_last_load_error{{{JOB}}}": "1x20"},
        {f"offsets_auditor_results_last_load_error{{{JOB}}}": "0x20"},
        [{"job": "offsets-auditor", "instance": "svc:8000", "severity": "warning"}],
        [{}],
    ),
    case(
        "OffsetsReplicaDivergence",
        {f'offsets_auditor_replica_divergences{{{JOB},partition="7"}}': "2x20"},
        {f'offsets_auditor_replica_divergences{{{JOB},partition="7"}}': "0x20"},
        [
            {
                "job": "offsets-auditor",
                "instance": "svc:8000",
                "partition": "7",
                "severity": "warning",
            }
        ],
        [{"": "2"}],
    ),
    case(
        "OffsetsCleanerStuck",
        # hourly scans: the dirty bytes grow by 100 per run; firing: the checkpoint stays at 500,
        # quiet: it moves every run
        {
            f"offsets_auditor_partition_dirty_bytes{{{PARTITION}}}": "100+100x8",
            f"offsets_auditor_partition_cleaner_checkpoint_offset{{{PARTITION}}}": "500x8",
        },
        {
            f"offsets_auditor_partition_dirty_bytes{{{PARTITION}}}": "100+100x8",
            f"offsets_auditor_partition_cleaner_checkpoint_offset{{{PARTITION}}}": "500+100x8",
        },
        [{**PARTITION_LABELS, "severity": "warning"}],
        [{"humanize1024": "800"}],
        eval_time="7h",
    ),
    case(
        "OffsetsUnknownRecordTypes",
        {f"offsets_auditor_unknown_record_types{{{BROKER}}}": "5x20"},
        {f"offsets_auditor_unknown_record_types{{{BROKER}}}": "0x20"},
        [{**BROKER_LABELS, "severity": "info"}],
        [{"": "5"}],
    ),
]


def render(template: str, labels: dict[str, str], values: dict[str, str]) -> str:
    """The annotation as Prometheus should render it: ``{{ $labels.x }}`` and ``{{ $value }}``
    (optionally ``| filter``) are the only template actions the rules use."""

    def action(match: re.Match[str]) -> str:
        body = match.group(1).strip()
        if body.startswith("$labels."):
            return labels.get(body.removeprefix("$labels."), "")
        if body == "$value":
            return values[""]
        head, _, flt = body.partition("|")
        assert head.strip() == "$value", body
        return values[flt.strip()]

    rendered = re.sub(r"\{\{(.*?)\}\}", action, template)
    assert "{{" not in rendered
    return rendered


def expected_alerts(c: dict[str, Any]) -> list[dict[str, Any]]:
    rules_of = [a for a in rules.ALERTS if a.name == c["alert"]]
    assert len(rules_of) == len(c["labels"])
    out = []
    for rule, labels, values in zip(rules_of, c["labels"], c["values"], strict=True):
        assert labels["severity"] == rule.severity
        for key, value in rule.labels:
            assert labels[key] == value
        out.append(
            {
                "exp_labels": labels,
                "exp_annotations": {
                    "summary": render(rule.summary, labels, values),
                    "description": render(rule.description, labels, values),
                    "runbook_url": f"docs/runbooks/{rule.name}.md",
                },
            }
        )
    return out


def test_every_alert_has_a_firing_and_a_quiet_case() -> None:
    assert {c["alert"] for c in CASES} == set(contract_alerts())
    assert len(CASES) == len(contract_alerts())


def promtool_tests() -> dict[str, Any]:
    tests = []
    for c in CASES:
        for kind in ("firing", "quiet"):
            tests.append(
                {
                    "name": f"{c['alert']} {kind}",
                    "interval": "1h" if c["alert"] == "OffsetsCleanerStuck" else "1m",
                    "input_series": [
                        {"series": series, "values": values} for series, values in c[kind].items()
                    ],
                    "alert_rule_test": [
                        {
                            "eval_time": c["eval_time"],
                            "alertname": c["alert"],
                            "exp_alerts": expected_alerts(c) if kind == "firing" else [],
                        }
                    ],
                }
            )
    return {"rule_files": [str(RULES_FILE)], "evaluation_interval": "1m", "tests": tests}


def recording_tests() -> dict[str, Any]:
    """The recording rules the dashboard reads, on two partitions of one broker."""
    p0, p1 = f'{BROKER},partition="0"', f'{BROKER},partition="1"'
    series = {
        f"offsets_auditor_partition_log_size_bytes{{{p0}}}": "100x20",
        f"offsets_auditor_partition_log_size_bytes{{{p1}}}": "300x20",
        f"offsets_auditor_partition_reclaimable_bytes{{{p0}}}": "10x20",
        f"offsets_auditor_partition_reclaimable_bytes{{{p1}}}": "30x20",
        f"offsets_auditor_partition_never_compacted{{{p0}}}": "1x20",
        f"offsets_auditor_partition_never_compacted{{{p1}}}": "0x20",
        f"offsets_auditor_partition_coordinator_load_seconds{{{p0}}}": "0.5x20",
        f"offsets_auditor_partition_coordinator_load_seconds{{{p1}}}": "4x20",
        f"offsets_auditor_run_timestamp_seconds{{{JOB}}}": "60x20",
    }

    def sample(record: str, labels: dict[str, str], value: float) -> dict[str, Any]:
        inner = ",".join(f'{k}="{v}"' for k, v in labels.items())
        return {"labels": f"{record}{{{inner}}}", "value": value}

    job = {"job": "offsets-auditor", "instance": "svc:8000"}
    return {
        "rule_files": [str(RULES_FILE)],
        "evaluation_interval": "1m",
        "tests": [
            {
                "name": "recording rules",
                "interval": "1m",
                "input_series": [{"series": s, "values": v} for s, v in series.items()],
                "promql_expr_test": [
                    {
                        "expr": "broker:offsets_auditor_partition_log_size_bytes:sum",
                        "eval_time": "10m",
                        "exp_samples": [
                            sample(
                                "broker:offsets_auditor_partition_log_size_bytes:sum",
                                BROKER_LABELS,
                                400,
                            )
                        ],
                    },
                    {
                        "expr": "broker:offsets_auditor_partition_reclaimable_bytes:sum",
                        "eval_time": "10m",
                        "exp_samples": [
                            sample(
                                "broker:offsets_auditor_partition_reclaimable_bytes:sum",
                                BROKER_LABELS,
                                40,
                            )
                        ],
                    },
                    {
                        "expr": "broker:offsets_auditor_partition_never_compacted:sum",
                        "eval_time": "10m",
                        "exp_samples": [
                            sample(
                                "broker:offsets_auditor_partition_never_compacted:sum",
                                BROKER_LABELS,
                                1,
                            )
                        ],
                    },
                    {
                        "expr": "broker:offsets_auditor_partition_coordinator_load_seconds:max",
                        "eval_time": "10m",
                        "exp_samples": [
                            sample(
                                "broker:offsets_auditor_partition_coordinator_load_seconds:max",
                                BROKER_LABELS,
                                4,
                            )
                        ],
                    },
                    {
                        # evaluated at 10m = 600 s; the run finished at 60 s
                        "expr": "offsets_auditor:run_age_seconds",
                        "eval_time": "10m",
                        "exp_samples": [sample("offsets_auditor:run_age_seconds", job, 540)],
                    },
                ],
            }
        ],
    }


@pytest.mark.parametrize("which", ["alerts", "recording"])
def test_promtool_test_rules(which: str, prometheus_bin: Path, tmp_path: Path) -> None:
    document = promtool_tests() if which == "alerts" else recording_tests()
    path = tmp_path / f"{which}.test.yml"
    path.write_text(yaml.safe_dump(document, sort_keys=False, width=1 << 20))
    done = subprocess.run(
        [str(prometheus_bin / "promtool"), "test", "rules", str(path)],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "SUCCESS" in done.stdout


def test_promtool_catches_a_wrong_expectation(prometheus_bin: Path, tmp_path: Path) -> None:
    """The harness can fail: the thread-death case expecting another partition does."""
    document = promtool_tests()
    first = document["tests"][0]
    first["alert_rule_test"][0]["exp_alerts"][0]["exp_labels"]["partition"] = "3"
    document["tests"] = [first]
    path = tmp_path / "wrong.test.yml"
    path.write_text(yaml.safe_dump(document, sort_keys=False, width=1 << 20))
    done = subprocess.run(
        [str(prometheus_bin / "promtool"), "test", "rules", str(path)],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 1
    assert "FAILED" in done.stdout + done.stderr
