"""The optional C fast lane (``offsets_auditor._speedups``) and how to get it.

The C extension accounts for runs of the overwhelmingly common entries (plain offset commits in
uncompressed v0/v1 messages and v2 batches) without building Python objects. It never reports a
problem: at the first entry it is not sure about, it stops and the Python decoder takes over, so
results are identical with or without it (tests check both ways). Without a C compiler at
install time the package runs on the Python decoder alone, slower.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from offsets_auditor.records.log_file import (
    DEFAULT_MAX_BATCH_BYTES,
    DEFAULT_WINDOW_BYTES,
    HEADER_SIZE_UP_TO_MAGIC,
    FastLane,
)

#: Set to "0" to turn the C fast lane off (tests, or to compare).
ENV_SWITCH = "OFFSETS_AUDITOR_SPEEDUPS"


def summary_fast_lane(
    *, max_batch_bytes: int = DEFAULT_MAX_BATCH_BYTES, window_bytes: int = DEFAULT_WINDOW_BYTES
) -> FastLane | None:
    """The C summary lane, or ``None`` when the extension is missing or switched off.

    ``max_batch_bytes``/``window_bytes`` are the walk's limits (``read_batches``). The lane
    takes any whole entry of the window it is given, but the walk reports an entry larger than
    ``max_batch_bytes`` as an error: when the window can hold such an entry, the lane is only
    shown ``max_batch_bytes`` at a time (every whole entry in there is small enough)."""
    if os.environ.get(ENV_SWITCH, "1") == "0":
        return None
    try:
        from offsets_auditor import _speedups
    except ImportError:
        return None
    scan = _speedups.scan_offset_commits
    if max_batch_bytes >= max(window_bytes, HEADER_SIZE_UP_TO_MAGIC):
        lane: FastLane = scan
        return lane

    def bounded(window: memoryview, start: int, end: int, position: int) -> tuple[int, Any]:
        return scan(window, start, min(end, start + max(max_batch_bytes, 0)), position)

    return bounded


#: At most this many bytes of entries per call of the text lane: ``segment_text`` hands on its
#: lines before the next run, so this bounds the text held at once (~1.5x the bytes).
TEXT_CHUNK_BYTES = 1024 * 1024


def text_fast_lane(
    *,
    max_batch_bytes: int = DEFAULT_MAX_BATCH_BYTES,
    window_bytes: int = DEFAULT_WINDOW_BYTES,
    chunk_bytes: int = TEXT_CHUNK_BYTES,
) -> FastLane | None:
    """The C text lane of ``render.segment_text``, or ``None`` when the extension is missing or
    switched off. Its mapping is ``{"text": ...}``: the dump's lines for the entries it took,
    each ending with a newline. It takes at most ``chunk_bytes`` of entries per call, and never
    an entry larger than ``max_batch_bytes`` (see :func:`summary_fast_lane`)."""
    del window_bytes  # the lane is always bounded (chunk_bytes)
    if os.environ.get(ENV_SWITCH, "1") == "0":
        return None
    try:
        from offsets_auditor import _speedups
    except ImportError:
        return None
    render = _speedups.render_offset_commits
    bound = max(min(max_batch_bytes, chunk_bytes), 0)

    def lane(window: memoryview, start: int, end: int, position: int) -> tuple[int, Any]:
        next_rel, text = render(window, start, min(end, start + bound), position)
        return next_rel, {"text": text}

    return lane


def totals_keys() -> tuple[str, ...]:
    """The keys a summary lane's totals mapping may carry (``SegmentTotals`` field names)."""
    return (
        "batches",
        "records",
        "tombstones",
        "transactional_records",
        "valid_bytes",
        "first_offset",
        "last_offset",
        "records_by_key",
        "values_by_version",
        "codecs",
        "magics",
    )


def describe(totals: Mapping[str, Any]) -> str:
    return ", ".join(f"{k}={totals[k]}" for k in totals_keys() if k in totals)
