"""Type stub of the C extension ``offsets_auditor/_folds.c``: the per-record folds of a chunk's
columns (their rules: the callers' docstrings)."""

from typing import Any

import numpy.typing as npt
from typing_extensions import Buffer

_Column = Buffer | npt.NDArray[Any]

def writer_rows(
    group: _Column,
    batch: _Column,
    batch_control: _Column,
    batch_records: _Column,
    row_of_count: _Column,
    rows: int,
    /,
) -> tuple[int, bytearray]:
    """The shares table's row of each batch whose records write (int32, -1: none), new rows
    numbered from ``rows`` into ``row_of_count`` (by count of records in a batch); the rows
    after."""

def writers_add(
    group: _Column,
    batch: _Column,
    batch_row: _Column,
    batch_size: _Column,
    timestamp: _Column,
    seen: int,
    records: _Column,
    first_seen: _Column,
    first_timestamp: _Column,
    last_timestamp: _Column,
    sums: _Column,
    /,
) -> int:
    """One chunk's writes added to the per-group state columns; the writes counted after."""

def commit_rows(
    batch: _Column,
    offset: _Column,
    key_status: _Column,
    value_status: _Column,
    topic: _Column,
    batch_state: _Column,
    end_offset: int,
    /,
) -> tuple[bytearray, bytearray, bytearray, int, int]:
    """What the loader reads of a chunk: the plain rows and the others (int64), per batch the
    offset of its first read record (int64, -1: none), the last read record's batch (-1: none)
    and the greatest read offset + 1 (0: none)."""

def commit_keys(
    rows: _Column, group: _Column, topic: _Column, partition: _Column, names: _Column, /
) -> bytearray:
    """Each row's key by name: int32 (group name id, topic name id, partition, 0)."""

def latest(
    ids: _Column, log_offset: _Column, stored: _Column, last: _Column, /
) -> tuple[bytearray, bytearray]:
    """Each key's latest candidate later than what it holds: the keys and the candidates
    (int64, indexes into the candidates)."""
