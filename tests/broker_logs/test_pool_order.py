"""0.9.0.1's cleaner threads take equally dirty partitions in the log pool's order, as the real
brokers' own ``log-cleaner.log`` files show.

The emulated order (``cleaner.pool_order``: Java 8+ ``ConcurrentHashMap`` over Scala's
``TopicAndPartition`` hash codes, the keys put in the order of the broker's own "Completed load
of log" lines) is checked against what each real broker's threads did, partition by partition
and death by death. Which thread is which is a race (the lock the threads grab the pool under
is not fair: ``two-threads/README.md``), so each thread's sequence is compared, not its number.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from offsets_auditor.audit.partition import BrokerAudit
from offsets_auditor.broker_logs.history import CleanerHistory, CleaningEnd
from offsets_auditor.cleaner.pool_order import (
    PoolKey,
    iteration_order,
    rankings,
    tie_break_rankings,
    topic_and_partition_hash,
)
from offsets_auditor.cleaner.threads import Schedule, simulate_takes
from offsets_auditor.versions import KafkaVersion
from tests.broker_logs.support import FIXTURES, emulate, history, load_order

K09 = FIXTURES / "kafka-0.9.0.1"
Sequences = Counter[tuple[tuple[str, bool], ...]]

#: (name, log dir the broker started on, its config, its server.log, its log-cleaner.log)
RUNS = [
    (
        "cleaner-died",
        K09 / "cleaner-died/kafka-logs",
        K09 / "cleaner-died/broker-server.properties",
        K09 / "cleaner-died/server.log",
        K09 / "cleaner-died/log-cleaner.log",
    ),
    (
        "two-threads",
        K09 / "two-threads/kafka-logs",
        K09 / "two-threads/broker-server.properties",
        K09 / "two-threads/server.log",
        K09 / "two-threads/log-cleaner.log",
    ),
    *(
        (
            f"corrupt-segments/{variant}",
            K09 / "corrupt-segments/kafka-logs",
            K09 / f"corrupt-segments/{variant}/broker-server.properties",
            K09 / f"corrupt-segments/{variant}/server.log",
            K09 / f"corrupt-segments/{variant}/log-cleaner.log",
        )
        for variant in ("after-clean-marker", "after-clean-marker-5-threads")
    ),
]


def real_sequences(found: CleanerHistory) -> Sequences:
    """Each thread's cleanings in the broker's last run: (partition, died on it)."""
    return Counter(
        tuple((c.partition, c.end is CleaningEnd.THREAD_DIED) for c in cleanings)
        for cleanings in found.by_thread().values()
    )


def emulated_sequences(audit: BrokerAudit, rank: dict[str, int]) -> Sequences:
    """The threads' race as ``offsets_auditor.audit`` runs it, with ``rank`` as the order."""
    schedules = [
        Schedule(
            name=p.name,
            order=rank[p.name],
            ratios=tuple(s.ratio for s in p.emulated.selections),
            costs=tuple(x.start_bytes + 1 for x in p.emulated.passes),
            fails_at=len(p.emulated.passes) if p.emulated.kills_thread else None,
        )
        for p in audit.partitions
    ]
    _, _, takes = simulate_takes(schedules, audit.config.threads)
    per_thread: dict[int, list[tuple[str, bool]]] = {}
    for take in takes:
        per_thread.setdefault(take.thread, []).append((take.name, take.died))
    return Counter(tuple(s) for s in per_thread.values())


def broker_rank(audit: BrokerAudit, server_log: Path) -> dict[str, int]:
    ranks = tie_break_rankings(
        [(p.topic, p.partition) for p in audit.log_dir.partitions],
        [p.name for p in audit.partitions],
        KafkaVersion.parse("0.9.0.1"),
        loaded=load_order(server_log),
    )
    assert ranks is not None and len(ranks) == 1  # the broker's load order fixes the order
    return ranks[0]


@pytest.mark.parametrize(("name", "log_dir", "properties", "server_log", "cleaner_log"), RUNS)
def test_the_threads_take_partitions_in_the_brokers_order(
    name: str, log_dir: Path, properties: Path, server_log: Path, cleaner_log: Path
) -> None:
    audit = emulate(log_dir, properties, "0.9.0.1")
    real = real_sequences(history(cleaner_log))
    assert real  # every one of these runs cleaned or died on something
    assert emulated_sequences(audit, broker_rank(audit, server_log)) == real


def test_partition_number_order_is_not_the_brokers() -> None:
    """Without the log pool's order, the five-thread run comes out otherwise: the fixture can
    tell the two orders apart (the test above fails without the fix)."""
    _, log_dir, properties, server_log, cleaner_log = RUNS[-1]
    audit = emulate(log_dir, properties, "0.9.0.1")
    by_number = {p.name: p.emulated.partition.partition for p in audit.partitions}
    assert emulated_sequences(audit, by_number) != real_sequences(history(cleaner_log))
    assert emulated_sequences(audit, broker_rank(audit, server_log)) == real_sequences(
        history(cleaner_log)
    )


def test_first_cleanings_follow_the_pool_order() -> None:
    """after-unclean: one thread, every offsets partition never cleaned (ratio 1.0, equal), so
    its first five cleanings are the pool's order itself: 0, 2, 4, 3, 1."""
    run = K09 / "corrupt-segments/after-unclean"
    cleaned = [c.partition for c in history(run / "log-cleaner.log").cleanings][:5]
    order = iteration_order(
        load_order(run / "server.log"), PoolKey.TOPIC_AND_PARTITION, insertion_order_known=True
    )
    offsets = [n for n in order.names if n.startswith("__consumer_offsets-")]
    assert cleaned == offsets
    assert cleaned != sorted(cleaned)


def test_without_the_load_order_every_order_of_a_shared_bin_is_given() -> None:
    """From the log dir alone the broker's 9 keys fill 16 bins; __consumer_offsets-3 and -4
    share one, so both their orders are given, the broker's among them."""
    keys = load_order(K09 / "corrupt-segments/after-unclean/server.log")
    order = iteration_order(sorted(keys), PoolKey.TOPIC_AND_PARTITION, insertion_order_known=False)
    offsets = [f"__consumer_offsets-{p}" for p in range(5)]
    found = rankings(order, offsets)
    assert found is not None
    orders = {tuple(sorted(r, key=r.__getitem__)) for r in found}
    assert orders == {
        tuple(f"__consumer_offsets-{p}" for p in (0, 2, 4, 3, 1)),
        tuple(f"__consumer_offsets-{p}" for p in (0, 2, 3, 4, 1)),
    }


def test_topic_and_partition_hash_is_scalas() -> None:
    """Scala 2.11's specialized case-class hash, against values computed by hand from
    ``scala.runtime.Statics`` (mix, finalizeHash) for TopicAndPartition("t", 0)."""
    # acc = 0xcafebabe; mix(acc, "t".hashCode = 116); mix(acc, 0); finalizeHash(acc, 2)
    assert topic_and_partition_hash("t", 0) == _statics_hash(116, 0)
    assert topic_and_partition_hash("__consumer_offsets", 3) != topic_and_partition_hash(
        "__consumer_offsets", 4
    )


def _statics_hash(topic_hash: int, partition: int) -> int:
    """An independent transcription of ``Statics.mix``/``finalizeHash`` (Java int arithmetic)."""

    def i32(v: int) -> int:
        v &= 0xFFFFFFFF
        return v - (1 << 32) if v >= 1 << 31 else v

    def rotl(v: int, d: int) -> int:
        v &= 0xFFFFFFFF
        return i32((v << d) | (v >> (32 - d)))

    def mix(h: int, data: int) -> int:
        k = rotl(i32(data * 0xCC9E2D51), 15)
        k = i32(k * 0x1B873593)
        h = rotl(h ^ k, 13)
        return i32(h * 5 + 0xE6546B64)

    h = mix(mix(i32(0xCAFEBABE), topic_hash), partition)
    h ^= 2
    h = i32(h)
    for shift, mult in ((16, 0x85EBCA6B), (13, 0xC2B2AE35)):
        h = i32((h ^ ((h & 0xFFFFFFFF) >> shift)) * mult)
    return i32(h ^ ((h & 0xFFFFFFFF) >> 16))
