"""The cleaner's offset map as Kafka fills it, for one pass.

Kafka's ``SkimpyOffsetMap`` stores a 16-byte MD5 of each raw key (version prefix included) and
the key's latest offset; ``size`` counts distinct digests, ``latestOffset`` is the last offset
given to ``put`` or ``updateLatestOffset`` (2.3.0 ``core/.../log/OffsetMap.scala``).
Here a key is its dense id among the partition's distinct digests (``PartitionScan.key_ids``), so
the map is one array of offsets by key id; what it answers is the broker's (distinct raw keys are
distinct digests, MD5 collisions aside, as for the broker). Its capacity is the broker's:
``maxDesiredMapSize`` entries (``capacity``), which the passes respect when they fill it.
``SkimpyOffsetMap.get`` is the retention filter's lookup of ``offsets`` (-1 for a key absent
or null: ``_native.retain``).
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from offsets_auditor import _native
from offsets_auditor.cleaner.capacity import max_desired_map_size, slots

Ids = npt.NDArray[np.int32]
Offsets = npt.NDArray[np.int64]


class OffsetMap:
    """Key id -> latest offset, with the broker's capacity limits. Presence is kept apart from
    the offset: a key put at a negative offset (a base offset field the CRC does not cover,
    damaged) is present, as in Kafka's map."""

    def __init__(self, keys: int, memory_per_thread: int, load_factor: float) -> None:
        self.slots = slots(memory_per_thread)
        self.max_desired = max_desired_map_size(memory_per_thread, load_factor)
        self.offsets: Offsets = np.full(keys, -1, dtype=np.int64)
        self.present: npt.NDArray[np.bool_] = np.zeros(keys, dtype=np.bool_)
        self.size = 0
        self.latest_offset = -1

    @property
    def utilization(self) -> float:
        return self.size / self.slots if self.slots else 0.0

    def clear(self) -> None:
        self.offsets.fill(-1)
        self.present.fill(False)
        self.size = 0
        self.latest_offset = -1

    def put_until_full(self, ids: Ids, offsets: Offsets) -> int | None:
        """``put`` of each (key, offset) in order while the map has room: before each one, a
        map holding ``max_desired`` keys is full and the puts stop there (at a new key or a
        key already held alike: ``Cleaner.buildOffsetMap`` checks the size before each
        record). Returns the index of the pair that found it full (None: every pair was put);
        the latest offset becomes the last one put, if any was."""
        stop, self.size, _ = _native.map_put(
            ids, offsets, self.present, self.offsets, self.size, self.max_desired
        )
        if stop:
            self.latest_offset = int(offsets[stop - 1])
        return stop if stop < len(ids) else None

    def put_all(self, ids: Ids, offsets: Offsets) -> None:
        """``put`` of each (key, offset) in order, whatever the capacity: the last offset of a
        key wins; the latest offset becomes the last one put."""
        stop, self.size, _ = _native.map_put(
            ids, offsets, self.present, self.offsets, self.size, 1 << 62
        )
        if stop:
            self.latest_offset = int(offsets[stop - 1])
