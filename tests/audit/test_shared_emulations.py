"""One emulation for the configs a partition cannot tell apart (``audit.shared_emulations``):
on real brokers' log dirs, what every config gets from its group is what its own emulation
gives, to the pass and offset; and the watched facts do matter on some of them, so the shared
path and the emulate-again path both run."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from offsets_auditor.audit.partition import Emulated, emulate_partition
from offsets_auditor.audit.shared_emulations import (
    config_groups,
    differing_facts,
    emulate_group,
    in_config_order,
)
from offsets_auditor.cleaner.config import CleanerConfig, cleaner_config
from offsets_auditor.logdir.model import PartitionDir, offsets_partitions, read_log_dir
from tests.support.emulations import verdict_facts

FIXTURES = Path(__file__).parent.parent / "fixtures"
NOW_MS = 1_800_000_000_000
#: the stretches of a range 2.3.0 to 3.x, and a later release
VERSIONS = ("2.3.0", "2.4.0", "2.4.1", "3.0.0", "3.9.0")
SMALL_MAP = {"log.cleaner.dedupe.buffer.size": "2097154", "min.cleanable.dirty.ratio": "0.01"}
LOG_DIRS = [
    FIXTURES / "kafka-2.3.0" / name / "kafka-logs"
    for name in ("multi-pass", "falling-behind", "corrupt-segments", "uncleanable", "transactions")
]


def configs_of(overrides: dict[str, str]) -> list[CleanerConfig]:
    return [cleaner_config([], overrides, v) for v in VERSIONS]


def shared(partition: PartitionDir, configs: list[CleanerConfig]) -> list[Emulated | None]:
    groups = config_groups(configs)
    return in_config_order(
        groups,
        [
            emulate_group(lambda c: emulate_partition(partition, c, NOW_MS), configs, group)
            for group in groups
        ],
    )


def test_configs_that_differ_in_watched_facts_only_share_a_group() -> None:
    assert config_groups(configs_of({})) == [(0, 1, 2, 3, 4)]
    older = [cleaner_config([], {}, v) for v in ("2.1.0", "2.3.0", "0.10.2.0")]
    assert config_groups(older) == [(0,), (1,), (2,)]
    a, b = cleaner_config([], {}, "2.4.0"), cleaner_config([], {}, "3.0.0")
    assert differing_facts(a, b) == {"fast_forwards_segment_gaps", "log_start_from_checkpoint"}
    threads = cleaner_config([], {"log.cleaner.threads": "2"}, "2.4.1")
    assert differing_facts(a, threads) is None
    assert config_groups([a, threads]) == [(0,), (1,)]


@pytest.mark.parametrize("overrides", [{}, SMALL_MAP], ids=["defaults", "small-map"])
def test_each_config_gets_what_its_own_emulation_gives(overrides: dict[str, str]) -> None:
    configs = configs_of(overrides)
    mattered = untouched = 0
    for log_dir in LOG_DIRS:
        for partition in offsets_partitions(read_log_dir(log_dir)):
            own = [emulate_partition(partition, c, NOW_MS) for c in configs]
            assert [verdict_facts(e) for e in shared(partition, configs)] == [
                verdict_facts(e) for e in own
            ]
            first = own[0]
            if first is not None and first.facts_that_mattered:
                mattered += 1
            elif first is not None:
                untouched += 1
    assert mattered and untouched


def test_a_log_start_beyond_the_first_segment_is_not_shared() -> None:
    """A log-start-offset checkpoint past the first segment's base moves 3.0+'s first dirty
    offset (and no older release's): the group emulates 3.0.0 again."""
    (partition,) = [
        p for p in offsets_partitions(read_log_dir(LOG_DIRS[0])) if p.name == "__consumer_offsets-1"
    ]
    moved = replace(partition, log_start_checkpoint=50_000, cleaner_checkpoint=None)
    configs = configs_of({})
    own = [emulate_partition(moved, c, NOW_MS) for c in configs]
    assert own[0] is not None and own[3] is not None
    assert "log_start_from_checkpoint" in own[0].facts_that_mattered
    assert own[0].first_dirty != own[3].first_dirty
    assert [verdict_facts(e) for e in shared(moved, configs)] == [verdict_facts(e) for e in own]
