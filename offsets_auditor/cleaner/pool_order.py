"""Which of several equally dirty partitions a cleaner thread takes: the first in its log pool.

``LogCleanerManager.grabFilthiestLog`` (0.9.0.1; ``grabFilthiestCompactedLog`` later) walks the
log manager's ``Pool`` of logs, keeps the compacted ones not in progress, and takes
``cleanableLogs.max`` by dirty ratio. Scala's ``TraversableOnce.max`` is
``reduceLeft((x, y) => if (cmp.gteq(x, y)) x else y)`` (Scala v2.10.5 and v2.11.7
``src/library/scala/collection/TraversableOnce.scala``): among equal ratios the FIRST one met
wins, and ``Pool.iterator`` is ``ConcurrentHashMap.entrySet.iterator`` (0.9.0.1
``core/src/main/scala/kafka/utils/Pool.scala``, ``new ConcurrentHashMap[K, V]``: the default
constructor). So the tie-break is the map's iteration order, over EVERY topic-partition the
broker holds (the pool is ``LogManager.logs``, 0.9.0.1 ``LogManager.scala`` line 54), not the
partition number.

The map (JDK 8 and later ``java.util.concurrent.ConcurrentHashMap``, read at openjdk/jdk
03ba260d; the same code since JDK 8):

- a key's bin is ``spread(key.hashCode()) & (n - 1)`` with
  ``spread(h) = (h ^ (h >>> 16)) & HASH_BITS`` (``HASH_BITS = 0x7fffffff``);
- the table starts at 16 bins (``initTable``, ``DEFAULT_CAPACITY``) and doubles when the count
  reaches ``sizeCtl = n - (n >>> 2)`` (``addCount``): at 12, 24, 48, ... keys;
- ``putVal`` appends a new key at the tail of its bin; ``transfer`` splits each bin into a low
  and a high list: the trailing run of nodes that go the same way (``lastRun``) is kept in
  order, the nodes before it are PREPENDED one by one (reversed);
- iteration (``Traverser``) walks the bins from index 0 up, each bin head to tail.

The keys' hash codes:

- ``kafka.common.TopicAndPartition`` (the pool key up to 0.10.1.x; 0.10.2.0 ``LogManager``
  keys it by ``TopicPartition``): a Scala case class with an ``Int`` field, so its synthetic
  ``hashCode`` is the "specialized" one (Scala v2.10.5 / v2.11.7
  ``src/compiler/scala/tools/nsc/typechecker/SyntheticMethods.scala`` ``chooseHashcode``):
  ``acc = 0xcafebabe; acc = mix(acc, topic.hashCode); acc = mix(acc, partition);
  finalizeHash(acc, 2)`` with ``scala.runtime.Statics.mix``/``finalizeHash`` (MurmurHash3);
  Kafka 0.9.0.1 is built for Scala 2.10.5 and 2.11.7 (``scala.gradle``, ``build.gradle``), the
  same code in both;
- ``org.apache.kafka.common.TopicPartition`` (0.10.2.0 on): ``31 * (31 + partition) +
  topic.hashCode`` (``clients/.../TopicPartition.java``).

What cannot be known from a log dir alone is the order in which keys entered the map (the
broker's load order, ``File.listFiles`` order, then partitions created at run time): it decides
the order inside a bin. ``server.log`` has it: the ``Log`` constructor prints "Completed load of
log ..." just before ``logs.put`` (0.9.0.1 ``LogManager.loadLogs``, one loader thread per log
dir by default). Without it, keys sharing a bin may come in any order, and every order is
given (:func:`rankings`). Java 7's ``ConcurrentHashMap`` (segments, another hash spread, a
per-map seed in some updates) is not emulated: its order is unknown.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from enum import StrEnum

from offsets_auditor.versions import KafkaVersion

_MASK = 0xFFFFFFFF
HASH_BITS = 0x7FFFFFFF
#: ``ConcurrentHashMap.DEFAULT_CAPACITY``
DEFAULT_CAPACITY = 16
#: ``TREEIFY_THRESHOLD``: a bin this long becomes a tree (or the table grows): not emulated
TREEIFY_THRESHOLD = 8
#: How many candidate orders :func:`rankings` lists before it gives up (they multiply).
MAX_RANKINGS = 720


class PoolKey(StrEnum):
    """The class of the log pool's keys."""

    TOPIC_AND_PARTITION = "kafka.common.TopicAndPartition"
    TOPIC_PARTITION = "org.apache.kafka.common.TopicPartition"


class Jvm(StrEnum):
    """The broker's JVM, as far as the map's order goes."""

    JAVA8_PLUS = "8+"
    JAVA7 = "7"


def pool_key_of(version: KafkaVersion) -> PoolKey:
    """0.10.2.0 keys ``LogManager``'s pool by ``TopicPartition`` (``LogManager.scala``)."""
    if version.at_least("0.10.2"):
        return PoolKey.TOPIC_PARTITION
    return PoolKey.TOPIC_AND_PARTITION


def _signed(value: int) -> int:
    value &= _MASK
    return value - (1 << 32) if value & 0x80000000 else value


def java_string_hash(text: str) -> int:
    """``java.lang.String.hashCode`` over UTF-16 code units, as a signed 32-bit int."""
    h = 0
    data = text.encode("utf-16-be", "surrogatepass")
    for i in range(0, len(data), 2):
        h = (31 * h + ((data[i] << 8) | data[i + 1])) & _MASK
    return _signed(h)


def _rotl(value: int, distance: int) -> int:
    value &= _MASK
    return ((value << distance) | (value >> (32 - distance))) & _MASK


def _mix(h: int, data: int) -> int:
    """``scala.runtime.Statics.mix``."""
    k = (data * 0xCC9E2D51) & _MASK
    k = _rotl(k, 15)
    k = (k * 0x1B873593) & _MASK
    h = (h ^ k) & _MASK
    h = _rotl(h, 13)
    return (h * 5 + 0xE6546B64) & _MASK


def _finalize(h: int, length: int) -> int:
    """``scala.runtime.Statics.finalizeHash``: ``avalanche(hash ^ length)``."""
    h = (h ^ length) & _MASK
    h ^= h >> 16
    h = (h * 0x85EBCA6B) & _MASK
    h ^= h >> 13
    h = (h * 0xC2B2AE35) & _MASK
    h ^= h >> 16
    return h


def topic_and_partition_hash(topic: str, partition: int) -> int:
    """``TopicAndPartition(topic, partition).hashCode`` (Scala 2.10/2.11 case class)."""
    h = _mix(0xCAFEBABE, java_string_hash(topic) & _MASK)
    h = _mix(h, partition & _MASK)
    return _signed(_finalize(h, 2))


def topic_partition_hash(topic: str, partition: int) -> int:
    """``new TopicPartition(topic, partition).hashCode()``."""
    return _signed(31 * (31 + partition) + java_string_hash(topic))


def spread(h: int) -> int:
    """``ConcurrentHashMap.spread``."""
    h &= _MASK
    return (h ^ (h >> 16)) & HASH_BITS


def _hash(key: PoolKey, topic: str, partition: int) -> int:
    if key is PoolKey.TOPIC_AND_PARTITION:
        return spread(topic_and_partition_hash(topic, partition))
    return spread(topic_partition_hash(topic, partition))


def table_size(count: int) -> int:
    """The table length after ``count`` insertions into a fresh map (no removals)."""
    n = DEFAULT_CAPACITY
    while count >= n - (n >> 2):
        n *= 2
    return n


TopicPartitionName = tuple[str, int]


@dataclass(frozen=True, slots=True)
class PoolOrder:
    """The iteration order of a log pool: ``bins`` in iteration order, each bin's keys as
    ``topic-partition`` names; ``ordered`` says whether the order INSIDE each bin is known
    (keys given in insertion order) or only which keys share a bin."""

    key: PoolKey
    table_size: int
    bins: tuple[tuple[str, ...], ...]
    ordered: bool
    #: why the order is not emulated at all (a JVM whose map is not emulated, a bin long
    #: enough to become a tree); ``None`` when it is
    unknown_because: str | None = None

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(name for b in self.bins for name in b)


def _name(topic: str, partition: int) -> str:
    return f"{topic}-{partition}"


def iteration_order(
    keys: Sequence[TopicPartitionName],
    key: PoolKey,
    *,
    insertion_order_known: bool,
    jvm: Jvm = Jvm.JAVA8_PLUS,
) -> PoolOrder:
    """The pool's iteration order after ``keys`` were put into a fresh map.

    With ``insertion_order_known``, ``keys`` are in the order they were put (the broker's
    "Completed load of log" lines) and the split of bins at each resize is replayed; else only
    which keys share a final bin is known (the table size depends on the count alone)."""
    unique = list(dict.fromkeys(keys))
    if jvm is not Jvm.JAVA8_PLUS:
        return PoolOrder(
            key,
            0,
            (tuple(_name(t, p) for t, p in unique),),
            False,
            unknown_because=f"Java {jvm.value}'s ConcurrentHashMap order is not emulated",
        )
    if not insertion_order_known:
        n = table_size(len(unique))
        final: dict[int, list[str]] = {}
        for topic, partition in unique:
            final.setdefault(_hash(key, topic, partition) & (n - 1), []).append(
                _name(topic, partition)
            )
        bins = tuple(tuple(sorted(final[i])) for i in sorted(final))
        return _checked(PoolOrder(key, n, bins, False))
    n = DEFAULT_CAPACITY
    table: list[list[tuple[int, str]]] = [[] for _ in range(n)]
    threshold = n - (n >> 2)
    for count, (topic, partition) in enumerate(unique, start=1):
        h = _hash(key, topic, partition)
        table[h & (n - 1)].append((h, _name(topic, partition)))
        if count >= threshold:
            table = _transfer(table, n)
            n *= 2
            threshold = n - (n >> 2)
    return _checked(PoolOrder(key, n, tuple(tuple(k for _, k in b) for b in table if b), True))


def _transfer(table: list[list[tuple[int, str]]], n: int) -> list[list[tuple[int, str]]]:
    """``ConcurrentHashMap.transfer`` for list bins: ``lastRun`` kept, the rest prepended."""
    grown: list[list[tuple[int, str]]] = [[] for _ in range(2 * n)]
    for i, nodes in enumerate(table):
        if not nodes:
            continue
        run_bit = nodes[0][0] & n
        last_run = 0
        for j in range(1, len(nodes)):
            bit = nodes[j][0] & n
            if bit != run_bit:
                run_bit, last_run = bit, j
        low: list[tuple[int, str]] = list(nodes[last_run:]) if run_bit == 0 else []
        high: list[tuple[int, str]] = list(nodes[last_run:]) if run_bit != 0 else []
        for node in nodes[:last_run]:
            if node[0] & n == 0:
                low.insert(0, node)
            else:
                high.insert(0, node)
        grown[i], grown[i + n] = low, high
    return grown


def _checked(order: PoolOrder) -> PoolOrder:
    longest = max((len(b) for b in order.bins), default=0)
    if longest >= TREEIFY_THRESHOLD:
        return PoolOrder(
            order.key,
            order.table_size,
            order.bins,
            order.ordered,
            unknown_because=f"a bin holds {longest} keys: the map grows or treeifies it"
            " (not emulated)",
        )
    return order


def rankings(order: PoolOrder, among: Iterable[str]) -> tuple[dict[str, int], ...] | None:
    """Every order in which the pool can meet the partitions ``among``, as ranks (0 first).

    One ranking when the order is known; one per order of the keys of ``among`` that share a
    bin when the insertion order is not (at most :data:`MAX_RANKINGS`, else ``None``);
    ``None`` when the order is unknown (:attr:`PoolOrder.unknown_because`). The orders inside
    a shared bin are all those of its members (exact when they can all have been put after the
    map's last resize; otherwise a few of them may not happen)."""
    wanted = set(among)
    if order.unknown_because is not None:
        if len(wanted) > 6:
            return None
        names = sorted(wanted)
        return tuple(
            {name: rank for rank, name in enumerate(perm)} for perm in itertools.permutations(names)
        )
    groups = [tuple(n for n in b if n in wanted) for b in order.bins]
    groups = [g for g in groups if g]
    choices = [
        (g,) if order.ordered or len(g) == 1 else tuple(itertools.permutations(g)) for g in groups
    ]
    total = math.prod(len(c) for c in choices)
    if total > MAX_RANKINGS:
        return None
    found = []
    for combo in itertools.product(*choices):
        flat = [name for group in combo for name in group]
        found.append({name: rank for rank, name in enumerate(flat)})
    return tuple(found)


#: The releases whose tie-break is emulated: the ``TopicAndPartition`` pool (0.9.0.0 to
#: 0.10.1.x), whose order the real 0.9.0.1 brokers' ``log-cleaner.log`` files confirm
#: (tests/test_pool_order.py). 0.10.2.0 to 2.0.x key the pool by ``TopicPartition``; the order
#: :func:`iteration_order` computes for them follows from the same sources but no real broker
#: of those versions has shown it here, so they keep the partition-number order for now.
EMULATED_UNTIL = "0.10.2"


def tie_break_rankings(
    partitions: Sequence[TopicPartitionName],
    offsets: Iterable[str],
    version: KafkaVersion,
    *,
    loaded: Sequence[TopicPartitionName] | None = None,
    jvm: Jvm = Jvm.JAVA8_PLUS,
) -> tuple[dict[str, int], ...] | None:
    """Every order in which a broker of ``version`` holding ``partitions`` (every live
    topic-partition of its log dir) meets the ``offsets`` partitions among equals; ``loaded``
    is the broker's own load order ("Completed load of log" lines of its last start), when
    known. ``None`` when the order is not emulated for ``version`` or there are too many."""
    if version.at_least(EMULATED_UNTIL):
        return None
    key = pool_key_of(version)
    if loaded is not None and set(partitions) <= set(loaded):
        order = iteration_order(loaded, key, insertion_order_known=True, jvm=jvm)
    else:
        order = iteration_order(partitions, key, insertion_order_known=False, jvm=jvm)
    return rankings(order, offsets)
