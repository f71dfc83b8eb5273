"""A segment's columns in windows of whole batches, so that the cleaner's rules hold a bounded
number of records at a time whatever the segment's size (a segment reaches 1 GiB, some ten
million records).

Every rule that reads a segment's records (the map's build, the retention filter, the map size a
partition needs) reads them batch by batch in offset order, carrying its state (the offset map,
the transactions, the counters) from one batch to the next; so running it over consecutive
windows of whole batches, state carried over, is running it over the segment.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Final

import numpy as np
import numpy.typing as npt

from offsets_auditor.cleaner.segment_facts import COLUMN_DTYPES, CleanerColumns

#: Records a window holds at most (a batch larger than this is a window of its own).
WINDOW_RECORDS: Final = 1 << 20

_RECORD_COLUMNS: Final = tuple(n for n in COLUMN_DTYPES if not n.startswith("batch_"))
_BATCH_COLUMNS: Final = tuple(n for n in COLUMN_DTYPES if n.startswith("batch_"))


@dataclass(frozen=True, slots=True)
class Window:
    """Batches ``batches`` of a segment and their records ``records`` (slices of the segment's
    columns); ``columns`` are those, numbered from the window's start (``batch`` and
    ``batch_first_record`` rebased), ``key_ids`` the records' key ids."""

    batches: slice
    records: slice
    columns: CleanerColumns
    key_ids: npt.NDArray[np.int32]

    @property
    def first_batch(self) -> int:
        return int(self.batches.start)


def batch_windows(columns: CleanerColumns, max_records: int | None = None) -> Iterator[slice]:
    """Consecutive slices of the batches holding up to ``max_records`` (by default
    ``WINDOW_RECORDS``) records each, at least one batch each; one empty slice for a segment
    without batches."""
    max_records = max_records or WINDOW_RECORDS
    count = columns.batches
    if not count:
        yield slice(0, 0)
        return
    first = columns.batch_first_record
    start = 0
    while start < count:
        head = int(first[start])
        if columns.records - head <= max_records:
            end = count
        else:  # the last batch starting within reach: [start, end) holds <= max_records
            end = int(np.searchsorted(first, head + max_records, side="right")) - 1
            end = max(end, start + 1)
        yield slice(start, end)
        start = end


def windows(
    columns: CleanerColumns,
    key_ids: npt.NDArray[np.int32],
    max_records: int | None = None,
) -> Iterator[Window]:
    """The segment's windows (``batch_windows``), each as columns of its own."""
    for batches in batch_windows(columns, max_records):
        records = _records_of(columns, batches)
        base = records.start
        values = {name: getattr(columns, name)[records] for name in _RECORD_COLUMNS}
        values |= {name: getattr(columns, name)[batches] for name in _BATCH_COLUMNS}
        values["batch"] = (values["batch"] - batches.start).astype(np.int32)
        values["batch_first_record"] = values["batch_first_record"] - base
        yield Window(batches, records, CleanerColumns(**values), key_ids[records])


def _records_of(columns: CleanerColumns, batches: slice) -> slice:
    """The records of the batches ``batches`` (consecutive in the segment, as its batches)."""
    if batches.start >= batches.stop:
        return slice(0, 0)
    first = columns.batch_first_record
    start = int(first[batches.start])
    end = int(first[batches.stop]) if batches.stop < columns.batches else columns.records
    return slice(start, end)
