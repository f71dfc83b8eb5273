"""Building the offset map of one pass, per era (``Cleaner.buildOffsetMap``).

- 0.10.1+ (:func:`map_partial`, KAFKA-3894): from the first dirty offset, every keyed record of
  every live, non-control, non-aborted batch is put while ``map.size < maxDesiredMapSize``; the
  first keyed record that finds the map full ends the pass's map mid-segment. After each batch
  the map's latest offset moves to the batch's last offset; from 2.4.1, after each whole
  segment, to the next segment's base - 1.
- 0.9.0.x and 0.10.0.x (:func:`map_whole_segments`): whole segments only. 0.9 checks each
  segment's offset span against the capacity first (and the thread dies on one that cannot fit
  at all); 0.10.0 maps record by record and fails when not even the first dirty segment fits.

The candidate records of a window of a segment (``cleaner.windows``: whole batches, a bounded
number of records, the map carried over from one to the next) are selected with numpy, then put
in order by ``OffsetMap.put_until_full`` (one pass in C): the map is full before a candidate
exactly when it holds ``maxDesiredMapSize`` keys.

Sources: 0.9.0.1, 0.10.0.1, 2.3.0, 2.4.1 ``core/src/main/scala/kafka/log/LogCleaner.scala``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from offsets_auditor.cleaner.behaviour import CleanerBehaviour, MapEra
from offsets_auditor.cleaner.log_state import LiveWindow, LogState
from offsets_auditor.cleaner.offset_map import OffsetMap
from offsets_auditor.cleaner.segment_facts import NO_CONTROL_RECORD
from offsets_auditor.cleaner.txn_metadata import CleanedTransactionMetadata, reaches
from offsets_auditor.records.control import CONTROL_TYPES


@dataclass(frozen=True, slots=True)
class MapFailure:
    """A ``require`` that fails while building the map (the broker throws
    ``IllegalArgumentException("requirement failed: ...")``)."""

    kind: str
    segment_file: str
    numbers: tuple[int, ...]

    @property
    def always_kills(self) -> bool:
        """The capacity failures of 0.9/0.10.0 always end the thread (those versions have no
        other fate for an exception)."""
        return self.kind != "checkpoint"

    def message(self, log: str) -> str:
        if self.kind == "span":
            span, capacity = self.numbers
            return (
                f"requirement failed: {span} messages in segment {log}/{self.segment_file} but"
                f" offset map can fit only {capacity}. You can increase"
                " log.cleaner.dedupe.buffer.size or decrease log.cleaner.threads"
            )
        if self.kind == "unable":
            return (
                f"requirement failed: Unable to build the offset map for segment"
                f" {log}/{self.segment_file}. You can increase log.cleaner.dedupe.buffer.size or"
                " decrease log.cleaner.threads"
            )
        start, base = self.numbers
        return (
            f"requirement failed: Last clean offset is {start} but segment base offset is"
            f" {base} for log {log}."
        )


@dataclass(frozen=True, slots=True)
class MapStop:
    """Where the reads of a map that filled up stopped: ``member`` is the position of the
    segment among the pass's dirty segments, ``entry`` the segment's entry (batch index) that
    holds the first record that found the map full (-1: the segment was not read at all).
    Entries before it, and everything in the segments before it, were read."""

    member: int
    entry: int

    def read_past(self, member: int, entries_before: int) -> bool:
        """Whether the reads got past a point of segment ``member`` that follows
        ``entries_before`` whole entries."""
        return member < self.member or (member == self.member and self.entry >= entries_before)


def control_type_name(type_id: int) -> str | None:
    """``_control_type``: the first control record's type name (None: the batch is empty)."""
    if type_id == NO_CONTROL_RECORD:
        return None
    return CONTROL_TYPES.get(type_id, "unknown")


@dataclass(frozen=True, slots=True)
class PartialMap:
    """What :func:`map_partial` did: where the reads stopped when the map filled up (None: it
    did not), and whether a whole segment's end ever left the map's latest offset short of the
    next segment's base - 1 (an offset gap): only then does 2.4.1's fast-forward move it, so
    only then do 2.4.0 and 2.4.1 map differently."""

    stop: MapStop | None
    gap_fast_forwarded: bool


def map_partial(
    state: LogState,
    m: OffsetMap,
    members: Sequence[int],
    start: int,
    upper: int,
    txn: CleanedTransactionMetadata,
    behaviour: CleanerBehaviour,
) -> PartialMap:
    """0.10.1+ ``buildOffsetMap`` over the dirty segments ``members``. ``m.latest_offset`` is
    left where the broker's is (the pass's end - 1)."""
    gap = False
    for position, index in enumerate(members):
        next_start = (
            state.segments[members[position + 1]].base_offset
            if position + 1 < len(members)
            else upper
        )
        for live in state.windows(index):
            stop = _map_window(live, m, start, txn)
            if stop is not None:
                return PartialMap(MapStop(position, live.window.first_batch + stop), gap)
        gap = gap or m.latest_offset != next_start - 1
        if behaviour.fast_forwards_segment_gaps:
            m.latest_offset = next_start - 1
    return PartialMap(None, gap)


def _map_window(
    live: LiveWindow, m: OffsetMap, start: int, txn: CleanedTransactionMetadata
) -> int | None:
    """``map_partial`` over one window of a segment: the window's batch holding the first
    record that found the map full, or None. After a window read whole, ``m.latest_offset`` is
    its last read batch's last offset (when it read one)."""
    cols, ids = live.window.columns, live.window.key_ids
    processed = live.batch_alive & (cols.batch_last_offset >= start)
    aborted = np.zeros(cols.batches, dtype=np.bool_)
    read = np.flatnonzero(processed)
    reach = np.full(cols.batches, -1, dtype=np.int64)
    reach[read] = reaches(cols.batch_last_offset[read])
    for b in np.flatnonzero(processed & (cols.batch_control | cols.batch_transactional)):
        last_offset = int(cols.batch_last_offset[b])
        pid = int(cols.batch_producer_id[b])
        txn.read_up_to(int(reach[b]))
        if cols.batch_control[b]:
            txn.on_control_batch(
                last_offset, pid, control_type_name(int(cols.batch_control_type[b]))
            )
        else:
            aborted[b] = txn.on_batch(last_offset, pid, True)
    if len(read):
        txn.read_up_to(int(reach[read[-1]]))
    mapped_batch = processed & ~cols.batch_control & ~aborted
    candidates = np.flatnonzero(
        live.alive & mapped_batch[cols.batch] & cols.keyed & (cols.offset >= start)
    )
    candidate_ids = np.ascontiguousarray(ids[candidates])
    stop = m.put_until_full(candidate_ids, cols.offset[candidates])
    if stop is not None:
        stop_batch = int(cols.batch[candidates[stop]])
        if stop == 0 or int(cols.batch[candidates[stop - 1]]) != stop_batch:
            done = np.flatnonzero(processed[:stop_batch])  # batches read whole before it
            if len(done):
                m.latest_offset = int(cols.batch_last_offset[done[-1]])
        return stop_batch
    done = np.flatnonzero(processed)
    if len(done):
        m.latest_offset = int(cols.batch_last_offset[done[-1]])
    return None


def map_whole_segments(
    state: LogState, m: OffsetMap, members: Sequence[int], start: int, era: MapEra
) -> tuple[int, MapStop | None] | MapFailure:
    """0.9.0.x and 0.10.0.x ``buildOffsetMap``: the end offset (the last offset of the last
    fully mapped segment + 1) and where the reads stopped when the map filled up (None: it did
    not), or the failure."""
    segments = state.segments
    if not members or segments[members[0]].base_offset != start:
        base = segments[members[0]].base_offset if members else start
        return MapFailure("checkpoint", "", (start, base))
    last = segments[members[0]].base_offset
    for position, index in enumerate(members):
        seg = segments[index]
        if era == MapEra.SEGMENT_SPAN:
            span = seg.next_offset - seg.base_offset
            if span > m.max_desired:
                return MapFailure("span", seg.file, (span, m.max_desired))
            if m.size + span > m.max_desired:
                return last + 1, MapStop(position, -1)
        segment_last = None  # the offset of the segment's last surviving record
        for live in state.windows(index):
            cols, ids = live.window.columns, live.window.key_ids
            alive = np.flatnonzero(live.alive)  # records that survive
            keyed = alive[cols.keyed[alive]]
            if len(alive):
                segment_last = int(cols.offset[alive[-1]])
            if era == MapEra.SEGMENT_SPAN:
                m.put_all(np.ascontiguousarray(ids[keyed]), cols.offset[keyed])
                continue
            # 0.10.0 buildOffsetMapForSegment: record by record until the map is full
            stop = m.put_until_full(np.ascontiguousarray(ids[keyed]), cols.offset[keyed])
            if stop is not None:
                if last <= start:
                    return MapFailure("unable", seg.file, ())
                stop_batch = live.window.first_batch + int(cols.batch[keyed[stop]])
                return last + 1, MapStop(position, stop_batch)
        if era == MapEra.SEGMENT_SPAN:
            if segment_last is not None:
                last = segment_last
            continue
        last = max(last, segment_last if segment_last is not None else seg.base_offset)
    return last + 1, None
