"""Estimates of the time a restart phase has left, each with its basis in words."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Estimate:
    """Time left for one phase. ``seconds`` is ``None`` when there is nothing to extrapolate
    from yet; ``basis`` says in words what the estimate rests on."""

    phase: str
    remaining: float
    unit: str
    rate_per_second: float | None
    seconds: float | None
    basis: str

    def to_dict(self) -> dict[str, object]:
        return {
            "phase": self.phase,
            "remaining": self.remaining,
            "unit": self.unit,
            "rate_per_second": self.rate_per_second,
            "seconds": self.seconds,
            "basis": self.basis,
        }


def rate_estimate(
    phase: str, done: int, total: int, unit: str, elapsed: float | None, since: str, source: str
) -> Estimate:
    remaining = max(total - done, 0)
    if done <= 0 or elapsed is None or elapsed <= 0:
        return Estimate(
            phase,
            remaining,
            unit,
            None,
            None,
            f"0 of {total} {unit} done so far: no rate yet (total from {source})",
        )
    rate = done / elapsed
    return Estimate(
        phase,
        remaining,
        unit,
        rate,
        remaining / rate,
        f"{done} of {total} {unit} in {elapsed:.3f} s since {since} = {rate:.3g} {unit}/s, "
        f"extrapolated to the {remaining} left (total from {source})",
    )
