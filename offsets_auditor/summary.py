"""Totals over decoded segments: what ``offsets-auditor dump --summary`` prints."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from offsets_auditor.decode import DecodedRecord, KeyCache, decode_batch_records
from offsets_auditor.errors import DecodeError, TruncatedError
from offsets_auditor.fastlane import summary_fast_lane
from offsets_auditor.records.compression import codec_label
from offsets_auditor.records.log_file import ByteSource, read_batches


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
            self.codecs[codec_label(batch.codec)] += 1
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

    def add_fast_lane(self, totals: Mapping[str, Any]) -> None:
        """Add what a fast lane accounted for (see ``offsets_auditor.fastlane``)."""
        for name in ("batches", "records", "tombstones", "transactional_records"):
            setattr(self, name, getattr(self, name) + int(totals.get(name, 0)))
        for name in ("records_by_key", "values_by_version", "codecs", "magics"):
            getattr(self, name).update(totals.get(name, {}))
        if totals.get("records", 0):
            if self.first_offset is None:
                self.first_offset = int(totals["first_offset"])
            self.last_offset = int(totals["last_offset"])
        if "valid_bytes" in totals:
            self.valid_bytes = int(totals["valid_bytes"])

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


def _lane_limits(limits: Mapping[str, int]) -> dict[str, int]:
    return {k: v for k, v in limits.items() if k in ("max_batch_bytes", "window_bytes")}


def summarize_segment(
    source: ByteSource, *, file: str | None = None, accelerate: bool = True, **limits: int
) -> Iterator[DecodeError | SegmentTotals]:
    """Decode every record of a segment and total it up. Yields each located problem as it is
    found, then the :class:`SegmentTotals` last. ``accelerate`` lets the C fast lane take the
    common entries (same totals either way)."""
    totals = SegmentTotals(bytes=source.size)
    lane = summary_fast_lane(**_lane_limits(limits)) if accelerate else None
    keys: KeyCache = {}
    for item in read_batches(
        source, file=file, fast_lane=lane, on_fast_lane=totals.add_fast_lane, **limits
    ):
        if isinstance(item, DecodeError):
            totals.add_error(item)
            yield item
            continue
        first = True
        for decoded in decode_batch_records(item, file, keys):
            if isinstance(decoded, DecodeError):
                totals.add_error(decoded)
                yield decoded
                continue
            totals.add_record(decoded, first)
            first = False
        if first:  # a batch with no records (v2 empty batch kept by the cleaner)
            totals.batches += 1
            totals.codecs[codec_label(item.header.codec)] += 1
            totals.magics[str(item.header.magic)] += 1
            totals.valid_bytes = item.header.position + item.header.size
    yield totals
