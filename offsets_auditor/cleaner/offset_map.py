"""The cleaner's offset map as Kafka builds it, for one pass.

Kafka's ``SkimpyOffsetMap`` stores a 16-byte MD5 of each raw key (version prefix included) and
the key's latest offset; ``size`` counts distinct digests, ``latestOffset`` is the last offset
given to ``put`` or ``updateLatestOffset``
(2.3.0 ``core/src/main/scala/kafka/log/OffsetMap.scala``).
Distinct raw keys are distinct digests (MD5 collisions aside, as for the broker).
"""

from __future__ import annotations

import hashlib

from offsets_auditor.cleaner.capacity import max_desired_map_size, slots


class OffsetMap:
    """Digest -> latest offset, with the broker's capacity limits."""

    def __init__(self, memory_per_thread: int, load_factor: float) -> None:
        self.slots = slots(memory_per_thread)
        self.max_desired = max_desired_map_size(memory_per_thread, load_factor)
        self._offsets: dict[bytes, int] = {}
        self.latest_offset = -1

    @staticmethod
    def digest(key: bytes) -> bytes:
        return hashlib.md5(key, usedforsecurity=False).digest()

    @property
    def size(self) -> int:
        return len(self._offsets)

    @property
    def utilization(self) -> float:
        return self.size / self.slots if self.slots else 0.0

    def put(self, key: bytes, offset: int) -> None:
        self._offsets[self.digest(key)] = offset
        self.latest_offset = offset

    def get(self, key: bytes) -> int:
        return self._offsets.get(self.digest(key), -1)

    def update_latest_offset(self, offset: int) -> None:
        self.latest_offset = offset

    def clear(self) -> None:
        self._offsets.clear()
        self.latest_offset = -1
