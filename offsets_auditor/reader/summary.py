"""Totals over decoded segments: what ``offsets-auditor dump --summary`` prints.

Counted over the reader's columns: the rows whose key and value the reader decoded are counted
with numpy; the others are decoded one by one (``decode.RowDecoder``), which also finds their
errors.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from offsets_auditor.errors import DecodeError, TruncatedError
from offsets_auditor.reader.columns import (
    GROUP_METADATA_KEY_TYPE,
    Chunk,
    KeyStatus,
    ValueStatus,
)
from offsets_auditor.reader.decode import DecodedRecord, RowDecoder
from offsets_auditor.reader.options import DEFAULT_LIMITS, Backend, Limits
from offsets_auditor.reader.segment import ByteSource, read_segment
from offsets_auditor.records.compression import codec_label
from offsets_auditor.records.control import CONTROL_TYPES


@dataclass
class SegmentTotals:
    """Counts for one file or for all of them. ``records_by_key`` is keyed ``<key_type>/v<N>``,
    ``values_by_version`` ``<key_type>/v<N>`` by value version; ``codecs`` and ``magics`` count
    batches; ``valid_bytes`` is where the last whole, decodable entry ends."""

    bytes: int = 0
    valid_bytes: int = 0
    batches: int = 0
    records: int = 0
    tombstones: int = 0
    records_by_key: Counter[str] = field(default_factory=Counter)
    values_by_version: Counter[str] = field(default_factory=Counter)
    control_records: Counter[str] = field(default_factory=Counter)
    transactional_records: int = 0
    codecs: Counter[str] = field(default_factory=Counter)
    magics: Counter[str] = field(default_factory=Counter)
    errors: int = 0
    truncated: int = 0
    first_offset: int | None = None
    last_offset: int | None = None

    def add_chunk(self, chunk: Chunk, rows: RowDecoder) -> Iterator[DecodeError]:
        """Count every record and batch of ``chunk``; yields the problems of its records."""
        r, b = chunk.records, chunk.batches
        starts = b.continued == 0
        self.batches += int(np.count_nonzero(starts))
        _add_counts(self.codecs, b.codec[starts], codec_label)
        _add_counts(self.magics, b.magic[starts], str)
        if len(b):
            last = len(b) - 1
            self.valid_bytes = int(b.position[last] + b.size[last])
        if not len(r):
            return
        self.records += len(r)
        if self.first_offset is None:
            self.first_offset = int(r.offset[0])
        self.last_offset = int(r.offset[-1])
        self.transactional_records += int(np.count_nonzero(b.transactional[r.batch]))
        control = r.key_status == KeyStatus.CONTROL
        for type_id, n in _counts(r.control_type[control]):
            self.control_records[CONTROL_TYPES.get(type_id, "unknown")] += n
        decoded = (r.key_status == KeyStatus.OK) & (r.value_status != ValueStatus.DEFERRED)
        self.tombstones += int(np.count_nonzero(decoded & (r.value_status == ValueStatus.NULL)))
        for key_type, n in _counts(r.key_type[decoded]):
            self.records_by_key[_key_name(key_type)] += n
        valued = decoded & (r.value_status == ValueStatus.OK)
        pairs = r.key_type[valued].astype(np.int64) * 65536 + r.value_version[valued]
        for pair, n in _counts(pairs):
            self.values_by_version[f"{_key_name(pair // 65536)}:v{pair % 65536}"] += n
        others = np.flatnonzero(~decoded & ~control).tolist()
        if others:
            for item in rows.decoded(chunk, others):
                if item.error is not None:
                    self.add_error(item.error)
                    yield item.error
                self._add_record(item)

    def _add_record(self, item: DecodedRecord) -> None:
        if item.control is not None:
            self.control_records[item.control.type] += 1
            return
        if item.record.value is None:
            self.tombstones += 1
        key_name = f"{item.key.key_type}/v{item.key.version}" if item.key else "undecodable"
        self.records_by_key[key_name] += 1
        if item.value is not None:
            version = "unknown" if item.value.version is None else f"v{item.value.version}"
            self.values_by_version[f"{key_name}:{version}"] += 1

    def add_error(self, error: DecodeError) -> None:
        self.errors += 1
        if isinstance(error, TruncatedError):
            self.truncated += 1

    def merge(self, other: SegmentTotals) -> None:
        for name in (
            "bytes",
            "valid_bytes",
            "batches",
            "records",
            "tombstones",
            "transactional_records",
            "errors",
            "truncated",
        ):
            setattr(self, name, getattr(self, name) + getattr(other, name))
        for name in ("records_by_key", "values_by_version", "control_records", "codecs", "magics"):
            getattr(self, name).update(getattr(other, name))

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {}
        for name, value in self.__dict__.items():
            data[name] = dict(sorted(value.items())) if isinstance(value, Counter) else value
        return data


def _key_name(key_type: int) -> str:
    """``<key_type>/v<N>`` of a key the reader decoded (OffsetCommitKey or GroupMetadataKey)."""
    kind = "group_metadata" if key_type == GROUP_METADATA_KEY_TYPE else "offset_commit"
    return f"{kind}/v{key_type}"


def _counts(values: np.ndarray[Any, Any]) -> list[tuple[int, int]]:
    """(value, how many) for each distinct value, in value order. The columns counted hold
    few, small values: counted into bins, without sorting, when their span is small."""
    if not values.size:
        return []
    low, high = int(values.min()), int(values.max())
    if high - low >= _MAX_BINS:
        unique, counts = np.unique(values, return_counts=True)
        return list(zip(unique.tolist(), counts.tolist(), strict=True))
    bins = np.bincount(values.astype(np.intp) - low)
    present = np.flatnonzero(bins)
    return list(zip((present + low).tolist(), bins[present].tolist(), strict=True))


_MAX_BINS = 1 << 18


def _add_counts(counter: Counter[str], values: np.ndarray[Any, Any], label: Any) -> None:
    for value, n in _counts(values):
        counter[label(value)] += n


def summarize_segment(
    source: ByteSource,
    *,
    file: str | None = None,
    backend: Backend = Backend.NATIVE,
    limits: Limits = DEFAULT_LIMITS,
) -> Iterator[DecodeError | SegmentTotals]:
    """Decode every record of a segment and total it up. Yields each located problem as it is
    found, then the :class:`SegmentTotals` last."""
    totals = SegmentTotals(bytes=source.size)
    rows = RowDecoder(file)
    read = read_segment(
        source, file=file, backend=backend, limits=limits, digests=False, names=False
    )
    for item in read:
        if isinstance(item, DecodeError):
            totals.add_error(item)
            yield item
        else:
            yield from totals.add_chunk(item, rows)
    yield totals
