"""One partition's emulation on several cores (``cleaner.cores``): on real brokers' log dirs,
the same passes, sizes and verdict facts as on one core; a pass's retention filter split by
segments only where the transaction bookkeeping is idle and the survivor flags are shared."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import pytest

from offsets_auditor.audit.parallel import ForkedCores
from offsets_auditor.audit.partition import emulate_partition
from offsets_auditor.cleaner.arrays import Arrays, FileArrays, in_memory
from offsets_auditor.cleaner.cores import ONE_CORE, Cores, balanced_runs
from offsets_auditor.cleaner.retention import PassCounters, merged_counters
from offsets_auditor.logdir.model import offsets_partitions, read_log_dir
from tests.cleaner.test_cleaner_oracle_fixtures import config_for
from tests.conftest import FIXTURES
from tests.support import reference_cleaner as ref

NOW_MS = 1_800_000_000_000

_In = TypeVar("_In")
_Out = TypeVar("_Out")


@dataclass
class Recording:
    """``inner``, noting how many items each ``each`` was given."""

    inner: Cores
    runs: list[int] = field(default_factory=list)

    @property
    def count(self) -> int:
        return self.inner.count

    def each(self, function: Callable[[_In], _Out], items: Sequence[_In], /) -> list[_Out]:
        self.runs.append(len(items))
        return self.inner.each(function, items)

    def aside(self, function: Callable[[], _Out], /) -> Callable[[], _Out]:
        return self.inner.aside(function)


def emulations(
    fixture: str, cores: Cores, arrays: Callable[[str], Arrays]
) -> dict[str, dict[str, Any]]:
    """Every offsets partition of ``fixture`` emulated at ``capture.sh``'s small map (the
    multi-pass fixture's partitions take several passes there)."""
    log_dir = FIXTURES / fixture / "kafka-logs"
    config = config_for(log_dir, "2.3.0", "small-map")
    assert config is not None
    logdir = read_log_dir(log_dir, config.kafka_version)
    found = {}
    for partition in offsets_partitions(logdir):
        e = emulate_partition(partition, config, NOW_MS, arrays=arrays(partition.name), cores=cores)
        if e is not None:
            found[partition.name] = ref.comparable(e) | {
                "needed_entries": e.needed_entries,
                "size_after_cleaning": e.size_after_cleaning,
            }
    return found


def in_files(tmp_path: Path) -> Callable[[str], Arrays]:
    def arrays(name: str) -> Arrays:
        (tmp_path / name).mkdir()
        return FileArrays(tmp_path / name)

    return arrays


def test_segments_filtered_apart_give_the_passes_of_one_core(tmp_path: Path) -> None:
    alone = emulations("kafka-2.3.0/multi-pass", ONE_CORE, lambda _: in_memory)
    assert max(len(e["passes"]) for e in alone.values()) > 1, "several passes"
    cores = Recording(ForkedCores(2))
    assert emulations("kafka-2.3.0/multi-pass", cores, in_files(tmp_path)) == alone
    # each pass of a partition of several segments filtered in two forked processes
    assert cores.runs and set(cores.runs) == {2}


def test_transactions_keep_a_pass_on_one_core(tmp_path: Path) -> None:
    alone = emulations("kafka-2.3.0/transactions", ONE_CORE, lambda _: in_memory)
    cores = Recording(ForkedCores(2))
    assert emulations("kafka-2.3.0/transactions", cores, in_files(tmp_path)) == alone
    assert any(e["passes"] for e in alone.values())
    assert cores.runs == []  # its markers and aborted batches link one segment to the next


def test_flags_in_memory_keep_a_pass_on_one_core() -> None:
    cores = Recording(ForkedCores(2))
    alone = emulations("kafka-2.3.0/multi-pass", ONE_CORE, lambda _: in_memory)
    assert emulations("kafka-2.3.0/multi-pass", cores, lambda _: in_memory) == alone
    assert cores.runs == []  # a forked process's writes would not be this one's


@pytest.mark.parametrize(
    ("weights", "parts", "runs"),
    [
        # 1. equal weights: equal halves
        ([5, 5, 5, 5], 2, [range(0, 2), range(2, 4)]),
        # 2. a heavy first segment is a run of its own
        ([10, 1, 1, 1], 2, [range(0, 1), range(1, 4)]),
        # 3. one part: everything
        ([3, 1, 2], 1, [range(0, 3)]),
        # 4. more parts than segments: one segment each
        ([1, 1], 4, [range(0, 1), range(1, 2)]),
        # 5. nothing to cut
        ([], 2, []),
        # 6. a heavy last segment: the others are the first run
        ([1, 1, 1, 10], 2, [range(0, 3), range(3, 4)]),
        # 7. no records at all still cuts (segments of empty batches are filtered too)
        ([0, 0, 0], 3, [range(0, 1), range(1, 2), range(2, 3)]),
    ],
)
def test_balanced_runs(weights: list[int], parts: int, runs: list[range]) -> None:
    assert balanced_runs(weights, parts) == runs


def test_merged_counters_sum_and_stay_exact_only_if_every_part_is() -> None:
    one = PassCounters(start_records=3, start_bytes=100, end_records=1, tombstones_kept=2)
    two = PassCounters(start_records=4, end_bytes=7, bytes_exact=False, invalid_dropped=5)
    assert merged_counters([one, two]) == PassCounters(
        start_records=7,
        start_bytes=100,
        end_records=1,
        end_bytes=7,
        bytes_exact=False,
        tombstones_kept=2,
        invalid_dropped=5,
    )
    assert merged_counters([one]) == one
    assert merged_counters([]) == PassCounters()
