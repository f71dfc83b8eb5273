"""Type stub of the C extension ``offsets_auditor/_native.c``: the record reader and the
interning tables (see ``offsets_auditor.reader``)."""

from collections.abc import Sequence
from typing import Any

import numpy.typing as npt
from typing_extensions import Buffer

def md5(data: Buffer, /) -> bytes:
    """The 16-byte MD5 digest of ``data`` (RFC 1321)."""

def md5_many(keys: list[bytes], width: int, /) -> list[bytes]:
    """The MD5 digest of each key, ``width`` (16 AVX-512, 8 AVX2, 1 scalar) lanes at a time."""

def crc(data: Buffer, castagnoli: bool, /) -> int:
    """The CRC-32C of ``data`` when ``castagnoli``, else its CRC-32 (zlib)."""

def intern_all(
    names: Sequence[str],
    ids: dict[str, int],
    names_list: list[str],
    out: Buffer | npt.NDArray[Any],
    /,
) -> int:
    """Each of ``names`` interned in ``ids`` (dense ids in first-seen order, ``names_list[id]``
    the string), its id into ``out`` (int32); returns the count of ids."""

def map_put(
    ids: Buffer | npt.NDArray[Any],
    offsets: Buffer | npt.NDArray[Any] | None,
    present: Buffer | npt.NDArray[Any],
    map_offsets: Buffer | npt.NDArray[Any] | None,
    size: int,
    capacity: int,
    /,
) -> tuple[int, int, bool]:
    """Keys ``ids`` put into an offset map in order (``present``: one bool per key id;
    ``map_offsets``: the offset stored per key, set to ``offsets[i]`` when both are given),
    stopping before the first one that finds ``size >= capacity``: (where it stopped, the size
    after, whether the last key taken was new)."""

def retain(
    batch: Buffer | npt.NDArray[Any],
    weight: Buffer | npt.NDArray[Any],
    offset: Buffer | npt.NDArray[Any],
    ids: Buffer | npt.NDArray[Any],
    keyed: Buffer | npt.NDArray[Any],
    tombstone: Buffer | npt.NDArray[Any],
    alive: Buffer | npt.NDArray[Any],
    batch_control: Buffer | npt.NDArray[Any],
    discard: Buffer | npt.NDArray[Any],
    dropped: Buffer | npt.NDArray[Any],
    map_offsets: Buffer | npt.NDArray[Any],
    latest_offset: int,
    legacy: bool,
    from_found_offset: bool,
    retain_deletes: bool,
    sums: Buffer | npt.NDArray[Any],
    /,
) -> tuple[int, int, int, int]:
    """The retention rules of one pass over a window of records in one sweep
    (``cleaner/retention.py``): ``alive`` becomes what survives; ``sums`` (int64, 5 x batches)
    gets per batch the live records and their weight before, the weight of all records, the
    kept records and their weight after. Returns (invalid, tombstones dropped, tombstones kept,
    records of discarded batches kept empty)."""

def max_simd_width() -> int:
    """MD5 lanes the CPU offers: 16 (AVX-512), 8 (AVX2) or 1."""

class StringTable:
    """Raw byte strings interned to dense ids in first-seen order."""

    def __init__(self) -> None: ...
    def intern(self, raw: Buffer, /) -> int: ...
    def intern_slices(
        self,
        buffers: tuple[Buffer, ...],
        buffer: Buffer | npt.NDArray[Any],
        start: Buffer | npt.NDArray[Any],
        size: Buffer | npt.NDArray[Any],
        out: Buffer | npt.NDArray[Any],
        /,
    ) -> int:
        """Each row's bytes ``buffers[buffer[i]][start[i]:start[i] + size[i]]`` interned (int16,
        int64, int32 columns), its id into ``out`` (int32); returns the table's size."""
    def texts(self, ids: Buffer | npt.NDArray[Any], /) -> list[str | None]:
        """String ``ids[i]`` (int32) decoded as well-formed UTF-8, or None where its bytes are
        not (decode those by the rules the caller needs)."""
    def __getitem__(self, index: int, /) -> bytes: ...
    def __len__(self) -> int: ...

class KeyTable:
    """16-byte digests interned to dense int32 ids in first-seen order."""

    def __init__(self) -> None: ...
    def ids(
        self,
        digests: Buffer | npt.NDArray[Any],
        out: Buffer | npt.NDArray[Any],
        insert: bool = True,
        /,
    ) -> int:
        """The id of each digest into ``out`` (int32; -1 for an absent one when not
        ``insert``); returns the table's size."""
    def digests(self) -> bytes:
        """The table's digests in id order, 16 bytes each."""
    def __len__(self) -> int: ...

class Reader:
    """Whole entries of a segment's windows into the columns of ``reader.columns``."""

    pending_batches: int

    def __init__(
        self,
        strings: StringTable,
        max_records: int = 65536,
        simd_width: int = 0,
        digests: bool = True,
        names: bool = True,
    ) -> None:
        """``digests=False`` leaves the digest column zero (no MD5 computed); ``names=False``
        the group and topic columns -1 (no string interned; key statuses as with names)."""
    def start(self, ordinal: int, record: int, /) -> None: ...
    def take(
        self,
        window: Buffer,
        start: int,
        end: int,
        file_position: int,
        buffer: int,
        max_entry_bytes: int,
        /,
    ) -> tuple[int, int]: ...
    def payload(self) -> tuple[int, int, int, int]: ...
    def take_compressed(self, data: Buffer, buffer: int, /) -> int: ...
    def flush(
        self,
    ) -> tuple[int, int, tuple[bytearray, ...], int, tuple[bytearray, ...]]: ...
    def ordinals(self) -> tuple[int, int]: ...
