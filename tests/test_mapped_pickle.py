"""``mapped_pickle``: parts read apart, arrays mapped (read-only views of the file's pages, not
copies), and a file cut short or empty is unreadable, not a crash."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from offsets_auditor import mapped_pickle


def test_parts_read_apart_with_their_arrays_mapped(tmp_path: Path) -> None:
    path = tmp_path / "result"
    mapped_pickle.write(path, {"a": np.arange(3)}, ("rest", np.arange(5.0)), "third")
    assert mapped_pickle.read(path, 0)["a"].tolist() == [0, 1, 2]
    name, values = mapped_pickle.read(path, 1)
    assert name == "rest" and values.tolist() == [0.0, 1.0, 2.0, 3.0, 4.0]
    assert not values.flags.writeable and not values.flags.owndata  # a view of the file
    assert mapped_pickle.read(path, 2) == "third"
    with pytest.raises(mapped_pickle.UnreadableError):
        mapped_pickle.read(path, 3)


@pytest.mark.parametrize("keep", [0, 10, 100, -1])
def test_a_file_cut_short_is_unreadable(tmp_path: Path, keep: int) -> None:
    path = tmp_path / "result"
    mapped_pickle.write(path, ("rest", np.arange(1000)))
    path.write_bytes(path.read_bytes()[:keep])
    with pytest.raises(mapped_pickle.UnreadableError):
        mapped_pickle.read(path)


def test_a_missing_file_is_an_os_error(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        mapped_pickle.read(tmp_path / "none")
