"""Coordinator load time, calibrated on the broker's own load times.

After a start every broker logs how long loading each ``__consumer_offsets`` partition took
("Finished loading offsets ... in N milliseconds", parsed by ``offsets_auditor.restart``).
Wherever the audit or the scan reads the broker's ``server.log`` (``--server-log``, or found
beside the log dir), those times are set against the partitions' sizes here (bytes, records,
and the groups that wrote them, as they are on disk now) and the models of
``offsets_auditor.broker_logs.load_models`` are fitted to them: load time proportional to
bytes, records or groups, with or without a fixed part. The one whose leave-one-out
predictions of the broker's own loads miss least is used for every partition's estimate, with
that miss as its expected error (a factor: 1.5 means within 1.5 times either way). Loads
under ``load_models.MIN_LOAD_MS`` teach little and are left out of the models; with fewer than
two left no model can be judged, and the estimate falls back to the broker's bytes over its
milliseconds summed over every load (:func:`calibrate`: measured, if dominated by the fixed
costs of small loads, so pessimistic rather than the assumed rate's 2-40x optimism on real
2.3.0 restarts), its expected error unknown; without any load, the assumed rate
(``audit --load-rate``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from offsets_auditor.broker_logs.load_models import Basis, LoadFit, LoadModel, fit, observations
from offsets_auditor.restart.coordinator_loads import CoordinatorLoad


@dataclass(frozen=True, slots=True)
class PartitionSize:
    """A partition's size in each of the models' units: bytes of its segments, records in
    them, groups that wrote them."""

    partition: int
    bytes: int
    records: int
    groups: int


@dataclass(frozen=True, slots=True)
class LoadRate:
    bytes_per_second: float
    loads: int
    bytes: int
    milliseconds: int
    basis: str


def calibrate(
    loads: Iterable[tuple[int, int]], sizes: Mapping[int, int], source: str
) -> LoadRate | None:
    """The rate from ``(partition, load_ms)`` pairs and the partitions' sizes in bytes; loads
    of empty partitions or of unknown size teach nothing and are left out. ``None`` when no
    load is usable."""
    total_bytes = total_ms = count = 0
    for partition, load_ms in loads:
        size = sizes.get(partition)
        if not size or load_ms <= 0:
            continue
        total_bytes += size
        total_ms += load_ms
        count += 1
    if not count:
        return None
    rate = total_bytes / (total_ms / 1000)
    return LoadRate(
        bytes_per_second=rate,
        loads=count,
        bytes=total_bytes,
        milliseconds=total_ms,
        basis=f"calibrated on this broker: {count} coordinator load(s) in {source} read"
        f" {total_bytes:,} bytes in {total_ms:,} ms = {rate / 1048576:,.2f} MiB/s"
        " (partition sizes as they are on disk now)",
    )


@dataclass(frozen=True, slots=True)
class LoadCalibration:
    """The broker's finished loads in ``source`` (its last start), how many are of partitions
    of known size, the models fitted to them (best first) and, for when none can be judged,
    their bytes over their milliseconds (``rate``)."""

    source: str
    loads: int
    observed: int
    fit: LoadFit
    rate: LoadRate | None = None

    @property
    def best(self) -> LoadModel | None:
        return self.fit.best

    @property
    def usable(self) -> int:
        """Loads long enough to teach something (``load_models.MIN_LOAD_MS``)."""
        return self.observed - self.fit.skipped


def calibrate_loads(
    loads: Sequence[CoordinatorLoad], sizes: Iterable[PartitionSize], source: str
) -> LoadCalibration:
    """Fit the load models to ``loads`` (a server log's last start) of the partitions of
    ``sizes``; loads that failed, or of partitions not here, are left out."""
    by_number = {s.partition: (s.bytes, s.records, s.groups) for s in sizes}
    seen = observations(loads, by_number)
    finished = [x for x in loads if x.load_ms is not None and not x.failed]
    rate = calibrate(
        [(x.partition, x.reading_ms or 0) for x in finished],
        {p: b for p, (b, _, _) in by_number.items()},
        source,
    )
    return LoadCalibration(source, len(finished), len(seen), fit(seen), rate)


def units(model: LoadModel, size: PartitionSize, at_bytes: int) -> int:
    """``size`` in ``model``'s unit when the partition holds ``at_bytes`` bytes (after cleaning,
    say): its records in proportion to its bytes; its groups whatever the bytes (cleaning keeps
    each group's latest state)."""
    if model.basis is Basis.BYTES:
        return at_bytes
    if model.basis is Basis.GROUPS:
        return size.groups
    return round(size.records * at_bytes / size.bytes) if size.bytes else 0
