"""The dedupe buffer an operator would set (``cleaner.headroom``): the minimum plus a day's
growth at the commit rate the segments show, rounded to a power of two MiB, and its heap."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from offsets_auditor.cli.main import main

FIXTURES = Path(__file__).parent.parent / "fixtures"
CONFIG = FIXTURES / "kafka-0.9.0.1" / "cleaner-died" / "broker-server.properties"
MULTI_PASS = FIXTURES / "kafka-2.3.0" / "multi-pass" / "kafka-logs"


def test_commit_rate_from_offsets_and_times() -> None:
    from offsets_auditor.cleaner.headroom import commit_rate

    # (base offset, next offset, largest timestamp, mtime): 3,000 offsets in 60 s
    rate = commit_rate([(0, 1000, 100_000, 0), (1000, 2500, 130_000, 0), (2500, 4000, 160_000, 0)])
    assert rate is not None and rate.per_second == 50.0
    assert "3,000 records in 60 s" in rate.basis and "record timestamps" in rate.basis
    # v0 data has no timestamps (-1): the segments' modification times
    v0 = commit_rate([(0, 10, -1, 1_000), (10, 130, -1, 61_000)])
    assert v0 is not None and v0.per_second == 2.0 and "mtimes" in v0.basis
    assert commit_rate([(0, 10, 5, 5)]) is None  # one segment: no span
    assert commit_rate([(0, 10, 5, 0), (10, 20, 5, 0)]) is None  # no time between them
    # a copy's mtimes, 44 ms apart: when the files were copied, not a rate of commits
    assert commit_rate([(0, 10, -1, 1_000), (10, 8_336, -1, 1_044)]) is None


def test_a_day_of_growth_rounded_with_its_heap() -> None:
    from offsets_auditor.cleaner.headroom import CommitRate, with_headroom

    # 0.1 commits/s, half of the dirty section's records are distinct keys: 4,320 a day
    h = with_headroom(10_000, 20_000, CommitRate(0.1, "test"), 1, 0.9, 524_288)
    assert h.entries == 14_320
    # 14,320 / 0.9 -> 15,912 slots x 24 B = 381,888 B: below the 1 MiB floor, so 1 MiB + 1 B,
    # rounded up to 2 MiB
    assert h.dedupe_buffer_size == 2 * 1024 * 1024
    assert h.heap_bytes == 2 * 1024 * 1024 + 524_288
    assert (
        "4,320 more entries" in h.arithmetic and "allocated when the cleaner starts" in h.arithmetic
    )
    # growth is at most the keys there are now (a burst must not read as a day of new keys)
    burst = with_headroom(10_000, 10_000, CommitRate(10_000.0, "test"), 2, 0.9, 524_288)
    assert burst.entries == 20_000 and "at most the 10,000 there are now" in burst.arithmetic
    assert burst.dedupe_buffer_size == 2 * 1024 * 1024 * 2  # 2 MiB per thread x 2 threads


def test_the_audit_gives_the_minimum_and_the_roomy_value(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """The real 2.3.0 multi-pass broker: 111,001 entries needed (2,960,040 B), and room for a
    day's growth at the rate its segments show."""
    main(["audit", str(MULTI_PASS), "--broker-config", str(CONFIG), "--json"])
    report = json.loads(capsys.readouterr().out)
    r = report["brokers"][0]["recommendation"]
    assert r["log.cleaner.dedupe.buffer.size"] == 2_960_040  # the minimum, unchanged
    h = r["with_headroom"]
    assert h["entries"] == 2 * 111_001  # growth capped at the keys there are
    assert h["log.cleaner.dedupe.buffer.size"] == 8 * 1024 * 1024
    assert h["heap_bytes"] == 8 * 1024 * 1024 + 524_288
    assert "commits/s" in h["arithmetic"] and "record timestamps" in h["arithmetic"]
    main(["audit", str(MULTI_PASS), "--broker-config", str(CONFIG)])
    out = capsys.readouterr().out
    assert "with room for a day's growth: log.cleaner.dedupe.buffer.size=8388608" in out
    assert "8,912,896 B of broker heap" in out
