"""Collect what version detection looks at, read-only, reading as little as it can.

Per log dir: one listing of the root and of each partition directory (names and sizes),
``meta.properties`` and ``.kafka_cleanshutdown`` (both tiny), and, for each ``__consumer_offsets``
partition, its newest segments, up to :data:`READ_BUDGET` bytes (decoded with
:func:`offsets_auditor.reader.summary.summarize_segment`: magic bytes, key and value versions,
codecs).
Per server log: one pass over its lines for the last "Kafka version" line.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Protocol, TypeVar

from offsets_auditor.constants import OFFSETS_TOPIC
from offsets_auditor.logdir import fs
from offsets_auditor.logdir.layout import CLEAN_SHUTDOWN_FILE, META_PROPERTIES
from offsets_auditor.logdir.meta_properties import parse_meta_properties
from offsets_auditor.reader.summary import SegmentTotals, summarize_segment
from offsets_auditor.version_detection.combine import Detection, detect
from offsets_auditor.version_detection.file_rules import file_evidence
from offsets_auditor.version_detection.model import Evidence
from offsets_auditor.version_detection.observations import (
    LogDirObservation,
    MetaFacts,
    PartitionFiles,
    RecordFormats,
    ServerLogVersion,
)
from offsets_auditor.version_detection.record_rules import record_evidence, server_log_evidence
from offsets_auditor.versions import KafkaVersion

_SEGMENT_LOG = re.compile(r"^\d+\.log$")
#: the AppInfoParser line, both wordings ("Kafka version : X" up to 2.1, "Kafka version: X")
_VERSION_LINE = re.compile(r"\bKafka version ?: ?(?P<version>\S+)")
_SMALL = 1 << 20
#: Bytes of the newest segments read per ``__consumer_offsets`` partition.
READ_BUDGET = 32 << 20

_In = TypeVar("_In")
_Out = TypeVar("_Out")


class Each(Protocol):
    """``each(function, items)``: ``function`` of every item, in the items' order; here, one
    after the other (:func:`in_turn`), or in other processes (``audit.parallel.forked_each``)."""

    def __call__(self, function: Callable[[_In], _Out], items: Sequence[_In], /) -> list[_Out]: ...


def in_turn(function: Callable[[_In], _Out], items: Sequence[_In], /) -> list[_Out]:
    return [function(item) for item in items]


def detect_version(
    log_dirs: Sequence[Path],
    server_log: Path | None = None,
    given: KafkaVersion | None = None,
    each: Each = in_turn,
) -> Detection:
    """The broker's version range from its log dirs (taken to be one broker's ``log.dirs``) and
    its server log, and the version to use (``given`` when the operator said one). Never raises
    for what it reads: an unreadable file is simply no evidence. ``each`` summarizes the newest
    segments of the offsets partitions (one item per partition)."""
    evidence: list[Evidence] = []
    if server_log is not None:
        seen = last_version_line(server_log)
        if seen is not None:
            found = server_log_evidence(seen)
            if found is not None:
                evidence.append(found)
    for log_dir in log_dirs:
        observation = observe_log_dir(log_dir, each)
        evidence.extend(file_evidence(observation))
        for formats in observation.records:
            evidence.extend(record_evidence(formats))
    return detect(evidence, given)


def last_version_line(path: Path) -> ServerLogVersion | None:
    """The last "Kafka version" line of a broker log (``server.log``, or ``kafkaServer.out``
    for 0.9-0.10.2 with the default log4j config), or ``None``."""
    try:
        return _last_version_line(str(path), fs.iter_lines(path))
    except OSError:
        return None


def _last_version_line(name: str, lines: Iterable[str]) -> ServerLogVersion | None:
    found = None
    for line in lines:
        if "Kafka version" not in line:
            continue
        match = _VERSION_LINE.search(line)
        if match is not None:
            found = ServerLogVersion(name, match["version"], line)
    return found


def observe_log_dir(path: Path, each: Each = in_turn) -> LogDirObservation:
    """List ``path`` and read the little that tells an era (see the module docstring); the
    offsets partitions' newest segments summarized by ``each``."""
    try:
        entries = fs.list_dir(path)
    except OSError:
        return LogDirObservation(str(path), frozenset(), frozenset(), None, None, (), ())
    root_files = frozenset(e.name for e in entries if not e.is_dir)
    root_dirs = frozenset(e.name for e in entries if e.is_dir)
    meta = None
    if META_PROPERTIES in root_files:
        data = _read_small(path / META_PROPERTIES)
        if data is not None:
            parsed = parse_meta_properties(data)
            meta = MetaFacts(
                version=parsed.version,
                has_cluster_id=parsed.cluster_id is not None,
                has_node_id=parsed.node_id is not None,
                has_directory_id=parsed.directory_id is not None,
            )
    marker = _read_small(path / CLEAN_SHUTDOWN_FILE) if CLEAN_SHUTDOWN_FILE in root_files else None
    partitions: list[PartitionFiles] = []
    newest: list[tuple[str, Path, list[tuple[str, int]]]] = []
    for entry in entries:
        if not entry.is_dir:
            continue
        try:
            files = [f for f in fs.list_dir(entry.path) if not f.is_dir]
        except OSError:
            continue
        logs = [f for f in files if _SEGMENT_LOG.match(f.name)]
        partitions.append(
            PartitionFiles(
                entry.name,
                frozenset(f.name for f in files),
                max((f.size for f in logs), default=0),
            )
        )
        if entry.name.rpartition("-")[0] == OFFSETS_TOPIC:
            segments = sorted((f.name, f.size) for f in logs)  # zero-padded: offset order
            newest.append((entry.name, entry.path, segments))
    records = [r for r in each(_newest_records_of, newest) if r is not None]
    return LogDirObservation(
        str(path),
        root_files,
        root_dirs,
        meta,
        marker,
        tuple(partitions),
        tuple(records),
    )


def _newest_records_of(item: tuple[str, Path, list[tuple[str, int]]]) -> RecordFormats | None:
    return newest_records(*item)


def newest_records(
    partition: str, path: Path, segments: list[tuple[str, int]], budget: int = READ_BUDGET
) -> RecordFormats | None:
    """The record formats of the newest segments (``(name, size)`` pairs in offset order),
    newest first, until ``budget`` bytes are read (whole segments; at least one that holds a
    record). ``file`` names the newest segment read that holds records."""
    magics: set[int] = set()
    keys: set[str] = set()
    values: set[str] = set()
    codecs: set[str] = set()
    newest: str | None = None
    read = 0
    for age, (name, size) in enumerate(reversed(segments)):
        if read >= budget and newest is not None:
            break
        relative = f"{partition}/{name}"
        totals = _summarize(path / name, relative, rolled=age > 0)
        read += size
        if totals is None or not totals.batches:
            continue
        newest = newest or relative
        magics.update(int(m) for m in totals.magics if m.isdigit())
        keys.update(totals.records_by_key)
        values.update(totals.values_by_version)
        codecs.update(totals.codecs)
    if newest is None:
        return None
    return RecordFormats(
        newest, frozenset(magics), frozenset(keys), frozenset(values), frozenset(codecs)
    )


def _summarize(path: Path, relative: str, rolled: bool) -> SegmentTotals | None:
    """A ``rolled`` segment is read once (``fs.ReadOnlyFile.read_once``)."""
    try:
        source = fs.ReadOnlyFile(path)
    except OSError:
        return None
    if rolled:
        source.read_once()
    with source:
        for item in summarize_segment(source, file=relative):
            if isinstance(item, SegmentTotals):
                return item
    return None


def _read_small(path: Path) -> bytes | None:
    try:
        return fs.read_small_file(path, limit=_SMALL)
    except (OSError, ValueError):
        return None
