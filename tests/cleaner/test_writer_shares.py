"""Who wrote a segment (``SegmentFacts.writers``, folded in C by ``_folds``) is what a plain
reading of its records says, on every real ``__consumer_offsets`` segment of the fixtures: per
group in order of first appearance, its records, the exact sum of its records' shares of their
batches (a batch's size over its records) and its first and last commit time.

The reference here reads the decoded records one by one (``reader.decode``), not the columns."""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path

import pytest

from offsets_auditor.cleaner.segment_facts import commit_timestamp_of, segment_facts
from offsets_auditor.logdir import fs
from offsets_auditor.reader.decode import DecodedRecord, decode_segment
from offsets_auditor.reader.segment import read_segment
from tests.conftest import FIXTURES
from tests.support.c_build import assert_builds_without_warnings

SEGMENTS = sorted(FIXTURES.glob("kafka-*/*/*/__consumer_offsets-*/*.log"))
SOURCE = Path(__file__).resolve().parents[2] / "offsets_auditor" / "_folds.c"


def _group(key: bytes | None) -> str | None:
    """What the reader takes for a key's group: ``key[4:4 + length]`` when bytes 2-4 hold a
    length that fits (every key type starts ``int16 type, string group``)."""
    if key is None or len(key) < 4:
        return None
    length = int.from_bytes(key[2:4], "big", signed=True)
    if length < 0 or len(key) - 4 < length:
        return None
    return key[4 : 4 + length].decode("utf-8", "replace")


def reference(
    path: Path, kinds: set[str] | None = None
) -> dict[str, tuple[int, Fraction, int, int]]:
    """group -> (records, bytes, first commit time, last commit time), in first-seen order;
    ``kinds`` gets what the segment held of what the folds treat apart."""
    with fs.ReadOnlyFile(path) as source:
        records = [
            r for r in decode_segment(source, file=path.name) if isinstance(r, DecodedRecord)
        ]
    per_batch: dict[int, int] = {}
    for r in records:
        per_batch[r.batch.position] = per_batch.get(r.batch.position, 0) + 1
    found: dict[str, Writes] = {}
    for r in records:
        group = _group(r.record.key)
        if r.batch.is_control and kinds is not None:
            kinds.add("control batch")
        if group is None or r.batch.is_control:
            continue
        share = Fraction(r.batch.size, per_batch[r.batch.position])
        time = r.record.timestamp
        if time < 0:
            time = commit_timestamp_of(r.record.key, r.record.value)
        if kinds is not None:
            kinds.update(
                ["a share of a batch"] * (share.denominator > 1)
                + ["a commit time from the value"] * (r.record.timestamp < 0 <= time)
            )
        found.setdefault(group, Writes()).add(share, time)
    return {g: w.totals() for g, w in found.items()}


@dataclass
class Writes:
    records: int = 0
    bytes: Fraction = Fraction(0)
    first: int = -1
    last: int = -1

    def add(self, share: Fraction, time: int) -> None:
        self.records += 1
        self.bytes += share
        if time >= 0:
            self.first = time if self.first < 0 else min(self.first, time)
            self.last = max(self.last, time)

    def totals(self) -> tuple[int, Fraction, int, int]:
        return self.records, self.bytes, self.first, self.last


def folded(path: Path) -> dict[str, tuple[int, Fraction, int, int]]:
    with fs.ReadOnlyFile(path) as source:
        facts = segment_facts(read_segment(source, file=path.name), int(path.stem))
    w = facts.writers
    result = {}
    for i, group in enumerate(w.groups):
        shares = sum((Fraction(int(sizes[i]), count) for count, sizes in w.shares), Fraction(0))
        result[group] = (
            int(w.records[i]),
            shares,
            int(w.first_timestamp[i]),
            int(w.last_timestamp[i]),
        )
    return result


@pytest.mark.parametrize("path", SEGMENTS, ids=lambda p: str(p.relative_to(FIXTURES)))
def test_writers_are_a_plain_reading_of_the_records(path: Path) -> None:
    """(Read in small chunks, the same writers: ``test_segment_facts_streaming``.)"""
    expected = reference(path)
    got = folded(path)
    assert list(got) == list(expected)  # first-seen order
    assert got == expected


def test_the_fixtures_hold_writers_of_every_kind() -> None:
    """Batches of many records (shares), v0 messages (times from the values), control batches:
    each is among the segments compared above."""
    kinds: set[str] = set()
    for fixture in ("kafka-2.3.0/transactions", "kafka-0.9.0.1/compressed-gzip"):
        for path in (FIXTURES / fixture).glob("*/__consumer_offsets-*/*.log"):
            assert path in SEGMENTS
            reference(path, kinds)
    assert kinds == {"control batch", "a share of a batch", "a commit time from the value"}


@pytest.mark.skipif(shutil.which("gcc") is None, reason="no gcc")
def test_builds_without_warnings(tmp_path: Path) -> None:
    assert_builds_without_warnings(SOURCE, tmp_path / "folds.so")
