"""The cleaner's offset map: how many keys fit, and how much memory a given need takes.

SkimpyOffsetMap (0.9.0.1 / 2.3.0 ``core/src/main/scala/kafka/log/OffsetMap.scala``; 3.8.0
``storage/.../log/SkimpyOffsetMap.java``): each entry is a 16-byte MD5 of the raw key plus an
8-byte offset, ``slots = memory / 24``, and the cleaner fills it to
``maxDesiredMapSize = (slots * loadFactor).toInt`` (``Cleaner.buildOffsetMap``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from offsets_auditor.constants import INT_MAX

HASH_SIZE = 16  # MD5
BYTES_PER_ENTRY = HASH_SIZE + 8
#: ``require(dedupeBufferSize / threads > 1024 * 1024)``: strictly more than 1 MiB per thread.
MIN_MEMORY_PER_THREAD = 1024 * 1024 + 1


def slots(memory_per_thread: int) -> int:
    return memory_per_thread // BYTES_PER_ENTRY


def max_desired_map_size(memory_per_thread: int, load_factor: float) -> int:
    """How many distinct keys one cleaner thread maps before it stops: Java's
    ``(slots * loadFactor).toInt`` (double product truncated toward zero)."""
    return int(slots(memory_per_thread) * load_factor)


@dataclass(frozen=True, slots=True)
class BufferAdvice:
    """The smallest ``log.cleaner.dedupe.buffer.size`` giving each thread ``entries`` of map
    capacity, and how it was worked out. ``possible`` is False when even the 2 GiB per-thread
    cap is not enough."""

    entries: int
    threads: int
    load_factor: float
    slots: int
    memory_per_thread: int
    dedupe_buffer_size: int
    possible: bool
    arithmetic: str


def buffer_for(entries: int, threads: int, load_factor: float) -> BufferAdvice:
    """The smallest dedupe buffer (all threads) whose per-thread map fits ``entries`` keys."""
    need_slots = max(1, math.ceil(entries / load_factor))
    while need_slots > 1 and int((need_slots - 1) * load_factor) >= entries:
        need_slots -= 1
    while int(need_slots * load_factor) < entries:
        need_slots += 1
    memory = need_slots * BYTES_PER_ENTRY
    floor_applied = memory < MIN_MEMORY_PER_THREAD
    memory = max(memory, MIN_MEMORY_PER_THREAD)
    possible = memory <= INT_MAX
    total = memory * threads
    steps = [
        f"{entries:,} map entries needed",
        f"slots >= ceil({entries:,} / {load_factor}) = {need_slots:,}",
        f"{need_slots:,} slots x {BYTES_PER_ENTRY} B"
        f" = {need_slots * BYTES_PER_ENTRY:,} B per thread",
    ]
    if floor_applied:
        steps.append(
            f"raised to {MIN_MEMORY_PER_THREAD:,} B, the broker's minimum"
            " (more than 1 MiB per thread)"
        )
    steps.append(f"x {threads} thread{'s' if threads != 1 else ''} = {total:,} B")
    if not possible:
        steps.append(
            f"but a thread's map is capped at {INT_MAX:,} B (Int.MaxValue): not reachable by memory"
        )
    return BufferAdvice(
        entries=entries,
        threads=threads,
        load_factor=load_factor,
        slots=need_slots,
        memory_per_thread=memory,
        dedupe_buffer_size=total,
        possible=possible,
        arithmetic="; ".join(steps),
    )
