"""Totals over decoded segments: what ``offsets-auditor dump --summary`` prints."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from offsets_auditor.decode import DecodedRecord
from offsets_auditor.errors import DecodeError, TruncatedError
from offsets_auditor.records.compression import Codec


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

    def add_record(self, item: DecodedRecord, new_batch: bool) -> None:
        batch, record = item.batch, item.record
        if new_batch:
            self.batches += 1
            self.codecs[_codec(batch.codec)] += 1
            self.magics[str(batch.magic)] += 1
            self.valid_bytes = batch.position + batch.size
        self.records += 1
        if self.first_offset is None:
            self.first_offset = record.offset
        self.last_offset = record.offset
        if batch.is_transactional:
            self.transactional_records += 1
        if item.control is not None:
            self.control_records[item.control.type] += 1
            return
        if record.value is None:
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
        for name in ("bytes", "valid_bytes", "batches", "records", "tombstones",
                     "transactional_records", "errors", "truncated"):
            setattr(self, name, getattr(self, name) + getattr(other, name))
        for name in ("records_by_key", "values_by_version", "control_records", "codecs", "magics"):
            getattr(self, name).update(getattr(other, name))

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {}
        for name, value in self.__dict__.items():
            data[name] = dict(sorted(value.items())) if isinstance(value, Counter) else value
        return data


def _codec(codec: int) -> str:
    try:
        return Codec(codec).label
    except ValueError:
        return f"unknown({codec})"
