"""A segment's facts do not depend on how its reads are cut: every real ``__consumer_offsets``
segment gives the same facts read in one chunk and in many small ones (the per-group writes,
the first batch timestamp and the columns are folded chunk by chunk), and the same columns
whether kept in memory or written to files and mapped back (``SpilledColumns``, what the scan's
executors use so that memory does not grow with the segment)."""

from __future__ import annotations

from dataclasses import fields
from pathlib import Path

import numpy as np
import pytest

from offsets_auditor.cleaner.segment_facts import (
    COLUMN_DTYPES,
    CleanerColumns,
    SegmentFacts,
    first_records,
    segment_facts,
)
from offsets_auditor.cleaner.spilled_columns import SpilledColumns
from offsets_auditor.logdir import fs
from offsets_auditor.reader.columns import Chunk
from offsets_auditor.reader.options import Limits
from offsets_auditor.reader.segment import read_segment
from tests.conftest import FIXTURES

SEGMENTS = sorted(
    p
    for p in FIXTURES.glob("kafka-*/*/*/__consumer_offsets-*/*.log")
    if p.stat().st_size > 32 * 1024
)
#: one chunk for the whole segment, and chunks of at most 50 records from 4 KiB windows
WHOLE = Limits(window_bytes=64 * 1024 * 1024, max_chunk_records=1 << 24)
SMALL = Limits(window_bytes=4096, max_chunk_records=50)


def _facts(path: Path, limits: Limits, spill: Path | None = None) -> tuple[SegmentFacts, int]:
    with fs.ReadOnlyFile(path) as source:
        items = list(read_segment(source, file=path.name, limits=limits))
    chunks = sum(isinstance(item, Chunk) for item in items)
    sink = SpilledColumns(spill) if spill is not None else None
    return segment_facts(items, int(path.stem), path.name, sink), chunks


def _assert_same_columns(a: CleanerColumns, b: CleanerColumns) -> None:
    for name, dtype in COLUMN_DTYPES.items():
        left, right = getattr(a, name), getattr(b, name)
        assert left.dtype == np.dtype(dtype), name
        assert right.dtype == np.dtype(dtype), name
        assert np.array_equal(left, right), name


def test_there_are_segments_read_in_many_chunks() -> None:
    assert len(SEGMENTS) >= 20
    many = [p for p in SEGMENTS[:: max(len(SEGMENTS) // 20, 1)] if _facts(p, SMALL)[1] > 10]
    assert len(many) >= 10


@pytest.mark.parametrize("path", SEGMENTS, ids=lambda p: str(p.relative_to(FIXTURES)))
def test_facts_do_not_depend_on_the_chunks(path: Path, tmp_path: Path) -> None:
    whole, whole_chunks = _facts(path, WHOLE)
    small, small_chunks = _facts(path, SMALL, spill=tmp_path / "columns")
    assert whole_chunks == 1 < small_chunks
    for field in fields(SegmentFacts):
        if field.name not in ("columns", "key_digests", "errors"):
            assert getattr(small, field.name) == getattr(whole, field.name), field.name
    assert small.key_digests.tobytes() == whole.key_digests.tobytes()
    assert [(e.field, e.position) for e in small.errors] == [
        (e.field, e.position) for e in whole.errors
    ]
    _assert_same_columns(small.columns, whole.columns)
    assert small.writers.groups, "a segment of offset commits has writers"


def test_spilled_columns_are_mapped_files(tmp_path: Path) -> None:
    path = max(SEGMENTS, key=lambda p: p.stat().st_size)
    facts, _ = _facts(path, SMALL, spill=tmp_path / "columns")
    in_memory, _ = _facts(path, SMALL)
    _assert_same_columns(facts.columns, in_memory.columns)
    offsets = facts.columns.offset
    assert isinstance(offsets.base, np.memmap) and not offsets.flags.writeable
    written = {p.name: p.stat().st_size for p in (tmp_path / "columns").iterdir()}
    assert written == {name: getattr(facts.columns, name).nbytes for name in COLUMN_DTYPES}


@pytest.mark.parametrize("limits", [WHOLE, SMALL], ids=["whole", "small"])
def test_each_batch_starts_at_its_first_record(limits: Limits) -> None:
    """``segment_facts.first_records``: where a starting batch with records begins in its
    chunk is its ``first_record`` less the chunk's, on every real segment, in one chunk and in
    many (batches split over chunks)."""
    checked = 0
    for path in SEGMENTS:
        with fs.ReadOnlyFile(path) as source:
            for item in read_segment(source, file=path.name, limits=limits):
                if not isinstance(item, Chunk):
                    continue
                b = item.batches
                rows = np.flatnonzero((b.continued == 0) & (b.records > 0))
                expected = np.searchsorted(item.records.batch, rows)
                assert first_records(item, rows).tolist() == expected.tolist()
                checked += len(rows)
    assert checked > 10_000
