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

from api.alert_rules import alert_rules
from api.alerts import firing
from api.promql import Snapshot, Timeline, labels_of
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
    assert len(contract) == len(alert_rules())
    found = alerting_rules(yaml.safe_load(RULES_FILE.read_text())["groups"])
    assert {r["alert"] for r in found} == set(contract)
    for rule in found:
        assert rule["labels"]["severity"] == contract[rule["alert"]], rule["alert"]
        annotations = rule["annotations"]
        assert set(annotations) == {"summary", "description", "runbook_url"}
        assert annotations["runbook_url"] == f"{rules.RUNBOOK_BASE}{rule['alert']}.md"
        assert annotations["runbook_url"].startswith("http://")
        assert (ROOT / "api" / "runbooks" / f"{rule['alert']}.md").is_file(), rule["alert"]


def test_promtool_check_rules(prometheus_bin: Path) -> None:
    for path in (RULES_FILE,):
        done = subprocess.run(
            [str(prometheus_bin / "promtool"), "check", "rules", str(path)],
            capture_output=True,
            text=True,
        )
        assert done.returncode == 0, done.stdout + done.stderr
        assert f"SUCCESS: {len(alert_rules()) + len(rules.RECORDING)} rules found" in done.stdout


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


PUBLISHER = f'{JOB},publisher="broker-0"'
PUBLISHER_LABELS = {"job": "offsets-auditor", "instance": "svc:8000", "publisher": "broker-0"}
JOB_LABELS = {"job": "offsets-auditor", "instance": "svc:8000"}

CASES = [
    case(
        "OffsetsCleanerThreadDeath",
        {verdict("thread-death"): "1x20", verdict("single-pass"): "0x20"},
        {verdict("thread-death"): "0x20", verdict("single-pass"): "1x20"},
        [{**PARTITION_LABELS, "outcome": "thread-death", "severity": "critical"}],
        [{}],
    ),
    case(
        "OffsetsCleanerThreadDied",
        # a fact read from the broker's cleaner log: one scan fires it; quiet: none dead
        {f"offsets_auditor_broker_cleaner_threads_dead{{{BROKER}}}": "0x5 1x15"},
        {f"offsets_auditor_broker_cleaner_threads_dead{{{BROKER}}}": "1x5 0x15"},
        [{**BROKER_LABELS, "severity": "critical"}],
        [{"": "1"}],
    ),
    case(
        "OffsetsPartitionUncleanable",
        {
            f"offsets_auditor_partition_marked_uncleanable{{{PARTITION}}}": "0x5 1x15",
            f'offsets_auditor_partition_marked_uncleanable{{{BROKER},partition="3"}}': "0x20",
        },
        # quiet: the broker restarted, and its new run forgot the mark
        {
            f"offsets_auditor_partition_marked_uncleanable{{{PARTITION}}}": "1x5 0x15",
            f'offsets_auditor_partition_marked_uncleanable{{{BROKER},partition="3"}}': "0x20",
        },
        [{**PARTITION_LABELS, "severity": "critical"}],
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
            f"offsets_auditor_partition_log_size_bytes{{{PARTITION}}}": "209715200x100",
            f"offsets_auditor_partition_never_compacted{{{PARTITION}}}": "1x100",
        },
        {
            # big but compacted once; and never compacted but small; and big and never
            # compacted for less than its `for` (an hour)
            f"offsets_auditor_partition_log_size_bytes{{{PARTITION}}}": "209715200x100",
            f"offsets_auditor_partition_never_compacted{{{PARTITION}}}": "0x100",
            f'offsets_auditor_partition_log_size_bytes{{{BROKER},partition="3"}}': "1048576x100",
            f'offsets_auditor_partition_never_compacted{{{BROKER},partition="3"}}': "1x100",
            f'offsets_auditor_partition_log_size_bytes{{{BROKER},partition="4"}}': (
                "0x30 209715200x70"
            ),
            f'offsets_auditor_partition_never_compacted{{{BROKER},partition="4"}}': "1x100",
        },
        [{**PARTITION_LABELS, "severity": "warning"}],
        [{"humanize1024": "200Mi"}],
        eval_time="70m",
    ),
    case(
        "OffsetsCleanerMultiPass",
        {verdict("multi-pass"): "1x100", verdict("single-pass"): "0x100"},
        {verdict("multi-pass"): "0x30 1x70", verdict("single-pass"): "1x30 0x70"},
        [{**PARTITION_LABELS, "outcome": "multi-pass", "severity": "warning"}],
        [{}],
        eval_time="70m",
    ),
    case(
        "OffsetsHangingTransaction",
        {f"offsets_auditor_partition_hanging_transactions{{{PARTITION}}}": "2x20"},
        {f"offsets_auditor_partition_hanging_transactions{{{PARTITION}}}": "0x20"},
        [{**PARTITION_LABELS, "severity": "critical"}],
        [{"": "2"}],
    ),
    case(
        "OffsetsCorruptIndexes",
        {f"offsets_auditor_broker_corrupt_index_files{{{BROKER}}}": "3x20"},
        {f"offsets_auditor_broker_corrupt_index_files{{{BROKER}}}": "0x20"},
        [{**BROKER_LABELS, "severity": "warning"}],
        [{"": "3"}],
    ),
    case(
        "OffsetsUncleanShutdown",
        {f"offsets_auditor_broker_clean_shutdown{{{BROKER}}}": "0x20"},
        {f"offsets_auditor_broker_clean_shutdown{{{BROKER}}}": "1x20"},
        [{**BROKER_LABELS, "severity": "warning"}],
        [{"": "0"}],
    ),
    case(
        "OffsetsCoordinatorLoadSlow",
        {f"offsets_auditor_partition_coordinator_load_seconds{{{PARTITION}}}": "12.5x60"},
        {f"offsets_auditor_partition_coordinator_load_seconds{{{PARTITION}}}": "9.5x30 12.5x30"},
        [{**PARTITION_LABELS, "severity": "warning"}],
        [{"humanizeDuration": "12.5s"}],
        eval_time="40m",
    ),
    case(
        "OffsetsScanFailing",
        {f"offsets_auditor_scan_failures{{{PUBLISHER}}}": "0x5 2x15"},
        {f"offsets_auditor_scan_failures{{{PUBLISHER}}}": "2x5 0x15"},
        [{**PUBLISHER_LABELS, "severity": "warning"}],
        [{"": "2"}],
    ),
    case(
        "OffsetsScanStale",
        # the last run finished at t=0; at 3h 1m it is older than three hourly intervals. Quiet:
        # a run every minute.
        {f"offsets_auditor_publisher_run_timestamp_seconds{{{PUBLISHER}}}": "0x200"},
        {f"offsets_auditor_publisher_run_timestamp_seconds{{{PUBLISHER}}}": "0+60x200"},
        [{**PUBLISHER_LABELS, "severity": "warning"}],
        [{"humanizeDuration": "3h 1m 0s"}],
        eval_time="181m",
    ),
    case(
        "OffsetsBrokerStale",
        # broker 0's log dir was last published at t=0; at 3h 1m it is older than three hourly
        # intervals. Quiet: its publisher runs every minute.
        {f"offsets_auditor_broker_run_timestamp_seconds{{{BROKER}}}": "0x200"},
        {f"offsets_auditor_broker_run_timestamp_seconds{{{BROKER}}}": "0+60x200"},
        [{**BROKER_LABELS, "severity": "warning"}],
        [{"humanizeDuration": "3h 1m 0s"}],
        eval_time="181m",
    ),
    case(
        "OffsetsBrokerMissing",
        # broker 2 is known (from the live cluster) and has not been scanned for an hour;
        # quiet: its first scan came after 30 minutes
        {f'offsets_auditor_broker_missing{{{JOB},cluster_id="c1",broker_id="2"}}': "1x100"},
        {f'offsets_auditor_broker_missing{{{JOB},cluster_id="c1",broker_id="2"}}': "1x30 0x70"},
        [{**JOB_LABELS, "cluster_id": "c1", "broker_id": "2", "severity": "warning"}],
        [{}],
        eval_time="70m",
    ),
    case(
        "OffsetsNoScanYet",
        # no run for two hourly intervals; quiet: the first run came after 90 minutes
        {f"offsets_auditor_results_loaded{{{JOB}}}": "0x200"},
        {f"offsets_auditor_results_loaded{{{JOB}}}": "0x90 1x110"},
        [{**JOB_LABELS, "severity": "warning"}],
        [{}],
        eval_time="121m",
    ),
    case(
        "OffsetsResultsUnreadable",
        {f'offsets_auditor_results_unreadable_run{{{PUBLISHER},run_id="r2"}}': "1x20"},
        {f'offsets_auditor_results_unreadable_run{{{PUBLISHER},run_id="r2"}}': "0x20"},
        [{**PUBLISHER_LABELS, "run_id": "r2", "severity": "warning"}],
        [{}],
    ),
    case(
        "OffsetsReplicaDivergence",
        {f'offsets_auditor_replica_divergences{{{JOB},partition="7"}}': "2x20"},
        {f'offsets_auditor_replica_divergences{{{JOB},partition="7"}}': "0x20"},
        [{**JOB_LABELS, "partition": "7", "severity": "warning"}],
        [{"": "2"}],
    ),
    case(
        "OffsetsCleanerStuck",
        # hourly scans: the dirty bytes grow by 100 per run; firing: the checkpoint stays at 500,
        # quiet: it moves every run
        {
            f"offsets_auditor_partition_dirty_bytes{{{PARTITION}}}": "100+100x8",
            f"offsets_auditor_partition_cleaner_checkpoint_offset{{{PARTITION}}}": "500x8",
            verdict("single-pass"): "1x8",
            verdict("not-eligible"): "0x8",
            verdict("nothing-to-clean"): "0x8",
        },
        {
            f"offsets_auditor_partition_dirty_bytes{{{PARTITION}}}": "100+100x8",
            f"offsets_auditor_partition_cleaner_checkpoint_offset{{{PARTITION}}}": "500+100x8",
            verdict("single-pass"): "1x8",
            verdict("not-eligible"): "0x8",
            verdict("nothing-to-clean"): "0x8",
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
    rules_of = [a for a in alert_rules() if a.name == c["alert"]]
    assert len(rules_of) == len(c["labels"])
    out = []
    for rule, labels, values in zip(rules_of, c["labels"], c["values"], strict=True):
        assert labels["severity"] == rule.severity
        for key, value in rule.labels:
            assert labels[key] == value
        out.append(
            {
                "exp_labels": dict(labels),
                "exp_annotations": {
                    "summary": render(rule.summary, labels, values),
                    "description": render(rule.description, labels, values),
                    "runbook_url": f"{rules.RUNBOOK_BASE}{rule.name}.md",
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
        f"offsets_auditor_publisher_run_timestamp_seconds{{{PUBLISHER}}}": "60x20",
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
                        "expr": "offsets_auditor:publisher_run_age_seconds",
                        "eval_time": "10m",
                        "exp_samples": [
                            sample(
                                "offsets_auditor:publisher_run_age_seconds",
                                {**job, "publisher": "broker-0"},
                                540,
                            )
                        ],
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


# --- the service's /alerts: the same rules, evaluated in Python ---------------------------------


def expand(notation: str) -> list[float]:
    """promtool's expanding notation: ``a+bxN`` is a, a+b, ..., N+1 values; ``axN`` N+1 a's."""
    values: list[float] = []
    for term in notation.split():
        m = re.fullmatch(r"(-?[\d.e+]+?)(?:([+-][\d.]+))?x(\d+)", term)
        if m is None:
            values.append(float(term))
            continue
        start, step, count = float(m.group(1)), float(m.group(2) or 0), int(m.group(3))
        values += [start + step * i for i in range(count + 1)]
    return values


def timeline_of(series: dict[str, str], interval: float) -> Timeline:
    """The series as scrapes every ``interval`` seconds from 0 would see them."""
    parsed = []
    for text, notation in series.items():
        name, _, inner = text.partition("{")
        labels = dict(re.findall(r'(\w+)="([^"]*)"', inner))
        parsed.append((name, labels_of(labels), expand(notation)))
    steps = max(len(values) for *_, values in parsed)
    snapshots = []
    for step in range(steps):
        samples: dict[str, dict[Any, float]] = {}
        for name, labels, values in parsed:
            if step < len(values):
                samples.setdefault(name, {})[labels] = values[step]
        snapshots.append(Snapshot(step * interval, samples))
    return Timeline(tuple(snapshots))


def seconds(text: str) -> float:
    return float(text[:-1]) * {"m": 60, "h": 3600}[text[-1]]


@pytest.mark.parametrize("kind", ["firing", "quiet"])
@pytest.mark.parametrize("c", CASES, ids=[c["alert"] for c in CASES])
def test_the_service_fires_what_prometheus_fires(c: dict[str, Any], kind: str) -> None:
    """``GET /alerts`` evaluates the same rules: on every promtool case above it fires exactly
    the alerts promtool is told to expect, with the same labels and annotations."""
    interval = 3600.0 if c["alert"] == "OffsetsCleanerStuck" else 60.0
    rules_of = [r for r in alert_rules() if r.name == c["alert"]]
    fired = firing(rules_of, timeline_of(c[kind], interval), seconds(c["eval_time"]))
    got = [
        {
            "exp_labels": {k: v for k, v in a.labels.items() if k != "alertname"},
            "exp_annotations": a.to_alertmanager(rules.RUNBOOK_BASE)["annotations"],
        }
        for a in fired
    ]
    assert got == (expected_alerts(c) if kind == "firing" else [])
