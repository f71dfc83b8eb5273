"""Type stub of the optional C extension ``offsets_auditor/_cleaner_speedups.c``: the C path
of the log-cleaner emulation (see ``offsets_auditor.cleaner.fast``)."""

from typing_extensions import Buffer

def md5(data: Buffer, /) -> bytes:
    """The 16-byte MD5 digest of ``data`` (RFC 1321)."""

def md5_many(keys: list[bytes], /) -> list[bytes]:
    """The MD5 digest of each key, computed several at a time (AVX-512 / AVX2 lanes when the CPU
    has them), as the window functions do."""

def _simd(width: int, /) -> int:
    """Tests: use 16 (AVX-512), 8 (AVX2) or 1 (scalar) lanes; returns the previous width (0 only
    reads it). ValueError for a width the CPU lacks."""

def _crc(data: Buffer, castagnoli: bool, /) -> int:
    """Tests: the CRC-32 (zlib) or CRC-32C the entry checks compute."""

class SkimpyOffsetMap:
    """Kafka's ``SkimpyOffsetMap``: ``slots * 24`` bytes (MD5 of the raw key, int64 offset),
    allocated at the first put."""

    def __init__(self, slots: int) -> None: ...
    @property
    def size(self) -> int: ...
    @property
    def slots(self) -> int: ...
    @property
    def latest_offset(self) -> int: ...
    @property
    def allocated_bytes(self) -> int: ...
    def put(self, key: Buffer, offset: int, /) -> bool:
        """Kafka's put; False (and nothing changed) when ``size == slots``."""
    def get(self, key: Buffer, /) -> int:
        """The offset stored for ``key``, or -1 (0.10.1+ bounded probing)."""
    def update_latest_offset(self, offset: int, /) -> None: ...
    def clear(self) -> None:
        """Zero the buffer: size 0, latest offset -1."""
    def items(self) -> list[tuple[bytes, int]]:
        """(digest, offset) of every slot in use."""

class DigestSet:
    """Distinct MD5 digests of keys of part ``part`` of ``parts`` (by digest), in at most
    ``limit`` bytes (0: no limit)."""

    def __init__(self, limit: int = 0, parts: int = 1, part: int = 0) -> None: ...
    @property
    def size(self) -> int: ...
    @property
    def allocated_bytes(self) -> int: ...
    @property
    def overflowed(self) -> bool:
        """A new digest did not fit in ``limit``: the count is short, sweep again."""
    def add(self, key: Buffer, /) -> int:
        """1 if the key's digest is new, 0 if it was there (or did not fit), -1 if it belongs to
        another part."""

class WriterTable:
    """Per consumer group writes of a partition, in first-seen order."""

    def __init__(self) -> None: ...
    def add(self, group: str, share: float, timestamp: int, /) -> None: ...
    def items(self) -> list[tuple[str, int, float, int, int]]:
        """(group, records, bytes, first_timestamp, last_timestamp) in first-seen order."""

def scan_window(
    window: Buffer,
    start: int,
    end: int,
    writers: WriterTable,
    first_timestamp: int,
    largest_timestamp: int,
    last_offset: int,
    /,
) -> tuple[int, int, int, int, int, int]:
    """-> (next_rel, batches, records, first_timestamp, largest_timestamp, last_offset)"""

def map_window(
    window: Buffer,
    start: int,
    end: int,
    offset_map: SkimpyOffsetMap,
    alive: bytearray,
    batch_alive: bytearray,
    batch: int,
    record: int,
    mode: int,
    start_offset: int,
    max_desired: int,
    /,
) -> tuple[int, int, int, int, int, int, int, int]:
    """-> (next_rel, batch, record, status, seen, last, txn_seen, txn_max)"""

def clean_window(
    window: Buffer,
    start: int,
    end: int,
    offset_map: SkimpyOffsetMap,
    alive: bytearray,
    batch_alive: bytearray,
    batch: int,
    record: int,
    legacy_rules: bool,
    shallow: bool,
    retain_deletes: bool,
    /,
) -> tuple[int, int, int, int, int, int, int, int, int, int, int, int, int, int]:
    """-> (next_rel, batch, record, start_records, start_bytes, end_records, end_bytes,
    inexact, tombstones_kept, tombstones_dropped, invalid_dropped, size, txn_seen, txn_max)"""

def needed_window(
    window: Buffer,
    start: int,
    end: int,
    keys: DigestSet,
    low: int,
    high: int,
    ordinal: int,
    /,
) -> tuple[int, int, int, int]:
    """-> (next_rel, ordinal, last_added, last_new)"""
