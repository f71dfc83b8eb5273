"""Which passes happen before the cleaner threads die: the broker's selection loop, simulated.

Each cleaner thread repeatedly takes the partition with the highest cleanable ratio that no
other thread is cleaning (``grabFilthiestLog``), cleans one pass of it, and goes back for more.
Up to 2.0.x a partition whose pass throws kills the thread that picked it, and stays eligible,
so every thread ends up picking it (0.9.0.1 ``LogCleaner.CleanerThread.cleanOrSleep``). Passes
take time in proportion to the bytes they read; a failing pass fails at once. Ties in the ratio
go to the partition the broker's log pool meets first: ``Schedule.order`` is its rank there
(:mod:`offsets_auditor.cleaner.pool_order`), the partition number when that is not known.
"""

from __future__ import annotations

from dataclasses import dataclass

#: How long a failing pass keeps its partition in progress (bytes-equivalent; tiny).
FAILURE_TIME = 0.5


@dataclass(frozen=True, slots=True)
class Schedule:
    """One partition's work: the dirty ratio before each pass and the bytes each pass reads;
    ``fails_at`` is the pass index whose attempt kills the thread (``None`` if none);
    ``order`` the tie-break rank among equally dirty partitions (lower is taken first)."""

    name: str
    order: int
    ratios: tuple[float, ...]
    costs: tuple[int, ...]
    fails_at: int | None


@dataclass(frozen=True, slots=True)
class Take:
    """One pick of a partition by a thread: the pass it cleans, or ``died`` on it."""

    thread: int
    name: str
    number: int
    died: bool


def simulate(schedules: list[Schedule], threads: int) -> tuple[dict[str, int], int]:
    """Passes each partition gets before no live thread is left (or all work is done), and
    how many threads die."""
    done, deaths, _ = simulate_takes(schedules, threads)
    return done, deaths


def simulate_takes(
    schedules: list[Schedule], threads: int
) -> tuple[dict[str, int], int, tuple[Take, ...]]:
    """:func:`simulate`, with every pick in the order the threads make them."""
    takes: list[Take] = []
    done = {s.name: 0 for s in schedules}
    busy_until: dict[str, float] = {}
    free_at = [0.0] * threads
    alive = [True] * threads
    deaths = 0
    by_name = {s.name: s for s in schedules}
    while any(alive):
        thread = min((t for t in range(threads) if alive[t]), key=lambda t: (free_at[t], t))
        now = free_at[thread]
        candidates = []
        for s in schedules:
            i = done[s.name]
            if busy_until.get(s.name, -1.0) > now:
                continue
            if s.fails_at is not None and i == s.fails_at:
                candidates.append((s.ratios[i] if i < len(s.ratios) else 1.0, -s.order, s.name))
            elif i < len(s.costs):
                candidates.append((s.ratios[i], -s.order, s.name))
        if not candidates:
            pending = [u for u in busy_until.values() if u > now]
            if not pending:
                break
            free_at[thread] = min(pending)
            continue
        _, _, name = max(candidates)
        schedule = by_name[name]
        i = done[name]
        if schedule.fails_at is not None and i == schedule.fails_at:
            # the failing pass holds the partition "in progress" for a moment, so threads
            # picking at the same time take other partitions
            busy_until[name] = now + FAILURE_TIME
            alive[thread] = False
            deaths += 1
            takes.append(Take(thread, name, i + 1, died=True))
            continue
        cost = float(max(schedule.costs[i], 1))
        busy_until[name] = now + cost
        free_at[thread] = now + cost
        done[name] = i + 1
        takes.append(Take(thread, name, i + 1, died=False))
    return done, deaths, tuple(takes)
