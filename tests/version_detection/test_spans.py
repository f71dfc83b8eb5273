"""The release lists of spans.py against the rules they summarise: wherever a rule of the
emulation gives another answer from one release to the next, that release is listed."""

from __future__ import annotations

import itertools
from dataclasses import replace
from pathlib import Path

import pytest

from offsets_auditor.audit.partition import emulate_partition
from offsets_auditor.cleaner import behaviour
from offsets_auditor.cleaner.config import CleanerConfig, cleaner_config
from offsets_auditor.logdir.model import offsets_partitions, read_log_dir
from offsets_auditor.startup.checks import startup_report
from offsets_auditor.version_detection.model import VersionRange
from offsets_auditor.version_detection.spans import (
    CLEANER_CHANGES,
    STARTUP_CHANGES,
    Span,
    spans,
)
from offsets_auditor.versions import RELEASES, KafkaVersion
from tests.support.emulations import verdict_facts

V = KafkaVersion.parse
FIXTURES = Path(__file__).parent.parent / "fixtures"
MODELLED = [r for r in RELEASES if r >= V("0.9.0.0")]
NOW_MS = 1_800_000_000_000


def listed(changes: tuple[tuple[str, str], ...]) -> set[KafkaVersion]:
    return {V(text) for text, _ in changes}


def cleaner_rules(v: KafkaVersion) -> tuple[object, ...]:
    """What the emulation reads at ``v``: its config, and the facts its rules read."""
    config = cleaner_config([("offsets.topic.segment.bytes", "1048576")], {}, str(v))
    resolved = behaviour.behaviour_of(v)
    unread = {f.name: False for f in behaviour.FACTS if not f.emulated}
    return (
        replace(config, kafka_version=V("0.0.0")),
        replace(resolved, version=V("0.0.0"), **unread),
    )


def test_every_cleaner_rule_change_is_listed() -> None:
    for before, release in itertools.pairwise(MODELLED):
        if cleaner_rules(before) != cleaner_rules(release):
            assert release in listed(CLEANER_CHANGES), release


def emulated_at(config: CleanerConfig, log_dir: Path) -> list[str]:
    return [
        verdict_facts(emulate_partition(partition, config, NOW_MS))
        for partition in offsets_partitions(read_log_dir(log_dir))
    ]


@pytest.mark.parametrize(
    "fact", [f for f in behaviour.FACTS if not f.emulated], ids=lambda f: f.name
)
def test_a_fact_not_emulated_changes_no_emulation(fact: behaviour.Fact) -> None:
    """What lets such a fact cut no stretch: on real log dirs (transactions, several passes,
    a cleaner falling behind), the emulation at its first release gives the same passes with
    the fact as without."""
    config = cleaner_config([], {}, fact.since)
    assert getattr(config.behaviour, fact.name)
    without = replace(config)
    object.__setattr__(without, "behaviour", replace(config.behaviour, **{fact.name: False}))
    for name in ("multi-pass", "falling-behind", "transactions"):
        log_dir = FIXTURES / "kafka-2.3.0" / name / "kafka-logs"
        assert emulated_at(config, log_dir) == emulated_at(without, log_dir)


@pytest.mark.parametrize(
    "log_dir",
    [
        FIXTURES / "kafka-0.9.0.1" / "unclean-shutdown" / "kafka-logs",
        FIXTURES / "kafka-2.3.0" / "unclean-shutdown" / "kafka-logs",
    ],
    ids=lambda p: p.parent.parent.name,
)
def test_every_startup_rule_change_is_listed(log_dir: Path) -> None:
    """On real unclean-shutdown log dirs (zero-filled index tails, unflushed segments)."""
    model = read_log_dir(log_dir)
    previous = None
    for release in MODELLED:
        indexes, recovery, findings = startup_report(model, release)
        seen = (
            [replace(i, reason="") for i in indexes],
            recovery,
            [(f.kind, f.file) for f in findings],
        )
        if previous is not None and seen != previous:
            assert release in listed(STARTUP_CHANGES), release
        previous = seen


def test_spans_cut_a_range_at_each_change() -> None:
    zero_nine = VersionRange(V("0.9.0.0"), V("0.10.1.0"))
    assert spans(zero_nine, CLEANER_CHANGES, V("0.9.0.0")) == [
        Span(V("0.9.0.0"), V("0.9.0.0")),
        Span(V("0.9.0.1"), V("0.9.0.1")),
        Span(V("0.10.0.0"), V("0.10.0.1")),
    ]
    two_three = VersionRange(V("2.1.0"), V("2.4.0"))
    assert [str(s) for s in spans(two_three, STARTUP_CHANGES, V("2.1.0"))] == [
        "2.1.0 to 2.2.2",
        "2.3.0 to 2.3.1",
    ]
    assert [
        str(s) for s in spans(VersionRange(V("2.3.0"), V("2.4.0")), CLEANER_CHANGES, V("2.3.0"))
    ] == ["2.3.0 to 2.3.1"]
    # 3.1.0 (KIP-534, not emulated) cuts no stretch: its emulation would repeat 3.0.0's
    modern = VersionRange(V("2.4.0"), V("3.6.2"))
    assert [str(s) for s in spans(modern, CLEANER_CHANGES, V("2.4.0"))] == [
        "2.4.0",
        "2.4.1 to 2.8.2",
        f"3.0.0 to {modern.highest}",
    ]
