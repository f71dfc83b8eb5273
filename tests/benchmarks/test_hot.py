"""``benchmarks.hot``'s verdicts: runs in turns are judged by the median of the turns' ratios,
not by the best runs (which may come from minutes when the machine ran faster)."""

from __future__ import annotations

import pytest

from benchmarks.hot import speedup


def test_the_median_of_the_turns_decides() -> None:
    one = {"wall_seconds": 21.1, "walls": [25.1, 21.1, 24.0]}
    two = {"wall_seconds": 11.5, "walls": [14.8, 14.0, 11.5]}
    ratio, text = speedup(one, two)
    assert ratio == pytest.approx(25.1 / 14.8)  # of 1.70, 1.51 and 2.09, the middle one
    assert "21.1 s -> 11.5 s at best, 1.83x" in text
    assert "run in turns: 1.70x, 1.51x, 2.09x, median 1.70x" in text


def test_an_even_number_of_turns_takes_the_middle_two() -> None:
    ratio, _ = speedup(
        {"wall_seconds": 10.0, "walls": [10.0, 12.0]}, {"wall_seconds": 5.0, "walls": [5.0, 8.0]}
    )
    assert ratio == pytest.approx((2.0 + 1.5) / 2)


def test_rows_of_one_run_compare_their_best() -> None:
    ratio, text = speedup({"wall_seconds": 137.9}, {"wall_seconds": 112.8})
    assert ratio == pytest.approx(137.9 / 112.8)
    assert "turns" not in text
