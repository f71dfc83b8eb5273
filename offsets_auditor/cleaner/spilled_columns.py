"""A segment's cleaner columns written to files as its chunks are read, then mapped back.

A :class:`~offsets_auditor.cleaner.segment_facts.ColumnSink` whose memory does not grow with the
segment: each chunk's columns are appended to one file per column in ``directory`` (which the
caller owns and removes), and :meth:`SpilledColumns.result` gives read-only memory maps of them,
pages the kernel reads in as they are used and may drop again. A 1 GiB segment of offset commits
holds about ten million records, some 400 MB of columns.
"""

from __future__ import annotations

from pathlib import Path
from typing import BinaryIO

import numpy as np

from offsets_auditor.cleaner.arrays import mapped
from offsets_auditor.cleaner.segment_facts import COLUMN_DTYPES, CleanerColumns, join_columns


class SpilledColumns:
    """Columns appended to ``directory/<column name>``; ``result`` maps them."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        directory.mkdir(parents=True, exist_ok=True)
        self._files: dict[str, BinaryIO] = {
            name: (directory / name).open("wb") for name in COLUMN_DTYPES
        }

    def add(self, part: CleanerColumns) -> None:
        for name, out in self._files.items():
            out.write(np.ascontiguousarray(getattr(part, name)).data)

    def result(self) -> CleanerColumns:
        for out in self._files.values():
            out.close()
        return mapped_columns(self.directory)


def mapped_columns(directory: Path) -> CleanerColumns:
    """The columns :class:`SpilledColumns` wrote to ``directory``, mapped read-only."""
    return CleanerColumns(
        **{name: mapped(directory / name, dtype) for name, dtype in COLUMN_DTYPES.items()}
    )


def empty_columns() -> CleanerColumns:
    """Columns of no record and no batch (what travels in their place)."""
    return join_columns([])
