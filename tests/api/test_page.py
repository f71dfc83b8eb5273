"""The status page's rules without a browser: how a partition stands (``api.standing``) and
what an alert's card says (``api.page``). The browser test (test_service_browser.py) checks the
page as a person sees it on the tests' run; these check the cases that run does not show."""

from __future__ import annotations

import re
from typing import Any

from api.alerts import Alert
from api.page import _alerts
from api.standing import Kind, never_compacted_matters, standing

MIB = 1 << 20
THRESHOLD = 100 * MIB


def _row(**fields: Any) -> dict[str, Any]:
    row = {
        "outcome": "single-pass",
        "never_compacted": True,
        "size_bytes": 10 * MIB,
        "active_segment_bytes": 1 * MIB,
    }
    return {**row, **fields}


def test_never_compacted_matters_only_beyond_the_active_segment_or_the_threshold() -> None:
    # the demo's 'never' in red on 15 of 16 partitions: eight 0 B, the rest only an active
    # segment, which the cleaner never touches
    assert not never_compacted_matters(_row(size_bytes=0, active_segment_bytes=0), THRESHOLD)
    assert not never_compacted_matters(_row(size_bytes=MIB, active_segment_bytes=MIB), THRESHOLD)
    assert never_compacted_matters(_row(size_bytes=2 * MIB, active_segment_bytes=MIB), THRESHOLD)
    # one huge active segment: nothing to clean yet, but over the alert's threshold
    huge = THRESHOLD + 1
    assert never_compacted_matters(_row(size_bytes=huge, active_segment_bytes=huge), THRESHOLD)
    assert not never_compacted_matters(_row(never_compacted=False), THRESHOLD)


def test_how_a_partition_stands() -> None:
    blocked = standing(_row(outcome="blocked", never_compacted=False), [], THRESHOLD)
    assert (blocked.kind, blocked.reasons) == (Kind.CRITICAL, ("blocked",))
    death = standing(
        _row(outcome="thread-death"),
        [{"kind": "cleaner-thread-death", "severity": "critical"}],
        THRESHOLD,
    )
    # the finding that repeats the verdict is said once; never compacted follows it
    assert (death.kind, death.reasons) == (Kind.CRITICAL, ("thread-death", "never compacted"))
    hanging = standing(
        _row(never_compacted=False),
        [{"kind": "hanging-transaction", "severity": "critical"}],
        THRESHOLD,
    )
    assert hanging.kind == Kind.CRITICAL
    multi = standing(_row(outcome="multi-pass", never_compacted=False), [], THRESHOLD)
    assert (multi.kind, multi.reasons) == (Kind.WARNING, ("multi-pass",))
    assert standing(_row(), [], THRESHOLD).kind == Kind.WARNING  # beyond its active segment
    empty = _row(size_bytes=0, active_segment_bytes=0, outcome="nothing-to-clean")
    assert standing(empty, [], THRESHOLD).kind == Kind.EMPTY
    active_only = _row(size_bytes=MIB, active_segment_bytes=MIB, outcome="nothing-to-clean")
    quiet = standing(active_only, [], THRESHOLD)
    assert (quiet.kind, quiet.never_compacted_matters) == (Kind.NOTHING_TO_CLEAN, False)
    compacted = _row(never_compacted=False, outcome="single-pass")
    assert standing(compacted, [], THRESHOLD).kind == Kind.HEALTHY


def test_each_alert_card_says_a_setting_once() -> None:
    """The multi-pass alert's card printed ``log.cleaner.dedupe.buffer.size=`` twice. A
    multi-pass alert only fires after its hour (``for: 1h``), so the tests' single run never
    shows one: every rule's card is rendered here."""
    from api.alert_rules import alert_rules

    series = (
        ("cluster_id", ""),
        ("broker_id", "0"),
        ("log_dir", "/data/kafka-logs"),
        ("partition", "7"),
        ("outcome", "multi-pass"),
        ("publisher", "nightly"),
        ("run_id", "20261125T000000Z"),
    )
    for rule in alert_rules():
        card = _alerts([Alert(rule, series, 3.0, 0.0)])
        text = re.sub(r"<[^>]+>", "", card)
        for setting in set(re.findall(r"[a-z]+(?:\.[a-z]+)+=", text)):
            assert text.count(setting) == 1, (rule.name, text)
        assert text.count(rule.name) == 1, text


def test_the_lookup_asks_whether_never_compacted_matters_per_broker() -> None:
    """Brokers on their own hosts often share a log dir's path: the lookup asks about each
    replica by cluster, broker and log dir, so one broker's big never compacted replica is not
    said of another's empty one (the page keyed its rows by path alone)."""
    from api.cluster_page import lookup_html
    from api.view import log_dir_key

    def replica(broker_id: int) -> dict[str, Any]:
        return {
            "broker_id": broker_id, "log_dir": "/var/lib/kafka", "leader": None, "in_isr": None,
            "never_compacted": True, "size_bytes": 1, "verdict": "blocked", "reason": "r",
            "load_estimate_seconds": None, "data_age_seconds": 1.0, "open_findings": [],
        }  # fmt: skip

    cluster = {
        "cluster_id": "c1", "partitions_uncertain": False, "partition": 3, "partitions": 6,
        "partitions_source": "partition-dirs", "coordinator": None, "loading": None,
        "live": None, "load_estimate_seconds": None, "replicas": [replica(1), replica(2)],
        "replicas_not_scanned": [], "reasons": [],
    }  # fmt: skip
    answer = {"group": "g", "java_hash_code": 103, "in_run": True, "clusters": [cluster]}
    big = ("c1", 2, "/var/lib/kafka")
    html = lookup_html(answer, lambda r, partition: (log_dir_key(r), partition) == (big, 3))
    items = re.findall(r"<li>broker (\d) .*?</li>", html)
    assert items == ["1", "2"]
    lines = html.split("<li>broker ")[1:]
    assert "never compacted" not in lines[0] and "never compacted" in lines[1]
