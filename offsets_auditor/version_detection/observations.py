"""What version detection looks at, as plain values (collected by :mod:`.collect`, judged by
:mod:`.record_rules` and :mod:`.file_rules`): names of files, a few small files' contents, and
the record formats of the newest segments of each ``__consumer_offsets`` partition."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class PartitionFiles:
    """One partition directory: the names of its files and its largest ``.log`` in bytes."""

    name: str
    files: frozenset[str]
    largest_log_bytes: int


@dataclass(frozen=True, slots=True)
class RecordFormats:
    """What one segment holds, from :func:`offsets_auditor.reader.summary.summarize_segment`:
    ``magics`` (batch magic bytes), ``keys`` (``<key_type>/v<key version>``), ``values``
    (``<key_type>/v<key version>:v<value version>``) and ``codecs`` (codec labels)."""

    file: str
    magics: frozenset[int]
    keys: frozenset[str]
    values: frozenset[str]
    codecs: frozenset[str]


@dataclass(frozen=True, slots=True)
class MetaFacts:
    """The parts of ``meta.properties`` that tell an era: its ``version`` line and which keys
    it has."""

    version: int | None
    has_cluster_id: bool
    has_node_id: bool
    has_directory_id: bool


@dataclass(frozen=True, slots=True)
class LogDirObservation:
    """One log dir as version detection sees it. ``clean_shutdown`` is the marker's content
    (``None`` when absent); ``root_files``/``root_dirs`` are the names at the log dir's root."""

    path: str
    root_files: frozenset[str]
    root_dirs: frozenset[str]
    meta: MetaFacts | None
    clean_shutdown: bytes | None
    partitions: tuple[PartitionFiles, ...]
    records: tuple[RecordFormats, ...]


@dataclass(frozen=True, slots=True)
class ServerLogVersion:
    """The last "Kafka version" line of a broker log: the version text and the line's wording
    (``"Kafka version : "`` up to 2.1, ``"Kafka version: "`` from 2.2)."""

    file: str
    version: str
    line: str
