"""The C lanes of the cleaner passes (``_cleaner_speedups.map_window`` / ``clean_window``):
what ``passes.PartitionCleaner``'s map and clean loops do to a run of simple entries, done in C
on the window's bytes, with the loops' own state (the map, the alive bitmaps, the counters, the
transaction metadata) updated as if they had done it themselves. ``None`` when the C map is not
in use: the Python loops then do everything.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

from offsets_auditor.cleaner import fast
from offsets_auditor.cleaner.offset_map import OffsetMap
from offsets_auditor.cleaner.txn_metadata import CleanedTransactionMetadata


class _Bitmaps(Protocol):
    """The survivors of earlier passes, one byte per record / batch ordinal (``LogState``)."""

    alive: bytearray
    batch_alive: bytearray


#: A C lane that also moves the walk's ordinals past the entries it takes.
OrdinalLane = Callable[[memoryview, int, int, fast.Cursor], int]


@dataclass(slots=True)
class MapProgress:
    """Where building the map got to: the offset of the last live record read, and whether
    the map filled up (set by the Python loop and the C lane alike)."""

    last: int
    full: bool = False


@dataclass
class PassCounters:
    """What one pass counts for the broker's stats banner (``PassResult``)."""

    start_records: int = 0
    start_bytes: int = 0
    end_records: int = 0
    end_bytes: int = 0
    bytes_exact: bool = True
    tombstones_kept: int = 0
    tombstones_dropped: int = 0
    aborted_dropped: int = 0
    markers_dropped: int = 0
    invalid_dropped: int = 0
    #: bytes the C lane kept in the segment being cleaned (added to its size, then reset)
    lane_kept_bytes: int = 0


def map_lane(
    offset_map: OffsetMap,
    state: _Bitmaps,
    mode: int,
    progress: MapProgress,
    start: int = 0,
    txn: CleanedTransactionMetadata | None = None,
) -> OrdinalLane | None:
    """The C path of the map phase loops (``PartitionCleaner._map_whole_segments`` in ``mode``
    0, ``_map_segment_until_full`` 1, ``_map_partial`` 2; ``_cleaner_speedups.map_window``): it
    puts what they would put, moves ``progress`` as they would, and once the map is full leaves
    the rest of the segment to them (they stop at once)."""
    if offset_map.c_map is None:
        return None
    alive, batch_alive = state.alive, state.batch_alive
    max_desired = offset_map.max_desired

    def lane(view: memoryview, begin: int, end: int, cursor: fast.Cursor) -> int:
        m = offset_map.c_map
        if m is None or progress.full:
            return begin
        next_rel, cursor.batch, cursor.record, status, seen, last, txn_seen, txn_max = (
            fast.C.map_window(
                view,
                begin,
                end,
                m,
                alive,
                batch_alive,
                cursor.batch,
                cursor.record,
                mode,
                start,
                max_desired,
            )
        )
        if seen:
            progress.last = last
        if txn_seen and txn is not None and txn.enabled:
            txn._consume_up_to(txn_max)  # what onBatchRead did for each of those batches
        if status == fast.STATUS_FULL:
            progress.full = True
        return next_rel

    return lane


def clean_lane(
    offset_map: OffsetMap,
    state: _Bitmaps,
    txn: CleanedTransactionMetadata,
    rules: tuple[bool, bool, bool],
    counters: PassCounters,
) -> OrdinalLane | None:
    """The C path of ``PartitionCleaner._clean_batch`` (``_cleaner_speedups.clean_window``)
    under ``rules`` = (shallow stats, legacy retention rules, retain deletes): counts into
    ``counters``, clears alive bits and adds the bytes it keeps to
    ``counters.lane_kept_bytes``."""
    if offset_map.c_map is None:
        return None
    alive, batch_alive = state.alive, state.batch_alive
    shallow, legacy_rules, retain_deletes = rules

    def lane(view: memoryview, begin: int, end: int, cursor: fast.Cursor) -> int:
        m = offset_map.c_map
        if m is None:
            return begin
        (
            next_rel,
            cursor.batch,
            cursor.record,
            start_records,
            start_bytes,
            end_records,
            end_bytes,
            inexact,
            tombstones_kept,
            tombstones_dropped,
            invalid_dropped,
            size,
            txn_seen,
            txn_max,
        ) = fast.C.clean_window(
            view,
            begin,
            end,
            m,
            alive,
            batch_alive,
            cursor.batch,
            cursor.record,
            legacy_rules,
            shallow,
            retain_deletes,
        )
        counters.start_records += start_records
        counters.start_bytes += start_bytes
        counters.end_records += end_records
        counters.end_bytes += end_bytes
        counters.bytes_exact = counters.bytes_exact and not inexact
        counters.tombstones_kept += tombstones_kept
        counters.tombstones_dropped += tombstones_dropped
        counters.invalid_dropped += invalid_dropped
        counters.lane_kept_bytes += size
        if txn_seen and txn.enabled:
            txn._consume_up_to(txn_max)  # what onBatchRead did for each of those batches
        return next_rel

    return lane
