"""The release lists of spans.py against the rules they summarise: wherever a rule of the
emulation gives another answer from one release to the next, that release is listed."""

from __future__ import annotations

import itertools
from dataclasses import replace
from pathlib import Path

import pytest

from offsets_auditor.cleaner import behaviour
from offsets_auditor.cleaner.config import cleaner_config
from offsets_auditor.logdir.model import read_log_dir
from offsets_auditor.startup.checks import startup_report
from offsets_auditor.version_detection.model import VersionRange
from offsets_auditor.version_detection.spans import (
    CLEANER_CHANGES,
    STARTUP_CHANGES,
    Span,
    spans,
)
from offsets_auditor.versions import RELEASES, KafkaVersion

V = KafkaVersion.parse
FIXTURES = Path(__file__).parent.parent / "fixtures"
MODELLED = [r for r in RELEASES if r >= V("0.9.0.0")]


def listed(changes: tuple[tuple[str, str], ...]) -> set[KafkaVersion]:
    return {V(text) for text, _ in changes}


def cleaner_rules(v: KafkaVersion) -> tuple[object, ...]:
    config = cleaner_config([("offsets.topic.segment.bytes", "1048576")], {}, str(v))
    resolved = behaviour.behaviour_of(v)
    return (
        replace(config, kafka_version=V("0.0.0")),
        replace(resolved, version=V("0.0.0")),
    )


def test_every_cleaner_rule_change_is_listed() -> None:
    for before, release in itertools.pairwise(MODELLED):
        if cleaner_rules(before) != cleaner_rules(release):
            assert release in listed(CLEANER_CHANGES), release


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
