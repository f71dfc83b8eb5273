"""The scan's segment cache (``spark_jobs.cache``): a real segment's result, read with its
columns spilled to a scratch dir, is stored and loaded back equal, its columns mapped from the
entry; scratch dirs go away after the read, and those a killed read leaves are pruned."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from offsets_auditor.audit.stages import read_segment_result
from offsets_auditor.cleaner.segment_facts import COLUMN_DTYPES
from offsets_auditor.cleaner.spilled_columns import SpilledColumns
from offsets_auditor.logdir.model import offsets_partitions, read_log_dir
from offsets_auditor.reader.reading import DEFAULT_READ
from spark_jobs import cache
from spark_jobs.tasks import load_result, store_result
from tests.conftest import FIXTURES

LOG_DIR = FIXTURES / "kafka-2.3.0/multi-pass/kafka-logs"


def test_a_spilled_result_is_stored_and_mapped_back(tmp_path: Path) -> None:
    (partition,) = [p for p in offsets_partitions(read_log_dir(LOG_DIR, None)) if p.partition == 1]
    segment = partition.segments[0]
    expected = read_segment_result(partition, segment, None)
    with cache.scratch(tmp_path) as scratch:
        assert scratch is not None and scratch.parent == tmp_path
        spilled = read_segment_result(
            partition, segment, None, DEFAULT_READ.segment, SpilledColumns(scratch)
        )
        assert store_result(tmp_path, "k", spilled)
    assert not scratch.exists()
    loaded = load_result(tmp_path, "k")
    assert loaded is not None and expected.facts.columns.records > 1000
    assert loaded.facts.stats == expected.facts.stats
    assert loaded.facts.writers == expected.facts.writers
    for name in COLUMN_DTYPES:
        column = getattr(loaded.facts.columns, name)
        assert np.array_equal(column, getattr(expected.facts.columns, name)), name
    offsets = loaded.facts.columns.offset
    assert not offsets.flags.writeable and not offsets.flags.owndata  # a view of the entry
    columns = cache.load(tmp_path, "k", 0)  # what an emulation task loads: the columns alone
    assert np.array_equal(columns.offset, expected.facts.columns.offset)


def test_an_entry_s_parts_load_apart(tmp_path: Path) -> None:
    assert cache.store(tmp_path, "k", {"a": np.arange(3)}, ("rest", np.arange(5.0)), "third")
    assert cache.load(tmp_path, "k", 0)["a"].tolist() == [0, 1, 2]
    name, values = cache.load(tmp_path, "k", 1)
    assert name == "rest" and values.tolist() == [0.0, 1.0, 2.0, 3.0, 4.0]
    assert cache.load(tmp_path, "k", 2) == "third" and cache.load(tmp_path, "k", 3) is None
    entry = tmp_path / "k.res"
    entry.write_bytes(entry.read_bytes()[:100])  # cut short: unreadable, not a crash
    assert cache.load(tmp_path, "k", 1) is None


def test_prune_removes_unused_entries_and_leftover_scratch(tmp_path: Path) -> None:
    assert cache.store(tmp_path, "used", {"a": np.arange(3)})
    assert cache.store(tmp_path, "stale", {"a": np.arange(3)})
    (tmp_path / ".scratch-killed").mkdir()
    (tmp_path / ".scratch-killed" / "offset").write_bytes(b"\0" * 64)
    assert cache.prune(tmp_path, ["used"]) == 1
    assert sorted(p.name for p in tmp_path.iterdir()) == ["used.res"]
    assert cache.load(tmp_path, "used")["a"].tolist() == [0, 1, 2]


def test_no_scratch_where_the_cache_cannot_be_written(tmp_path: Path) -> None:
    blocked = tmp_path / "file"
    blocked.write_text("not a directory")
    with cache.scratch(blocked / "cache") as scratch:
        assert scratch is None
