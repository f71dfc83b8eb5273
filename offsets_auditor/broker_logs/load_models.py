"""How long a coordinator load takes, fitted to the broker's own load times.

Every broker logs how long loading each ``__consumer_offsets`` partition took (0.9-0.10
"Finished loading offsets from [__consumer_offsets,N] in X milliseconds.", 0.11+ "Finished
loading offsets and group metadata from __consumer_offsets-N in X milliseconds[, of which Y
milliseconds was spent in the scheduler]", the 3.6+ group coordinator's "Finished loading of
metadata from __consumer_offsets-N with epoch E in Xms where Yms was spent in the scheduler.
Loaded R records which total to B bytes." (3.8+); every wording with its source in
``offsets_auditor.restart.log_lines``). The load reads the whole partition and replays every
record into the groups' state, so its time may follow the bytes read, the records replayed,
or the groups rebuilt, plus a fixed cost each.

:func:`fit` tries each model, ``time = rate x size`` (through the origin) and, with enough
loads, ``time = fixed + rate x size``, for size in bytes, records and groups, and picks the
one whose leave-one-out predictions of the broker's own loads are closest: each load is
predicted by the model fitted to the others, and the geometric mean of the factors by which
those predictions miss (``max(predicted, real) / min(...)``) is the model's expected error on
a load it has not seen: 1.5 means "within a factor of 1.5 either way" on average. A factor,
not a percentage, because load times span orders of magnitude and an estimate 40 times too
short (the issue's uncalibrated 50 MiB/s on a real 2.3.0 restart) must not score better than
one twice too long. Loads shorter than :data:`MIN_LOAD_MS` (empty partitions, the timer's
milliseconds) are kept out of the fit.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum

from offsets_auditor.restart.coordinator_loads import CoordinatorLoad

#: Loads shorter than this teach little (the broker prints whole milliseconds).
MIN_LOAD_MS = 50
#: An affine model (fixed + rate) needs at least this many loads.
AFFINE_MIN_LOADS = 4


class Basis(StrEnum):
    BYTES = "bytes"
    RECORDS = "records"
    GROUPS = "groups"


@dataclass(frozen=True, slots=True)
class LoadObservation:
    """One load by the broker: ``load_ms`` as it printed it (less the scheduler's wait where it
    says so), and the partition's size at the time: bytes of its segments, records in them,
    groups whose state it holds (``None`` where unknown)."""

    partition: int
    load_ms: float
    bytes: int | None
    records: int | None
    groups: int | None

    def size(self, basis: Basis) -> int | None:
        return {Basis.BYTES: self.bytes, Basis.RECORDS: self.records, Basis.GROUPS: self.groups}[
            basis
        ]


@dataclass(frozen=True, slots=True)
class LoadModel:
    """``seconds = fixed_ms / 1000 + size / rate_per_second``; ``expected_error`` the factor
    its leave-one-out predictions of the broker's loads miss by (geometric mean; 1.0 exact)."""

    basis: Basis
    affine: bool
    fixed_ms: float
    ms_per_unit: float
    loads: int
    expected_error: float

    @property
    def rate_per_second(self) -> float | None:
        return 1000 / self.ms_per_unit if self.ms_per_unit > 0 else None

    def predict_seconds(self, size: int) -> float:
        return (self.fixed_ms + self.ms_per_unit * size) / 1000

    def describe(self) -> str:
        rate = self.rate_per_second
        per = f"{rate:,.0f} {self.basis.value}/s" if rate is not None else "no rate"
        fixed = f"{self.fixed_ms:,.0f} ms + " if self.affine else ""
        return (
            f"load time = {fixed}{self.basis.value} at {per}, fitted to {self.loads} of the"
            f" broker's own loads; expected error a factor of {self.expected_error:.2f} either"
            " way (leave-one-out predictions of those loads)"
        )


@dataclass(frozen=True, slots=True)
class LoadFit:
    """Every model tried (best first), the best, and the loads left out."""

    models: tuple[LoadModel, ...]
    skipped: int

    @property
    def best(self) -> LoadModel | None:
        return self.models[0] if self.models else None


def _fit(points: Sequence[tuple[float, float]], affine: bool) -> tuple[float, float] | None:
    """Least squares: ``(fixed, slope)``, through the origin unless ``affine``."""
    if not points:
        return None
    if not affine:
        sxx = sum(x * x for x, _ in points)
        if sxx == 0:
            return None
        return 0.0, sum(x * y for x, y in points) / sxx
    n = len(points)
    mx = sum(x for x, _ in points) / n
    my = sum(y for _, y in points) / n
    sxx = sum((x - mx) ** 2 for x, _ in points)
    if sxx == 0:
        return None
    slope = sum((x - mx) * (y - my) for x, y in points) / sxx
    fixed = my - slope * mx
    # a load cannot get faster with size, nor take negative time: the constrained least
    # squares is then on the boundary (no fixed part, or no slope)
    if fixed < 0:
        return _fit(points, affine=False)
    if slope < 0:
        return my, 0.0
    return fixed, slope


def miss_factor(predicted: float, real: float) -> float:
    """How many times too long or too short ``predicted`` is (1.0: exact)."""
    if predicted <= 0:
        return math.inf
    return max(predicted, real) / min(predicted, real)


def _mean_factor(factors: Sequence[float]) -> float:
    if any(math.isinf(f) for f in factors):
        return math.inf
    return math.exp(sum(math.log(f) for f in factors) / len(factors))


def _loo_error(points: Sequence[tuple[float, float]], affine: bool) -> float | None:
    factors = []
    for i, (x, y) in enumerate(points):
        rest = [p for j, p in enumerate(points) if j != i]
        fitted = _fit(rest, affine)
        if fitted is None:
            return None
        fixed, slope = fitted
        factors.append(miss_factor(fixed + slope * x, y))
    return _mean_factor(factors) if factors else None


def error_of(model: LoadModel, observations: Sequence[LoadObservation]) -> float | None:
    """The factor ``model`` misses the usable ``observations`` by (no refitting): how an
    assumed rate fares on the broker's own loads."""
    factors = [
        miss_factor(model.predict_seconds(size) * 1000, o.load_ms)
        for o in observations
        if o.load_ms >= MIN_LOAD_MS and (size := o.size(model.basis)) is not None and size > 0
    ]
    return _mean_factor(factors) if factors else None


def fit(observations: Sequence[LoadObservation]) -> LoadFit:
    """Every model the loads allow, best (lowest expected error) first. A model needs two
    usable loads (three for an affine one, and :data:`AFFINE_MIN_LOADS`) to be judged."""
    usable = [o for o in observations if o.load_ms >= MIN_LOAD_MS]
    models = []
    for basis in Basis:
        points = [
            (float(size), float(o.load_ms))
            for o in usable
            if (size := o.size(basis)) is not None and size > 0
        ]
        for affine in (False, True):
            if len(points) < (AFFINE_MIN_LOADS if affine else 2):
                continue
            whole = _fit(points, affine)
            error = _loo_error(points, affine)
            if whole is None or error is None:
                continue
            models.append(LoadModel(basis, affine, whole[0], whole[1], len(points), error))
    models.sort(key=lambda m: (m.expected_error, m.affine, list(Basis).index(m.basis)))
    return LoadFit(tuple(models), len(observations) - len(usable))


def observations(
    loads: Iterable[CoordinatorLoad],
    sizes: Mapping[int, tuple[int | None, int | None, int | None]],
) -> list[LoadObservation]:
    """The broker's finished loads (``offsets_auditor.restart``: a server.log's last start)
    with each partition's (bytes, records, groups) at load time; failed loads and partitions
    of unknown size are left out. The time is the load's reading time (its printed time less
    the scheduler's wait, 2.6+)."""
    out = []
    for load in loads:
        if load.failed or load.reading_ms is None or load.partition not in sizes:
            continue
        size_bytes, records, groups = sizes[load.partition]
        out.append(LoadObservation(load.partition, load.reading_ms, size_bytes, records, groups))
    return out
