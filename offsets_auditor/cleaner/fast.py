"""The optional C path of the cleaner emulation (``offsets_auditor._cleaner_speedups``), and the
segment walk that lets it take runs of entries.

Every read of the emulation (the partition scan, each pass's map and clean phases, the
dedupe-buffer advice) walks a segment with ``read_batches`` in bounded windows. With the C
extension, a *lane* is offered each window first: it takes the run of simple entries at the
start of what is left (plain uncompressed messages, uncompressed v2 batches with no producer
id, transactions or control records; see ``_cleaner_speedups.c``) and applies to them exactly
what the Python code would, then hands the first entry it does not take back to the Python
decoder. So results do not depend on the extension (``tests/test_cleaner_fast.py``). Without a
C compiler at install time, or with ``OFFSETS_AUDITOR_SPEEDUPS=0``, everything runs in Python.

The lanes: ``partition_scan`` (scan: segment stats and group writers; the dedupe-buffer advice's
distinct keys), ``lanes`` (each pass's map and clean phases). Memory: the offset map is Kafka's
own buffer (``offset_map``), the advice counts keys within that much memory, and the rest is a
constant (the read window, the C read-ahead) plus the one-byte-per-record survivor bitmaps.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import Any

from offsets_auditor import fs
from offsets_auditor.errors import DecodeError
from offsets_auditor.fastlane import ENV_SWITCH
from offsets_auditor.records.log_file import read_batches
from offsets_auditor.records.model import Batch

try:
    from offsets_auditor import _cleaner_speedups as C

    _BUILT = True
except ImportError:  # pragma: no cover - built without a C compiler
    _BUILT = False

__all__ = [
    "MODE_FIRST_SEGMENT",
    "MODE_PARTIAL",
    "MODE_SEGMENT_SPAN",
    "STATUS_FULL",
    "C",
    "Cursor",
    "Lane",
    "enabled",
    "walk",
]

#: map_window modes: how ``buildOffsetMap`` fills the map (``behaviour.MapEra``).
MODE_SEGMENT_SPAN = 0
MODE_FIRST_SEGMENT = 1
MODE_PARTIAL = 2
#: map_window status: the map filled up.
STATUS_FULL = 1

#: ``(window, start, end) -> next_rel``: takes the entries of ``window[start:end]`` it can from
#: ``start`` on and returns where the first one it did not take begins (``start``: none).
Lane = Callable[[memoryview, int, int], int]

_NOTHING: Mapping[str, Any] = MappingProxyType({})


def enabled() -> bool:
    """Whether the C path is built and not switched off (``OFFSETS_AUDITOR_SPEEDUPS=0``)."""
    return _BUILT and os.environ.get(ENV_SWITCH, "1") != "0"


@dataclass(slots=True)
class Cursor:
    """Ordinals of the next entry of a segment walk: its batch and its first record, counted
    over the decodable batches of the partition (``LogState``'s numbering)."""

    batch: int
    record: int


def _ignore(_: Mapping[str, Any]) -> None:
    return None


def walk(
    path: Path, label: str, lane: Lane | None = None, errors: list[DecodeError] | None = None
) -> Iterator[Batch]:
    """The decodable batches of the segment at ``path`` that ``lane`` did not take, in order;
    problems go to ``errors``. ``label`` names the file in errors (``<partition>/<file>``)."""
    fast_lane = None
    if lane is not None:
        offer = lane

        def fast_lane(
            view: memoryview, start: int, end: int, position: int
        ) -> tuple[int, Mapping[str, Any]]:
            return offer(view, start, end), _NOTHING

    with fs.ReadOnlyFile(path) as source:
        for item in read_batches(source, file=label, fast_lane=fast_lane, on_fast_lane=_ignore):
            if isinstance(item, DecodeError):
                if errors is not None:
                    errors.append(item)
                continue
            yield item
