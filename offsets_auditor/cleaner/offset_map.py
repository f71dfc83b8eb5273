"""The cleaner's offset map as Kafka builds it, for one pass.

Kafka's ``SkimpyOffsetMap`` stores a 16-byte MD5 of each raw key (version prefix included) and
the key's latest offset; ``size`` counts distinct digests, ``latestOffset`` is the last offset
given to ``put`` or ``updateLatestOffset``
(2.3.0 ``core/src/main/scala/kafka/log/OffsetMap.scala``).
Distinct raw keys are distinct digests (MD5 collisions aside, as for the broker).

With the C extension the map IS Kafka's buffer (``_cleaner_speedups.SkimpyOffsetMap``: slots x 24
bytes, allocated at the first put); without it, a dict of digests. Both answer the same for every
sequence of calls the emulation makes: the only difference, a put into a map whose every slot is
taken (which the broker refuses), moves the entries into the dict until the next ``clear``.
"""

from __future__ import annotations

import hashlib

from offsets_auditor.cleaner import fast
from offsets_auditor.cleaner.capacity import INT_MAX, max_desired_map_size, slots


class OffsetMap:
    """Digest -> latest offset, with the broker's capacity limits."""

    def __init__(self, memory_per_thread: int, load_factor: float) -> None:
        self.slots = slots(memory_per_thread)
        self.max_desired = max_desired_map_size(memory_per_thread, load_factor)
        self._offsets: dict[bytes, int] = {}
        self._latest = -1
        self._skimpy = (
            fast.C.SkimpyOffsetMap(self.slots)
            if fast.enabled() and self.slots > 0 and memory_per_thread <= INT_MAX
            else None
        )
        self._spilled = False

    @property
    def c_map(self) -> fast.C.SkimpyOffsetMap | None:
        """The C map while it holds the entries (for the C window functions), else None."""
        return None if self._spilled else self._skimpy

    @staticmethod
    def digest(key: bytes) -> bytes:
        return hashlib.md5(key, usedforsecurity=False).digest()

    @property
    def size(self) -> int:
        m = self.c_map
        return m.size if m is not None else len(self._offsets)

    @property
    def latest_offset(self) -> int:
        m = self.c_map
        return m.latest_offset if m is not None else self._latest

    @property
    def utilization(self) -> float:
        return self.size / self.slots if self.slots else 0.0

    def put(self, key: bytes, offset: int) -> None:
        m = self.c_map
        if m is not None:
            if m.put(key, offset):
                return
            self._spill(m)
        self._offsets[self.digest(key)] = offset
        self._latest = offset

    def get(self, key: bytes) -> int:
        m = self.c_map
        if m is not None:
            return m.get(key)
        return self._offsets.get(self.digest(key), -1)

    def update_latest_offset(self, offset: int) -> None:
        m = self.c_map
        if m is not None:
            m.update_latest_offset(offset)
        else:
            self._latest = offset

    def clear(self) -> None:
        self._offsets.clear()
        self._latest = -1
        self._spilled = False
        if self._skimpy is not None:
            self._skimpy.clear()

    def _spill(self, m: fast.C.SkimpyOffsetMap) -> None:
        """Every slot is taken: go on in the dict (the broker would refuse the put)."""
        self._offsets = dict(m.items())
        self._latest = m.latest_offset
        self._spilled = True


class KeySet:
    """Distinct key digests: the dedupe-buffer advice's count. With the C extension, only the
    digests of part ``part`` of ``parts`` are kept, in at most ``limit`` bytes (0: no limit),
    and ``overflowed`` says one did not fit; in Python, one unbounded set (``parts`` must be 1).
    """

    def __init__(self, limit: int = 0, parts: int = 1, part: int = 0) -> None:
        self.c_set = fast.C.DigestSet(limit, parts, part) if fast.enabled() else None
        if self.c_set is None and parts != 1:
            raise ValueError("the pure-Python key set is not split into parts")
        self._digests: set[bytes] = set()

    @property
    def size(self) -> int:
        return self.c_set.size if self.c_set is not None else len(self._digests)

    @property
    def overflowed(self) -> bool:
        return self.c_set.overflowed if self.c_set is not None else False

    def add(self, key: bytes) -> int:
        """1 if the key was not there yet, 0 if it was (or did not fit), -1 if it belongs to
        another part."""
        if self.c_set is not None:
            return self.c_set.add(key)
        digest = OffsetMap.digest(key)
        if digest in self._digests:
            return 0
        self._digests.add(digest)
        return 1
