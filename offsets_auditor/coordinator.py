"""Which ``__consumer_offsets`` partition coordinates a group.

``partition = Utils.abs(groupId.hashCode()) % partitions`` in every Kafka version from 0.8.2 to
4.x (0.9.0.1 ``kafka/coordinator/GroupMetadataManager.scala`` ``partitionFor``; 3.8.0
``group-coordinator/.../GroupCoordinatorService.java`` ``partitionFor``), where ``hashCode`` is
Java's ``String.hashCode`` (``h = 31*h + c`` over UTF-16 code units, int32 overflow) and
``Utils.abs`` maps ``Integer.MIN_VALUE`` to 0 (``clients/.../utils/Utils.java``). Transactional
ids use the same formula over ``__transaction_state``.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

INT_MIN = -(2**31)


def java_string_hashes(texts: Sequence[str]) -> npt.NDArray[np.int32]:
    """Java's ``String.hashCode`` of each of ``texts``: characters outside the BMP count as
    their two UTF-16 surrogates; lone surrogates (e.g. from undecodable bytes) pass through as
    such. ``h = 31*h + c`` over a string's units is the sum of ``c_i * 31^(n-1-i)`` modulo
    2^32, computed for all the strings at once."""
    joined = "".join(texts)
    raw = joined.encode("utf-16-le", "surrogatepass")
    units = np.frombuffer(raw, dtype="<u2").astype(np.uint64)
    lengths = np.fromiter(map(len, texts), dtype=np.int64, count=len(texts))
    if len(raw) != 2 * len(joined):  # characters outside the BMP: two units each
        lengths = np.fromiter((len(t.encode("utf-16-le", "surrogatepass")) // 2 for t in texts),
                              dtype=np.int64, count=len(texts))  # fmt: skip
    if not len(units):
        return np.zeros(len(texts), dtype=np.int32)
    ends = np.cumsum(lengths)
    # each unit's distance from its string's end: the power of 31 it is multiplied by
    from_end = np.repeat(ends, lengths) - 1 - np.arange(len(units))
    powers = np.ones(int(lengths.max(initial=0)) + 1, dtype=np.uint64)
    for k in range(1, len(powers)):
        powers[k] = (powers[k - 1] * np.uint64(31)) & np.uint64(0xFFFFFFFF)
    terms = (units * powers[from_end]) & np.uint64(0xFFFFFFFF)
    starts = ends - lengths
    sums = np.zeros(len(texts), dtype=np.uint64)
    nonempty = lengths > 0
    sums[nonempty] = np.add.reduceat(terms, starts[nonempty])  # wraps modulo 2^64
    return (sums & np.uint64(0xFFFFFFFF)).astype(np.uint32).view(np.int32)


def java_string_hash(text: str) -> int:
    """Java's ``String.hashCode`` of ``text`` (see :func:`java_string_hashes`)."""
    return int(java_string_hashes([text])[0])


def kafka_abs(n: int) -> int:
    """Kafka's ``Utils.abs``: ``Integer.MIN_VALUE`` maps to 0, not to itself."""
    return 0 if n == INT_MIN else abs(n)


def coordinator_partitions(group_ids: Sequence[str], partitions: int) -> npt.NDArray[np.int64]:
    """The ``__consumer_offsets`` partition whose leader coordinates each of ``group_ids``."""
    if partitions <= 0:
        raise ValueError(f"the offsets topic has at least one partition, not {partitions}")
    hashes = java_string_hashes(group_ids).astype(np.int64)
    absolute = np.where(hashes == INT_MIN, 0, np.abs(hashes))  # Utils.abs
    return absolute % partitions


def coordinator_partition(group_id: str, partitions: int) -> int:
    """The ``__consumer_offsets`` partition whose leader coordinates ``group_id``."""
    return int(coordinator_partitions([group_id], partitions)[0])
