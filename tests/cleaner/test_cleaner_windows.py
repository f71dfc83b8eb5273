"""The cleaner's rules read a segment in windows of whole batches (``cleaner.windows``): the
windows cover every batch once, in order, hold at most the records asked for (a bigger batch
alone), and the map's reads stop at the same entry of the segment whatever the windows.
The audits in small windows are compared with the default ones in ``test_cleaner_oracle``."""

from __future__ import annotations

import itertools
from pathlib import Path
from unittest import mock

import numpy as np
import pytest

from offsets_auditor.cleaner import windows as cleaner_windows
from offsets_auditor.cleaner.behaviour import MapEra
from offsets_auditor.cleaner.config import CleanerConfig
from offsets_auditor.cleaner.log_state import LogState
from offsets_auditor.cleaner.map_building import MapStop, map_partial, map_whole_segments
from offsets_auditor.cleaner.offset_map import OffsetMap
from offsets_auditor.cleaner.partition_scan import PartitionScan, scan_partition
from offsets_auditor.cleaner.txn_metadata import CleanedTransactionMetadata
from offsets_auditor.cleaner.windows import batch_windows, windows
from offsets_auditor.logdir.model import offsets_partitions, read_log_dir
from offsets_auditor.reader.reading import DEFAULT_READ
from tests.cleaner.test_cleaner_oracle import config
from tests.conftest import FIXTURES
from tests.support.synthetic_partitions import Entry, Partition, write_partition


def _scan(log_dir: Path, partition: int = 0) -> PartitionScan:
    (found,) = [
        p for p in offsets_partitions(read_log_dir(log_dir, None)) if p.partition == partition
    ]
    return scan_partition(found, DEFAULT_READ.segment)


def _v2(*keys: int) -> Entry:
    return Entry("v2", tuple((k, False) for k in keys))


def _six_batches(first_key: int) -> tuple[Entry, ...]:
    """Six batches of 1 to 5 records whose keys go round ``first_key`` .. ``first_key + 9``."""
    return tuple(_v2(*[first_key + (b * 3 + k) % 10 for k in range(1 + b % 5)]) for b in range(6))


#: keys 0-9, then keys 10-19, then the active segment
SEGMENTS = Partition((_six_batches(0), _six_batches(10), (_v2(1),)), (0, 0, 0))


@pytest.fixture(scope="module")
def scan(tmp_path_factory: pytest.TempPathFactory) -> PartitionScan:
    return _scan(write_partition(tmp_path_factory.mktemp("windows"), SEGMENTS))


@pytest.mark.parametrize("max_records", [1, 2, 3, 4, 7, 100])
def test_windows_cover_every_batch_once_in_order(scan: PartitionScan, max_records: int) -> None:
    for columns, ids in zip(scan.columns, scan.key_ids, strict=True):
        slices = list(batch_windows(columns, max_records))
        assert slices[0].start == 0 and slices[-1].stop == columns.batches
        assert all(a.stop == b.start for a, b in itertools.pairwise(slices))
        records = []
        for window in windows(columns, ids, max_records):
            held = window.columns.records
            assert held <= max_records or window.columns.batches == 1
            # the window's columns are the segment's, renumbered from its start
            first = int(window.records.start)
            assert np.array_equal(window.columns.offset, columns.offset[window.records])
            assert np.array_equal(
                window.columns.batch + window.first_batch, columns.batch[window.records]
            )
            assert np.array_equal(
                window.columns.batch_first_record + first,
                columns.batch_first_record[window.batches],
            )
            records.extend(window.columns.offset.tolist())
        assert records == columns.offset.tolist()


def test_a_window_holds_as_many_whole_batches_as_fit(scan: PartitionScan) -> None:
    columns = scan.columns[0]
    sizes = columns.batch_records.tolist()  # 1, 2, 3, 4, 5, 1
    assert sizes == [1, 2, 3, 4, 5, 1]
    slices = [(s.start, s.stop) for s in batch_windows(columns, 6)]
    assert slices == [(0, 3), (3, 4), (4, 6)]


def _stop(scan: PartitionScan, cfg: CleanerConfig, window: int | None) -> tuple[object, int]:
    state = LogState.of(scan)
    m = OffsetMap(scan.distinct_keys, cfg.memory_per_thread, cfg.load_factor)
    members = list(range(len(scan.segments)))
    with mock.patch.object(cleaner_windows, "WINDOW_RECORDS", window or (1 << 20)):
        if cfg.behaviour.map_era == MapEra.PARTIAL:
            txn = CleanedTransactionMetadata()
            stop = map_partial(state, m, members, 0, 10**6, txn, cfg.behaviour).stop
            return stop, m.latest_offset
        mapped = map_whole_segments(state, m, members, 0, cfg.behaviour.map_era)
        return mapped, m.latest_offset


@pytest.mark.parametrize(
    ("version", "slots"),
    [
        ("2.3.0", 4),
        ("2.3.0", 6),
        ("2.3.0", 9),
        ("2.4.1", 6),
        ("2.4.1", 13),
        ("0.10.0.1", 13),  # the first segment's 10 keys fit, the second's do not
        ("0.10.0.1", 16),
    ],
)
def test_the_map_stops_at_the_same_entry_whatever_the_windows(
    scan: PartitionScan, version: str, slots: int
) -> None:
    cfg = config(version, slots)
    default = _stop(scan, cfg, None)
    stop = default[0][1] if isinstance(default[0], tuple) else default[0]
    assert isinstance(stop, MapStop) and stop.entry > 0  # mid-segment, past its first batch
    for window in (1, 2, 3, 5):
        assert _stop(scan, cfg, window) == default


def test_real_segments_are_windowed_whole() -> None:
    log_dir = FIXTURES / "kafka-2.3.0/multi-pass/kafka-logs"
    scan = _scan(log_dir, 1)
    assert len(scan.segments) > 3
    for columns, ids in zip(scan.columns, scan.key_ids, strict=True):
        for window in windows(columns, ids, 1000):
            counts = np.bincount(window.columns.batch, minlength=window.columns.batches)
            assert np.array_equal(counts, window.columns.batch_records)
