"""Which ``__consumer_offsets`` partition coordinates a group.

``partition = Utils.abs(groupId.hashCode()) % partitions`` in every Kafka version from 0.8.2 to
4.x (0.9.0.1 ``kafka/coordinator/GroupMetadataManager.scala`` ``partitionFor``; 3.8.0
``group-coordinator/.../GroupCoordinatorService.java`` ``partitionFor``), where ``hashCode`` is
Java's ``String.hashCode`` (``h = 31*h + c`` over UTF-16 code units, int32 overflow) and
``Utils.abs`` maps ``Integer.MIN_VALUE`` to 0 (``clients/.../utils/Utils.java``). Transactional
ids use the same formula over ``__transaction_state``.
"""

from __future__ import annotations

import sys
from array import array

INT_MIN = -(2**31)


def java_string_hash(text: str) -> int:
    """Java's ``String.hashCode`` of ``text``: characters outside the BMP count as their two
    UTF-16 surrogates; lone surrogates (e.g. from undecodable bytes) pass through as such."""
    units = array("H")
    units.frombytes(text.encode("utf-16-le", "surrogatepass"))
    if sys.byteorder == "big":
        units.byteswap()
    h = 0
    for unit in units:
        h = (31 * h + unit) & 0xFFFFFFFF
    return h - (1 << 32) if h & 0x80000000 else h


def kafka_abs(n: int) -> int:
    """Kafka's ``Utils.abs``: ``Integer.MIN_VALUE`` maps to 0, not to itself."""
    return 0 if n == INT_MIN else abs(n)


def coordinator_partition(group_id: str, partitions: int) -> int:
    """The ``__consumer_offsets`` partition whose leader coordinates ``group_id``."""
    if partitions <= 0:
        raise ValueError(f"the offsets topic has at least one partition, not {partitions}")
    return kafka_abs(java_string_hash(group_id)) % partitions
