"""Correctness proof of the cleaner rules: numbered cases, each saying why its verdict is right.

In the manner of Burrow's ``caching_test.go``: one table, one test, every rule of
``offsets_auditor.cleaner.verdict.outcome`` and of the capacity arithmetic covered.
"""

from __future__ import annotations

from dataclasses import replace

import pytest

from offsets_auditor.cleaner.capacity import buffer_for, max_desired_map_size
from offsets_auditor.cleaner.config import ConfigError, cleaner_config
from offsets_auditor.cleaner.threads import Schedule, simulate
from offsets_auditor.cleaner.verdict import Facts, Outcome, outcome

HEALTHY = Facts(
    cleaner_enabled=True,
    failure_message=None,
    failure_kills_thread=False,
    killed_elsewhere=None,
    passes=1,
    eligible=True,
    cleanable_bytes=1000,
    ratio=0.8,
    min_ratio=0.5,
    blocked_by="active segment",
    clean_bytes=250,
    dirty_start=0,
    dirty_end=1000,
    first_uncleanable=1000,
    cleaned_to=1000,
    map_entries=600,
    capacity=39_321,
    needed_entries=601,
)
#: the real 2.3.0 multi-pass partition with min.cleanable.dirty.ratio=0.5: the map (39,321
#: entries) fills at 39,321 and 78,642, then the ratio is 0.2861 and [78,642, 117,600) waits
MAP_FILLED = replace(
    HEALTHY,
    passes=2,
    dirty_end=117_600,
    first_uncleanable=117_600,
    cleaned_to=78_642,
    map_filled_at=(39_321, 78_642),
    map_entries=39_321,
    remaining_records=38_958,
    ratio_after=0.2861,
    needed_entries=111_001,
    fix_buffer=2_960_040,
)

OUTCOME_CASES = [
    # 1. log.cleaner.enable=false: no thread at all, so even a perfectly cleanable partition is
    #    blocked.
    (1, replace(HEALTHY, cleaner_enabled=False), Outcome.BLOCKED, "runs no cleaner thread"),
    # 2. A 0.9 require() failure ends the thread: thread-death, and it wins over everything below.
    (
        2,
        replace(HEALTHY, failure_message="requirement failed: x", failure_kills_thread=True),
        Outcome.THREAD_DEATH,
        "requirement failed: x",
    ),
    # 3. The same exception on 2.1+ only marks the partition uncleanable: blocked, thread lives.
    (
        3,
        replace(HEALTHY, failure_message="boom", failure_kills_thread=False),
        Outcome.BLOCKED,
        "marked uncleanable after: boom",
    ),
    # 4. Every thread dies elsewhere before this partition's passes happen: blocked although it
    #    fits; the reason says which range its pass would have cleaned.
    (
        4,
        replace(HEALTHY, killed_elsewhere="__consumer_offsets-2", passes_before_blocked=0),
        Outcome.BLOCKED,
        "one pass would clean [0, 1,000) but none happens: every cleaner thread dies on"
        " __consumer_offsets-2",
    ),
    # 4b. ...but if all of its passes happen first (two threads, one busy dying), it is cleaned.
    (
        4,
        replace(HEALTHY, killed_elsewhere="__consumer_offsets-2", passes_before_blocked=1),
        Outcome.SINGLE_PASS,
        "fits the offset map in one pass",
    ),
    # 5. The map filled and every pass ran to the end of the dirty section: multi-pass, with
    #    where it filled and the buffer that makes it one pass.
    (
        5,
        replace(MAP_FILLED, passes=3, cleaned_to=117_600, remaining_records=0, ratio_after=0.0),
        Outcome.MULTI_PASS,
        "the dirty section [0, 117,600) does not fit the offset map in one pass: the map (39,321"
        " entries) filled at offsets 39,321, 78,642; 3 passes clean it;"
        " log.cleaner.dedupe.buffer.size=2960040 holds the 111,001 map entries one pass needs",
    ),
    # 5b. The map filled and the dirty ratio then fell to the threshold: still multi-pass (the
    #     section does not fit one map), and the reason says what stays uncompacted.
    (
        5,
        MAP_FILLED,
        Outcome.MULTI_PASS,
        "after 2 passes the dirty ratio is 0.2861, not above min.cleanable.dirty.ratio 0.5, so"
        " 38,958 records in [78,642, 117,600) stay uncompacted until new writes raise the ratio"
        " above 0.5 again",
    ),
    # 5c. ONE pass whose map filled is not "fits in one pass": multi-pass too.
    (
        5,
        replace(
            MAP_FILLED,
            passes=1,
            cleaned_to=59_999,
            map_filled_at=(59_999,),
            remaining_records=57_601,
            ratio_after=0.4289,
        ),
        Outcome.MULTI_PASS,
        "filled at offset 59,999; after 1 pass the dirty ratio is 0.4289",
    ),
    # 6. Several passes although no map filled (the dirty section grew between them).
    (6, replace(HEALTHY, passes=3), Outcome.MULTI_PASS, "needs 3 passes"),
    # 7. Exactly one pass, the map never full.
    (
        7,
        HEALTHY,
        Outcome.SINGLE_PASS,
        "the dirty section [0, 1,000) fits the offset map in one pass (600 of 39,321 entries)",
    ),
    # 8. Nothing cleanable and the last stable offset is what stops it: a transaction open
    #    longer than transaction.max.timeout.ms (the coordinator would have aborted it) hangs.
    (
        8,
        replace(
            HEALTHY,
            passes=0,
            eligible=False,
            cleanable_bytes=0,
            blocked_by="open transaction",
            first_uncleanable=1605,
            transaction_open_ms=3_600_000,
        ),
        Outcome.BLOCKED,
        "a transaction open since offset 1,605 for 3,600 s, longer than"
        " transaction.max.timeout.ms (900,000 ms), holds the last stable offset back",
    ),
    # 8b. ... of unknown age (no timestamp in its first batch): hanging as far as anyone knows.
    (
        8,
        replace(
            HEALTHY,
            passes=0,
            eligible=False,
            cleanable_bytes=0,
            blocked_by="open transaction",
            first_uncleanable=1605,
        ),
        Outcome.BLOCKED,
        "a transaction open since offset 1,605, longer than transaction.max.timeout.ms",
    ),
    # 9b. A transaction open for 2 s is one under way, not a blocker: it ends within the
    #     limit (a running broker always has some).
    (
        9,
        replace(
            HEALTHY,
            passes=0,
            eligible=False,
            cleanable_bytes=0,
            blocked_by="open transaction",
            first_uncleanable=1605,
            transaction_open_ms=2_000,
        ),
        Outcome.NOTHING_TO_CLEAN,
        "no cleanable data before the transaction under way at offset 1,605 (open 2 s;",
    ),
    # 9. Nothing cleanable before the active segment: nothing to clean (it waits for a roll).
    (
        9,
        replace(HEALTHY, passes=0, eligible=False, cleanable_bytes=0),
        Outcome.NOTHING_TO_CLEAN,
        "no cleanable data before the active segment",
    ),
    # 10. Dirty bytes exist but the ratio is exactly the threshold: Kafka needs strictly more.
    (
        10,
        replace(HEALTHY, passes=0, eligible=False, ratio=0.5, cleanable_bytes=250),
        Outcome.NOT_ELIGIBLE,
        "dirty ratio 0.5000 (250 of 500 bytes) is not above min.cleanable.dirty.ratio 0.5",
    ),
]


@pytest.mark.parametrize(("rule", "facts", "expected", "says"), OUTCOME_CASES)
def test_outcome_rules(rule: int, facts: Facts, expected: Outcome, says: str) -> None:
    found, reason = outcome(facts)
    assert found == expected, f"rule {rule}"
    assert says in reason, f"rule {rule}: {reason}"


def test_a_filled_map_is_never_called_a_fit() -> None:
    for passes in (1, 2):
        facts = replace(MAP_FILLED, passes=passes, map_filled_at=(39_321,))
        found, reason = outcome(facts)
        assert found is Outcome.MULTI_PASS
        assert "fits" not in reason


CAPACITY_CASES = [
    # (memory per thread, load factor, maxDesiredMapSize): Java's (slots * lf).toInt
    # 1. The real 0.9.0.1 broker of the cleaner-died fixture logged "can fit only 39321".
    (1_048_577, 0.9, 39_321),
    # 2. Default 128 MiB, one thread.
    (134_217_728, 0.9, 5_033_164),
    # 3. Default 128 MiB over two threads: 64 MiB each.
    (67_108_864, 0.9, 2_516_581),
    # 4. The per-thread cap of Int.MaxValue bytes.
    (2**31 - 1, 0.9, 80_530_636),
    # 5. Load factor 1.0 uses every slot.
    (2_400, 1.0, 100),
]


@pytest.mark.parametrize(("memory", "load_factor", "expected"), CAPACITY_CASES)
def test_capacity(memory: int, load_factor: float, expected: int) -> None:
    assert max_desired_map_size(memory, load_factor) == expected


@pytest.mark.parametrize("entries", [1, 39_321, 39_322, 61_680, 98_250, 5_033_165])
@pytest.mark.parametrize("threads", [1, 2, 3])
def test_recommended_buffer_is_the_smallest_that_fits(entries: int, threads: int) -> None:
    advice = buffer_for(entries, threads, 0.9)
    per_thread = advice.dedupe_buffer_size // threads
    assert max_desired_map_size(per_thread, 0.9) >= entries
    # one slot less would not fit, unless the broker's 1 MiB floor decided the size
    if per_thread > 1024 * 1024 + 1:
        assert max_desired_map_size(per_thread - 24, 0.9) < entries
    assert per_thread > 1024 * 1024  # the broker would accept it


CONFIG_CASES = [
    # 1. Exactly 1 MiB per thread is refused: the broker's check is strictly greater.
    ({"log.cleaner.dedupe.buffer.size": "1048576"}, "must be at least 1MB per cleaner thread"),
    # 2. 1 MiB + 1 over two threads is 524288 each: refused.
    (
        {"log.cleaner.dedupe.buffer.size": "1048577", "log.cleaner.threads": "2"},
        "1MB per cleaner thread",
    ),
    # 3. Negative thread count: ConfigDef atLeast(0).
    ({"log.cleaner.threads": "-1"}, "Value must be at least 0"),
    # 4. A number that is not one.
    ({"log.cleaner.io.buffer.load.factor": "lots"}, "Invalid value lots"),
]


@pytest.mark.parametrize(("overrides", "message"), CONFIG_CASES)
def test_configs_the_broker_refuses(overrides: dict[str, str], message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        cleaner_config([], overrides, "2.3.0")


def test_topic_level_names_override_broker_defaults() -> None:
    config = cleaner_config(
        [("log.cleaner.min.cleanable.ratio", "0.5")], {"min.cleanable.dirty.ratio": "0.1"}, "2.3.0"
    )
    assert config.min_cleanable_ratio == 0.1


def test_cleaner_enable_default_by_version() -> None:
    # 0.9.0.0 shipped with the cleaner off by default; 0.9.0.1 turned it on
    assert cleaner_config([], None, "0.9.0.0").enabled is False
    assert cleaner_config([], None, "0.9.0.1").enabled is True


THREAD_CASES = [
    # 1. One thread, a killer and a good partition with equal ratios: the lower partition
    #    number is taken first; the thread dies and the good one never gets its pass
    #    (the cleaner-died fixture).
    (1, [("p2", 2, (1.0,), (), 0), ("p3", 3, (1.0,), (100,), None)], {"p2": 0, "p3": 0}, 1),
    # 2. Two threads: the second picks the good partition while the first is dying on the
    #    killer, cleans it, then dies on the killer too (the two-threads fixture).
    (2, [("p2", 2, (1.0,), (), 0), ("p3", 3, (1.0,), (100,), None)], {"p2": 0, "p3": 1}, 2),
    # 3. A dirtier good partition is taken before the killer even with one thread.
    (1, [("p2", 2, (0.5,), (), 0), ("p3", 3, (0.9, 0.1), (100,), None)], {"p2": 0, "p3": 1}, 1),
    # 4. No killer: every pass happens and no thread dies.
    (1, [("p1", 1, (0.9, 0.8, 0.0), (10, 10), None)], {"p1": 2}, 0),
]


@pytest.mark.parametrize(("threads", "schedules", "expected", "deaths"), THREAD_CASES)
def test_thread_selection(
    threads: int, schedules: list, expected: dict[str, int], deaths: int
) -> None:
    done, died = simulate([Schedule(*s) for s in schedules], threads)
    assert done == expected
    assert died == deaths


@pytest.mark.parametrize(
    ("version", "setting", "reads"),
    [
        ("2.3.0", {}, False),
        ("2.3.0", {"log.cleaner.min.compaction.lag.ms": "60000"}, True),
        ("2.3.0", {"log.cleaner.max.compaction.lag.ms": "3600000"}, True),
        # max.compaction.lag.ms arrived in 2.3.0 (KIP-354), min in 0.10.1 (KIP-58): an older
        # broker ignores the setting, and its verdict does not depend on the time
        ("2.2.0", {"log.cleaner.max.compaction.lag.ms": "3600000"}, False),
        ("0.10.1.0", {"log.cleaner.min.compaction.lag.ms": "60000"}, True),
        ("0.10.0.1", {"log.cleaner.min.compaction.lag.ms": "60000"}, False),
    ],
)
def test_the_selection_reads_the_clock_only_for_a_compaction_lag_the_version_honours(
    version: str, setting: dict[str, str], reads: bool
) -> None:
    from offsets_auditor.cleaner.selection import reads_clock

    assert reads_clock(cleaner_config(list(setting.items()), None, version)) is reads
