"""Loads of ``__consumer_offsets`` partitions by the group coordinator, and their ETA.

The loads run one at a time: 0.9-3.9's ``GroupMetadataManager`` and 3.x's
``CoordinatorLoaderImpl`` each read partitions on a single-threaded ``KafkaScheduler``.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime

from offsets_auditor.restart.estimates import Estimate


def _iso(at: datetime | None) -> str | None:
    return None if at is None else at.isoformat(sep=" ", timespec="milliseconds")


@dataclass(frozen=True, slots=True)
class CoordinatorLoad:
    """One load of ``__consumer_offsets-<partition>`` by the group coordinator.

    ``started_at`` is when the broker printed the start (0.9-0.10) or the scheduling (0.11+;
    ``start_is_schedule``) of the load; ``None`` if that line is not in the log. ``load_ms`` and
    ``scheduler_ms`` are the broker's numbers; ``bytes`` comes from the broker's line (3.8+) or
    else from the partition's ``.log`` files in LOGDIR (``bytes_source``).
    """

    partition: int
    started_at: datetime | None
    start_is_schedule: bool | None
    finished_at: datetime | None = None
    load_ms: int | None = None
    scheduler_ms: int | None = None
    failed: bool = False
    bytes: int | None = None
    bytes_source: str | None = None

    @property
    def done(self) -> bool:
        return self.finished_at is not None

    @property
    def reading_ms(self) -> int | None:
        """Time spent reading the partition: ``load_ms`` minus time queued in the scheduler."""
        if self.load_ms is None:
            return None
        return self.load_ms - (self.scheduler_ms or 0)

    def to_dict(self) -> dict[str, object]:
        return {
            "partition": self.partition,
            "topic_partition": f"__consumer_offsets-{self.partition}",
            "started_at": _iso(self.started_at),
            "start_is_schedule": self.start_is_schedule,
            "finished_at": _iso(self.finished_at),
            "load_ms": self.load_ms,
            "scheduler_ms": self.scheduler_ms,
            "failed": self.failed,
            "bytes": self.bytes,
            "bytes_source": self.bytes_source,
        }


def latest_done(loads: Iterable[CoordinatorLoad]) -> set[int]:
    latest: dict[int, CoordinatorLoad] = {}
    for load in loads:
        latest[load.partition] = load
    return {p for p, load in latest.items() if load.done}


def coordinator_estimate(
    loads: tuple[CoordinatorLoad, ...], expected: set[int], sizes: dict[int, int]
) -> Estimate | None:
    finished = latest_done(loads)
    remaining = sorted(expected - finished)
    if not remaining:
        return None
    done_loads = [ld for ld in loads if ld.done and not ld.failed and ld.reading_ms is not None]
    sized = [ld for ld in done_loads if ld.bytes]
    remaining_bytes = [sizes.get(p) for p in remaining]
    sequential = "loads run one at a time on the coordinator's single loader thread"
    if sized and all(b is not None for b in remaining_bytes):
        total_ms = sum(ld.reading_ms or 0 for ld in sized)
        total_bytes = sum(ld.bytes or 0 for ld in sized)
        left = sum(b or 0 for b in remaining_bytes)
        ms_per_byte = total_ms / total_bytes
        return Estimate(
            "coordinator-loading",
            left,
            "bytes",
            None if total_ms == 0 else 1000 * total_bytes / total_ms,
            left * ms_per_byte / 1000,
            f"{len(sized)} finished load(s) read {total_bytes} bytes in {total_ms} ms "
            f"(broker-printed load times less scheduler wait) = {ms_per_byte:.3g} ms/byte, "
            f"times the {left} bytes of the {len(remaining)} partition(s) left "
            f"(sizes from LOGDIR); {sequential}",
        )
    if done_loads:
        total_ms = sum(ld.reading_ms or 0 for ld in done_loads)
        mean_ms = total_ms / len(done_loads)
        return Estimate(
            "coordinator-loading",
            len(remaining),
            "partitions",
            None if total_ms == 0 else 1000 * len(done_loads) / total_ms,
            len(remaining) * mean_ms / 1000,
            f"mean broker-printed load time of {len(done_loads)} finished load(s) "
            f"({mean_ms:.1f} ms) times the {len(remaining)} partition(s) left; {sequential}",
        )
    return Estimate(
        "coordinator-loading",
        len(remaining),
        "partitions",
        None,
        None,
        f"{len(remaining)} partition(s) left and no finished load to extrapolate from",
    )
