"""Where the cleaner emulation keeps its per-record state: each record's key id and, per
emulated config, which records and batches survive the passes so far.

That state grows with the partition (a partition of hundreds of GB holds billions of records),
so besides plain memory (:func:`in_memory`, ``offsets-auditor audit``'s default) it can live in
files (:class:`FileArrays`, the scan's executors): mapped read-write and unlinked at once, their
pages written back and dropped by the kernel as it needs, never counted as the process's own.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Any, Protocol

import numpy as np
import numpy.typing as npt


class Arrays(Protocol):
    """``arrays(count, dtype, fill)``: a new writable 1-D array of ``count`` items set to
    ``fill``."""

    def __call__(self, count: int, dtype: Any, fill: Any) -> npt.NDArray[Any]: ...


def in_memory(count: int, dtype: Any, fill: Any) -> npt.NDArray[Any]:
    return np.full(count, fill, dtype=dtype)


class FileArrays:
    """Arrays in files of ``directory`` (which the caller owns), each mapped shared and the file
    unlinked at once: the map keeps it until the array is gone."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory

    def __call__(self, count: int, dtype: Any, fill: Any) -> npt.NDArray[Any]:
        if not count:
            return in_memory(0, dtype, fill)
        handle, name = tempfile.mkstemp(prefix="array-", dir=self.directory)
        try:
            os.ftruncate(handle, count * np.dtype(dtype).itemsize)  # reads as zeros
            array = mapped(Path(name), dtype, writable=True)
        finally:
            os.close(handle)
            os.unlink(name)
        if fill:
            array.fill(fill)
        return array


def mapped(path: Path, dtype: Any, *, writable: bool = False) -> npt.NDArray[Any]:
    """The file at ``path`` as a 1-D array of ``dtype``, memory-mapped (shared when
    ``writable``): a plain array over the map, since a ``numpy.memmap`` is pickled by copying
    its bytes."""
    count = path.stat().st_size // np.dtype(dtype).itemsize
    if not count:  # an empty file cannot be mapped
        return np.zeros(0, dtype=dtype)
    if writable:
        return np.asarray(np.memmap(path, dtype=dtype, mode="r+", shape=(count,)))
    return np.asarray(np.memmap(path, dtype=dtype, mode="r", shape=(count,)))
