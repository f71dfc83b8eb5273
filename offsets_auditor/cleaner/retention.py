"""The retention filter of one pass over one segment (``Cleaner.cleanInto``/``shouldRetainRecord``,
``MemoryRecords.filterTo``), and the byte sizes of what it keeps.

Per record (numbered rules, first that applies wins):

1. 0.10.1+ only: an offset past the map's latest offset is kept (``pastLatestOffset``).
2. A record without a key is dropped (counted as invalid).
3. A record whose key the map holds at a later offset is dropped (a newer value exists). From
   2.3.0 the test is ``offset < foundOffset`` with -1 for a key not in the map (so a damaged,
   negative offset below -1 is dropped too); before, the key must be in the map
   (``foundOffset >= 0``).
4. A tombstone is dropped once its segment is older than the delete horizon
   (``retainDeletes`` false).
5. Everything else is kept.

Per batch (0.11+, v2 batches): a batch of an aborted transaction, and a COMMIT/ABORT marker the
cleaner no longer needs (``CleanedTransactionMetadata``), is discarded whole, unless it holds the
last data (or, for a marker, the epoch) of a still-active producer, which is kept as an empty
batch (``retainedBatches``/"last records of active producers").

Sizes: an uncompressed legacy message keeps its exact size; a rewritten v2 batch or compressed
wrapper is estimated as its overhead plus its payload in proportion to the records' weights
(``8 + key + value`` bytes), as ``retained_size`` says.

Sources: 0.9.0.1 and 2.3.0 ``core/src/main/scala/kafka/log/LogCleaner.scala``; 2.3.0
``clients/.../record/MemoryRecords.java``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, fields
from typing import Any

import numpy as np
import numpy.typing as npt

from offsets_auditor import _native
from offsets_auditor.cleaner.behaviour import CleanerBehaviour
from offsets_auditor.cleaner.log_state import LiveWindow
from offsets_auditor.cleaner.map_building import control_type_name
from offsets_auditor.cleaner.offset_map import OffsetMap
from offsets_auditor.cleaner.segment_facts import CleanerColumns
from offsets_auditor.cleaner.txn_metadata import CleanedTransactionMetadata, reaches

RECORD_BATCH_OVERHEAD = 61
#: Offset, size, crc, magic, attributes, timestamp, key and value lengths of a v1 wrapper.
LEGACY_WRAPPER_OVERHEAD = 34

Int64s = npt.NDArray[np.int64]
Ints = npt.NDArray[np.integer[Any]]
Bools = npt.NDArray[np.bool_]


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


def merged_counters(parts: Sequence[PassCounters]) -> PassCounters:
    """The counters of a pass filtered in ``parts`` (runs of its segments): each count summed,
    the bytes exact when every part's are."""
    merged = PassCounters()
    for part in parts:
        for name in _COUNTS:
            setattr(merged, name, getattr(merged, name) + getattr(part, name))
        merged.bytes_exact = merged.bytes_exact and part.bytes_exact
    return merged


_COUNTS = tuple(f.name for f in fields(PassCounters) if f.name != "bytes_exact")


def retained_size(
    size: Ints, magic: npt.NDArray[np.int8], codec: npt.NDArray[np.int8], kept: Ints, of: Ints
) -> Int64s:
    """Bytes of batches of ``size`` bytes rewritten with records of total weight ``kept`` out
    of ``of`` (some kept): exact for uncompressed legacy messages (one record each), else the
    overhead plus the payload in proportion (floor division, as the estimate always did)."""
    overhead = np.where(magic == 2, RECORD_BATCH_OVERHEAD, LEGACY_WRAPPER_OVERHEAD)
    estimate = overhead + (size - overhead) * kept // np.maximum(of, 1)
    return np.where((magic < 2) & (codec == 0), size, estimate)


def clean_window(
    live: LiveWindow,
    m: OffsetMap,
    txn: CleanedTransactionMetadata,
    last_records: dict[int, tuple[int | None, int]],
    *,
    retain_deletes: bool,
    behaviour: CleanerBehaviour,
    counters: PassCounters,
) -> int:
    """Filter the live batches of one window of an original segment (``LogState.windows``;
    a segment is filtered window by window, in order), updating its survivor flags and
    ``counters``; returns the window's size afterwards."""
    cols, ids = live.window.columns, live.window.key_ids
    alive, batch_alive = live.alive, live.batch_alive
    nb = cols.batches
    shallow = behaviour.stats_count_shallow_entries
    live_batches = np.flatnonzero(batch_alive)

    discard, retain_empty = _transaction_decisions(
        cols, live_batches, txn, last_records, retain_deletes, behaviour
    )
    dropped = discard & ~retain_empty  # discarded batches go whole: their records, and the batch
    sums = np.empty((5, nb), dtype=np.int64)
    invalid, expired, tombstones_kept, aborted_kept_empty = _native.retain(
        cols.batch,
        cols.weight,
        cols.offset,
        ids,
        cols.keyed,
        cols.tombstone,
        alive,
        cols.batch_control,
        discard,
        dropped,
        m.offsets,
        m.latest_offset,
        behaviour.legacy_retention,
        behaviour.retains_from_found_offset,
        retain_deletes,
        sums,
    )
    n_live, w_live, w_all, n_kept, w_kept = sums
    size, magic, codec = cols.batch_size, cols.batch_magic, cols.batch_codec
    current = np.where(
        n_live == cols.batch_records,
        size,
        np.where(
            n_live == 0,
            np.where(magic == 2, RECORD_BATCH_OVERHEAD, 0),
            retained_size(size, magic, codec, w_live, w_all),
        ),
    )
    counters.start_bytes += int(current[live_batches].sum())
    counters.markers_dropped += int(np.count_nonzero(dropped & cols.batch_control))
    counters.aborted_dropped += int(n_live[dropped & ~cols.batch_control].sum())
    batch_alive &= ~dropped
    remaining = batch_alive.copy()  # the live batches still being filtered

    with_live = remaining & (n_live > 0)
    counters.start_records += int(
        np.count_nonzero(with_live) if shallow else n_live[remaining].sum()
    )
    counters.invalid_dropped += invalid
    counters.tombstones_dropped += expired
    counters.aborted_dropped += aborted_kept_empty
    counters.tombstones_kept += tombstones_kept

    kept_any = remaining & (n_kept > 0)
    counters.end_records += int(np.count_nonzero(kept_any) if shallow else n_kept[kept_any].sum())
    unchanged = (n_kept == n_live) & ((codec == 0) | (not shallow))
    rewritten = kept_any & ~unchanged
    if np.any(rewritten):
        counters.bytes_exact = counters.bytes_exact and bool(
            np.all((codec[rewritten] == 0) & (magic[rewritten] < 2))
        )
    after = np.where(unchanged, current, retained_size(current, magic, codec, w_kept, w_live))
    empty = remaining & ~kept_any
    kept_empty = empty & retain_empty
    gone = empty & ~retain_empty
    counters.end_bytes += int(after[kept_any].sum()) + RECORD_BATCH_OVERHEAD * int(
        np.count_nonzero(kept_empty)
    )
    counters.markers_dropped += int(np.count_nonzero(gone & cols.batch_control))
    batch_alive &= ~gone
    return int(after[kept_any].sum()) + RECORD_BATCH_OVERHEAD * int(np.count_nonzero(kept_empty))


def _transaction_decisions(
    cols: CleanerColumns,
    live_batches: Ints,
    txn: CleanedTransactionMetadata,
    last_records: dict[int, tuple[int | None, int]],
    retain_deletes: bool,
    behaviour: CleanerBehaviour,
) -> tuple[Bools, Bools]:
    """Per batch: discarded by the transaction rules, and kept empty for an active producer
    (0.11+ v2 batches only; ``discard`` is only ever true for transactional and control
    batches, the others are read by the transaction bookkeeping without effect)."""
    nb = cols.batches
    discard = np.zeros(nb, dtype=np.bool_)
    retain_empty = np.zeros(nb, dtype=np.bool_)
    if behaviour.legacy_retention:
        return discard, retain_empty
    v2 = cols.batch_magic[live_batches] == 2
    candidates = live_batches[v2 & (cols.batch_producer_id[live_batches] >= 0)]
    touched = live_batches[
        v2 & (cols.batch_control[live_batches] | cols.batch_transactional[live_batches])
    ]
    reach = np.full(nb, -1, dtype=np.int64)
    reach[live_batches] = reaches(cols.batch_last_offset[live_batches])
    for b in touched.tolist():
        last_offset = int(cols.batch_last_offset[b])
        pid = int(cols.batch_producer_id[b])
        txn.read_up_to(int(reach[b]))
        if cols.batch_control[b]:
            name = control_type_name(int(cols.batch_control_type[b]))
            discard[b] = txn.on_control_batch(last_offset, pid, name) and not retain_deletes
        else:
            discard[b] = txn.on_batch(last_offset, pid, True)
    if len(live_batches):
        txn.read_up_to(int(reach[live_batches[-1]]))
    for b in candidates.tolist():
        last = last_records.get(int(cols.batch_producer_id[b]))
        if last is None:
            continue
        data_offset, epoch = last
        if data_offset is not None:
            retain_empty[b] = int(cols.batch_last_offset[b]) == data_offset
        else:
            retain_empty[b] = (
                bool(cols.batch_control[b]) and int(cols.batch_producer_epoch[b]) == epoch
            )
    return discard, retain_empty
