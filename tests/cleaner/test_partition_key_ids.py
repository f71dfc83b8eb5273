"""The partition's key ids (``partition_scan.fold_partition``) are made from each segment's
own keys (``SegmentFacts.key_digests``, ``CleanerColumns.key``, stage A, in parallel): they
must be the ids that interning every record's digest in offset order gives."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from offsets_auditor import _native
from offsets_auditor.audit.stages import read_segment_result
from offsets_auditor.cleaner.partition_scan import fold_partition
from offsets_auditor.logdir.model import offsets_partitions, read_log_dir
from offsets_auditor.reader.columns import Chunk
from offsets_auditor.reader.reading import DEFAULT_READ
from tests.conftest import FIXTURES

LOG_DIRS = [
    FIXTURES / "kafka-2.3.0/multi-pass/kafka-logs",
    FIXTURES / "kafka-0.9.0.1/cleaner-died/kafka-logs",
]


@pytest.mark.parametrize("log_dir", LOG_DIRS, ids=lambda p: p.parent.name)
def test_key_ids_are_every_records_digest_interned_in_order(log_dir: Path) -> None:
    checked = 0
    for partition in offsets_partitions(read_log_dir(log_dir, None)):
        results = [read_segment_result(partition, s, None) for s in partition.segments]
        scan = fold_partition(partition, ((r.segment, r.facts) for r in results))
        table = _native.KeyTable()
        for segment, ids in zip(partition.segments, scan.key_ids, strict=True):
            expected = []
            for item in DEFAULT_READ.segment(partition, segment):
                if isinstance(item, Chunk):
                    mine = np.empty(len(item.records), dtype=np.int32)
                    table.ids(np.ascontiguousarray(item.records.digest), mine)
                    mine[item.records.key_size < 0] = -1
                    expected.append(mine)
            every = np.concatenate(expected) if expected else np.zeros(0, dtype=np.int32)
            assert np.array_equal(np.asarray(ids), every), segment.log.name
            checked += len(ids)
        assert scan.distinct_keys == len(table)
    assert checked > 10_000
