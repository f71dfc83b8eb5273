"""The C loops of the groups' deltas (``_folds.commit_rows``, ``commit_keys``, ``latest``) are
the numpy steps they replaced, on random chunks: which records the loader reads and how, each
commit's key by name, each key's latest commit. (The rules themselves are proved on records by
``test_groups.py`` and on every fixture by the golden outputs.)"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from offsets_auditor import _folds

NO_END = (1 << 63) - 1


def column(draw: Any, n: int, low: int, high: int, dtype: Any) -> np.ndarray[Any, Any]:
    return np.array(draw(st.lists(st.integers(low, high), min_size=n, max_size=n)), dtype=dtype)


@st.composite
def chunks(draw: Any) -> dict[str, Any]:
    batches = draw(st.integers(1, 8))
    n = draw(st.integers(0, 40))
    return {
        "batch": np.sort(column(draw, n, 0, batches - 1, np.int32)),
        "offset": np.arange(n, dtype=np.int64) * draw(st.integers(1, 3)) + 100,
        "key_status": column(draw, n, 0, 3, np.int8),
        "value_status": column(draw, n, 0, 2, np.int8),
        "topic": column(draw, n, -1, 2, np.int32),
        "batch_state": column(draw, batches, 0, 2, np.int8),
        "end_offset": draw(st.sampled_from([NO_END, 100, 110, 130])),
    }


@settings(max_examples=300)
@given(chunks())
def test_commit_rows_is_the_masks(c: dict[str, Any]) -> None:
    plain, others, first, last_batch, log_end = _folds.commit_rows(*c.values())
    state = c["batch_state"][c["batch"]]
    read = (state != 2) & (c["offset"] < c["end_offset"])
    simple = (
        read & (state == 0) & (c["key_status"] == 0) & (c["topic"] >= 0) & (c["value_status"] != 1)
    )
    assert np.frombuffer(plain, np.int64).tolist() == np.flatnonzero(simple).tolist()
    assert np.frombuffer(others, np.int64).tolist() == np.flatnonzero(read & ~simple).tolist()
    rows = np.flatnonzero(read)
    expected_first = np.full(len(c["batch_state"]), -1, dtype=np.int64)
    for row in rows[::-1].tolist():
        expected_first[c["batch"][row]] = c["offset"][row]
    assert np.frombuffer(first, np.int64).tolist() == expected_first.tolist()
    assert last_batch == (int(c["batch"][rows[-1]]) if len(rows) else -1)
    assert log_end == (int(c["offset"][rows].max()) + 1 if len(rows) else 0)


def test_commit_keys_names_each_rows_key() -> None:
    group = np.array([0, 2, 1], dtype=np.int32)
    topic = np.array([1, 1, 3], dtype=np.int32)
    partition = np.array([5, 6, 7], dtype=np.int32)
    names = np.array([10, 11, 12, 13], dtype=np.int32)
    packed = _folds.commit_keys(np.array([2, 0], dtype=np.int64), group, topic, partition, names)
    assert np.frombuffer(packed, np.int32).reshape(-1, 4).tolist() == [
        [11, 13, 7, 0],
        [10, 11, 5, 0],
    ]
    with pytest.raises(IndexError):  # a string id not named yet
        _folds.commit_keys(
            np.array([0], dtype=np.int64), group, topic, partition, np.array([-1] * 4, np.int32)
        )


@settings(max_examples=300)
@given(
    st.lists(st.integers(0, 9), max_size=60),
    st.lists(st.integers(-1, 80), min_size=10, max_size=10),
)
def test_latest_is_each_keys_last_candidate_if_later(ids: list[int], stored: list[int]) -> None:
    key_ids = np.array(ids, dtype=np.int32)
    log_offset = np.arange(len(ids), dtype=np.int64) * 2
    held = np.array(stored, dtype=np.int64)
    last = np.full(10, -1, dtype=np.int32)
    keys, winners = _folds.latest(key_ids, log_offset, held, last)
    expected = {}
    for j, key in enumerate(ids):
        expected[key] = j
    kept = sorted((j, k) for k, j in expected.items() if log_offset[j] > held[k])
    won = np.frombuffer(winners, np.int64).tolist()
    assert list(zip(won, np.frombuffer(keys, np.int64).tolist(), strict=True)) == kept
    assert (last == -1).all()  # the scratch is left as it was
    with pytest.raises(IndexError):
        _folds.latest(np.array([3, 10], np.int32), np.zeros(2, np.int64), held, last)
    assert (last == -1).all()
