"""The C reader without names (``read_segment(names=False)``, what the summary and version
detection read with): every column what it is with names, but the group and topic columns -1
(except for the entries it hands back to the reference decoders, which name them), on every
real segment; and the summary of each segment what it is when it is read with names."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from offsets_auditor.errors import DecodeError
from offsets_auditor.reader.columns import Chunk, RecordColumns
from offsets_auditor.reader.decode import RowDecoder
from offsets_auditor.reader.segment import BytesSource, read_segment
from offsets_auditor.reader.summary import SegmentTotals, summarize_segment
from tests.conftest import FIXTURES

FIXTURE_DIRS = sorted(p for p in FIXTURES.glob("kafka-*/*") if any(p.rglob("*.log")))
NAMED = ("group", "topic")


def chunks(data: bytes, names: bool) -> list[Chunk | DecodeError]:
    return list(read_segment(BytesSource(data), file="seg.log", digests=False, names=names))


def totals_with_names(data: bytes) -> SegmentTotals:
    """What ``summarize_segment`` adds up, over a reading with names."""
    totals = SegmentTotals(bytes=len(data))
    rows = RowDecoder("seg.log")
    for item in chunks(data, names=True):
        if isinstance(item, DecodeError):
            totals.add_error(item)
        else:
            for _ in totals.add_chunk(item, rows):
                pass
    return totals


@pytest.mark.parametrize("fixture", FIXTURE_DIRS, ids=lambda p: str(p.relative_to(FIXTURES)))
def test_without_names_only_the_names_are_missing(fixture: Path) -> None:
    segments = sorted(fixture.rglob("*.log"))
    named_rows = unnamed = 0
    for segment in segments:
        data = segment.read_bytes()
        with_names, without = chunks(data, names=True), chunks(data, names=False)
        assert [type(x) for x in without] == [type(x) for x in with_names]
        for a, b in zip(with_names, without, strict=True):
            if isinstance(a, DecodeError):
                assert isinstance(b, DecodeError) and (a.message, a.position) == (
                    b.message,
                    b.position,
                )
                continue
            assert isinstance(b, Chunk)
            for name in RecordColumns.__dataclass_fields__:
                left, right = getattr(a.records, name), getattr(b.records, name)
                if name in NAMED:  # entries the C reader hands back are read by the reference
                    named_rows += int(np.count_nonzero(left >= 0))
                    assert [b.strings[i] if i >= 0 else None for i in right.tolist()] == [
                        a.strings[j] if i >= 0 else None
                        for i, j in zip(right.tolist(), left.tolist(), strict=True)
                    ], name
                    unnamed += int(np.count_nonzero((right == -1) & (left >= 0)))
                else:
                    assert np.array_equal(left, right), name
        totals = [x for x in summarize_segment(BytesSource(data), file="seg.log")][-1]
        assert totals == totals_with_names(data), segment
    assert unnamed > 0.9 * named_rows
