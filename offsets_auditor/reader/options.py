"""How a segment is read: by which decoder (:class:`Backend`) and within which
:class:`Limits`. Chosen once at the edge (the command line) and passed down."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Final

from offsets_auditor.reader.columns import MAX_CHUNK_RECORDS


class Backend(StrEnum):
    """Which reader decodes entries: the C parser, or the Python reference decoders."""

    NATIVE = "native"
    PYTHON = "python"


@dataclass(frozen=True, slots=True)
class Limits:
    """How much is read at once and the largest things decoded.

    ``max_batch_bytes``: largest entry decoded (Kafka's own limit is the topic's
    ``max.message.bytes``, 1 MiB by default); ``decompress_limit``: largest decompressed payload
    of one compressed entry; ``max_chunk_records``: records per chunk."""

    window_bytes: int = 2 * 1024 * 1024
    max_batch_bytes: int = 64 * 1024 * 1024
    decompress_limit: int = 256 * 1024 * 1024
    max_chunk_records: int = MAX_CHUNK_RECORDS


DEFAULT_LIMITS: Final = Limits()
