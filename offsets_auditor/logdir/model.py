"""An immutable model of one broker log dir, built read-only through
:mod:`offsets_auditor.logdir.fs`.

What the broker finds at startup (0.9.0.1 ``core/src/main/scala/kafka/log/LogManager.scala``
``loadLogs`` and ``Log.loadSegments``; 2.3.0 ``LogManager.loadLogs``/``Log.loadSegmentFiles``;
3.9.0-rc3 ``core/.../log/LogLoader.scala``), as data:

- at the root: ``meta.properties``, the four offset checkpoints, ``.kafka_cleanshutdown``, and
  one directory per partition. ``Log.parseTopicPartitionName`` splits a directory name at its
  last ``-``; names ending ``-delete``/``-future`` (2.3.0 ``Log.DeleteDirPattern``) or ``-stray``
  (3.9.0-rc3 ``LocalLog.StrayDirPattern``) are ``topic-partition.uniqueId-suffix``. A directory
  that does not parse makes the broker fail to load the log dir, so it is reported as critical.
- in a partition dir: segments ``<base offset>.log`` (the name up to the first ``.`` is the base
  offset, ``Log.offsetFromFileName``) with ``.index``, ``.timeindex`` (0.10.1+) and ``.txnindex``
  (0.11+); producer snapshots ``<offset>.snapshot`` (0.11+); ``leader-epoch-checkpoint``
  (0.11+); and files the broker deletes or completes at startup: ``.deleted``, ``.cleaned``,
  ``.swap`` and index files with no ``.log`` ("Found an orphaned index file").
- the broker refuses a partition dir holding a file it cannot read (``Could not read file``,
  ``Log.loadSegments`` in 0.9.0.1, ``removeTempFilesAndCollectSwapFiles`` in 2.3.0).

Nothing here raises on bad input: problems are findings on the model.
"""

from __future__ import annotations

import errno
import os
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from enum import StrEnum
from pathlib import Path

from offsets_auditor.constants import OFFSETS_TOPIC
from offsets_auditor.findings import Finding, FindingKind, Severity
from offsets_auditor.logdir import fs
from offsets_auditor.logdir.checkpoints import (
    LeaderEpochCheckpoint,
    OffsetCheckpoint,
    parse_leader_epoch_checkpoint,
    parse_offset_checkpoint,
)
from offsets_auditor.logdir.layout import (
    CLEAN_SHUTDOWN_FILE,
    LEADER_EPOCH_CHECKPOINT,
    LEFTOVER,
    LOCK_FILE,
    META_PROPERTIES,
    NOT_PARTITIONS,
    PARTITION_METADATA,
    ROOT_FILES,
    SEGMENT_SUFFIXES,
    CheckpointFileName,
    DirState,
    parse_partition_dir_name,
    segment_file,
)
from offsets_auditor.logdir.liveness import NOT_TESTED, Liveness, judge
from offsets_auditor.logdir.meta_properties import (
    CleanShutdownContent,
    MetaProperties,
    parse_clean_shutdown,
    parse_meta_properties,
)
from offsets_auditor.versions import DEFAULT_KAFKA_VERSION, KafkaVersion

#: Checkpoints and markers are tiny; anything bigger is not what the broker wrote.
_SMALL_TEXT_LIMIT = 16 * 1024 * 1024
_PARTITION_FILES = {LEADER_EPOCH_CHECKPOINT, PARTITION_METADATA}


@dataclass(frozen=True, slots=True)
class FileEntry:
    """A file in a partition dir: its name (surrogate-escaped if not UTF-8), size, mtime, and
    identity (device, inode) when listed: a file replaced under the same name has another."""

    name: str
    size: int
    mtime_ms: int
    identity: tuple[int, int] = (0, 0)


@dataclass(frozen=True, slots=True)
class Segment:
    """A live segment: ``<base>.log`` and whichever of its index files exist."""

    base_offset: int
    log: FileEntry
    index: FileEntry | None
    time_index: FileEntry | None
    txn_index: FileEntry | None


class LeftoverKind(StrEnum):
    DELETED = "deleted"  # scheduled for async deletion; deleted at startup
    CLEANED = "cleaned"  # cleaner output never swapped in; deleted at startup
    SWAP = "swap"  # interrupted swap; completed (or, 2.x, dropped) at startup
    ORPHAN_INDEX = "orphan-index"  # index with no .log; deleted at startup


@dataclass(frozen=True, slots=True)
class Leftover:
    """A file that is not part of a live segment and that the broker removes or completes at
    startup."""

    file: FileEntry
    kind: LeftoverKind


@dataclass(frozen=True, slots=True)
class ProducerSnapshot:
    offset: int
    file: FileEntry


@dataclass(frozen=True, slots=True)
class PartitionDir:
    """One partition directory. ``segments`` are sorted by base offset. ``name`` is printable
    (non-UTF-8 bytes escaped); ``path`` is the real path to read through."""

    name: str
    path: Path
    topic: str
    partition: int
    state: DirState
    segments: tuple[Segment, ...]
    snapshots: tuple[ProducerSnapshot, ...]
    leftovers: tuple[Leftover, ...]
    leader_epoch_checkpoint: LeaderEpochCheckpoint | None
    other_files: tuple[FileEntry, ...]
    #: what the auditor's user may not read (``name`` itself when the dir cannot be listed,
    #: else ``name/file``): each is one ``permission-denied`` finding
    denied: tuple[str, ...] = ()
    #: its line in the log dir's cleaner and log-start checkpoints (None: no line, or no file),
    #: read with its listing: ``open_partition`` reads both again with its snapshot, since the
    #: cleaner of a running broker swaps segments in and then moves its checkpoint
    cleaner_checkpoint: int | None = None
    log_start_checkpoint: int | None = None

    @property
    def size_bytes(self) -> int:
        return sum(s.log.size for s in self.segments)

    @property
    def records_denied(self) -> bool:
        """Its records cannot all be read by the auditor (the dir cannot be listed, or a
        ``.log`` cannot be opened): it is set aside, never audited from part of its log."""
        if self.name in self.denied:
            return True
        logs = {f"{self.name}/{s.log.name}" for s in self.segments}
        return any(d in logs for d in self.denied)


@dataclass(frozen=True, slots=True)
class CleanShutdown:
    """The ``.kafka_cleanshutdown`` marker: ``present`` decides whether the broker recovers."""

    present: bool
    content: CleanShutdownContent | None = None


@dataclass(frozen=True, slots=True)
class LogDir:
    """Everything read from one log dir. Checkpoints are ``None`` when the file is absent (an
    absent cleaner checkpoint means nothing was ever cleaned here; present but empty is not
    the same). ``liveness`` says whether a broker is running on it (its ``.lock`` held)."""

    path: Path
    meta: MetaProperties | None
    cleaner_checkpoint: OffsetCheckpoint | None
    recovery_point_checkpoint: OffsetCheckpoint | None
    replication_checkpoint: OffsetCheckpoint | None
    log_start_checkpoint: OffsetCheckpoint | None
    clean_shutdown: CleanShutdown
    partitions: tuple[PartitionDir, ...]
    findings: tuple[Finding, ...] = field(default=())
    liveness: Liveness = NOT_TESTED
    #: the cluster the operator says the log dir belongs to (``scan --cluster-id``): taken
    #: where ``meta.properties`` has no ``cluster.id`` (ZooKeeper-mode brokers before 2.4)
    given_cluster_id: str | None = None

    @property
    def broker_id(self) -> int | None:
        return None if self.meta is None else self.meta.broker_id

    @property
    def cluster_id(self) -> str | None:
        found = None if self.meta is None else self.meta.cluster_id
        return found if found is not None else self.given_cluster_id

    def partition(self, name: str) -> PartitionDir | None:
        return next((p for p in self.partitions if p.name == name), None)


def offsets_partitions(logdir: LogDir) -> tuple[PartitionDir, ...]:
    """The live ``__consumer_offsets-N`` partitions the auditor can read, by partition number
    (those it may not read are set aside, each with its ``permission-denied`` finding:
    :func:`held_offsets_partitions` has them all)."""
    found = [
        p
        for p in logdir.partitions
        if p.topic == OFFSETS_TOPIC and p.state is DirState.LIVE and not p.records_denied
    ]
    return tuple(sorted(found, key=lambda p: p.partition))


def held_offsets_partitions(logdir: LogDir) -> tuple[int, ...]:
    """The numbers of every live ``__consumer_offsets-N`` dir of the log dir, readable or not:
    the partitions this broker holds a replica of."""
    return tuple(
        sorted(
            p.partition
            for p in logdir.partitions
            if p.topic == OFFSETS_TOPIC and p.state is DirState.LIVE
        )
    )


def _display(name: str) -> str:
    """A name as it can be shown: non-UTF-8 bytes as ``repr`` escapes."""
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        return repr(os.fsencode(name))[2:-1]
    return name


def _is_utf8(name: str) -> bool:
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


class _Reader:
    """Collects findings while reading one log dir (one instance per call, no global state)."""

    def __init__(self, root: Path, version: KafkaVersion) -> None:
        self.root = root
        self.version = version
        self.findings: list[Finding] = []
        #: what could not be read for lack of permission, relative to the log dir
        self.denied: list[str] = []

    def permission_denied(
        self, path: Path, relative: str, partition: str | None, consequence: str
    ) -> None:
        """One ``permission-denied`` finding: what the auditor's user may not read, what is
        left out because of it, and what to do."""
        self.denied.append(relative)
        self.findings.append(permission_finding(path, relative, partition, consequence))

    def note(
        self,
        kind: FindingKind,
        severity: Severity,
        detail: str,
        *,
        file: str | None = None,
        partition: str | None = None,
    ) -> None:
        self.findings.append(Finding(kind, severity, detail, file=file, partition=partition))

    def read_text_file(
        self, path: Path, relative: str, partition: str | None = None
    ) -> bytes | None:
        try:
            return fs.read_small_file(path, limit=_SMALL_TEXT_LIMIT)
        except OSError as error:
            if fs.is_permission_error(error):
                self.permission_denied(path, relative, partition, "It is read as absent.")
                return None
            self.note(
                FindingKind.UNREADABLE_FILE,
                Severity.WARNING,
                f"cannot read {relative}: {error}",
                file=relative,
                partition=partition,
            )
            return None
        except ValueError as error:
            self.note(
                FindingKind.UNREADABLE_FILE,
                Severity.WARNING,
                f"cannot read {relative}: {error}",
                file=relative,
                partition=partition,
            )
            return None

    def checkpoint(self, name: CheckpointFileName, present: set[str]) -> OffsetCheckpoint | None:
        if name.value not in present:
            return None
        data = self.read_text_file(self.root / name.value, name.value)
        return None if data is None else self.parse_checkpoint(name, data)

    def parse_checkpoint(self, name: CheckpointFileName, data: bytes) -> OffsetCheckpoint:
        """``data``, the content of the log dir's checkpoint ``name``, parsed."""
        return parse_offset_checkpoint(
            data.decode("utf-8", errors="replace"),
            version=self.version,
            location=str(self.root / name.value),
            file=name.value,
        )

    def readable(self, path: Path, relative: str, partition: str) -> bool:
        """Whether the file opens. One that is gone (renamed or deleted since it was listed,
        as a running broker does) is not unreadable: it is just not there any more."""
        try:
            fs.ReadOnlyFile(path).close()
        except OSError as error:
            if error.errno == errno.ENOENT:
                return False
            if fs.is_permission_error(error):
                self.permission_denied(path, relative, partition, _left_out(relative, partition))
                return False
            self.note(
                FindingKind.UNREADABLE_FILE,
                Severity.CRITICAL,
                f"Could not read file {path} ({error.strerror}): an IOException at log load "
                "(0.9.0.1 Log.loadSegments: the broker fails to start; 2.3.0 "
                "LogManager.loadLogs: the whole log dir goes offline)",
                file=relative,
                partition=partition,
            )
            return False
        return True


def read_log_dir(path: Path, version: KafkaVersion | None = None) -> LogDir:
    """Read one log dir (a broker's ``log.dirs`` entry, or a copy of it).

    ``version`` selects the broker's wording in checkpoint findings (default: the package's
    default Kafka version). Never raises for bad content; a ``path`` that cannot be listed gives
    an empty model with an ``unreadable-file`` finding.
    """
    reader = _Reader(path, version or KafkaVersion.parse(DEFAULT_KAFKA_VERSION))
    try:
        entries = fs.list_dir(path)
    except OSError as error:
        if fs.is_permission_error(error):
            reader.permission_denied(path, str(path), None, "Nothing of this log dir is audited.")
        else:
            reader.note(
                FindingKind.UNREADABLE_FILE, Severity.CRITICAL, f"cannot list {path}: {error}"
            )
        return LogDir(
            path, None, None, None, None, None, CleanShutdown(False), (), tuple(reader.findings)
        )
    files = {e.name: e for e in entries if not e.is_dir}
    present = set(files)

    meta = None
    if META_PROPERTIES in present:
        data = reader.read_text_file(path / META_PROPERTIES, META_PROPERTIES)
        if data is not None:
            meta = parse_meta_properties(data)
            reader.findings.extend(meta.findings)
    else:
        reader.note(
            FindingKind.MISSING_FILE, Severity.INFO, f"no {META_PROPERTIES}", file=META_PROPERTIES
        )

    shutdown = CleanShutdown(False)
    if CLEAN_SHUTDOWN_FILE in present:
        data = reader.read_text_file(path / CLEAN_SHUTDOWN_FILE, CLEAN_SHUTDOWN_FILE)
        content = None if data is None else parse_clean_shutdown(data)
        if content is not None:
            reader.findings.extend(content.findings)
        shutdown = CleanShutdown(True, content)

    checkpoints = {name: reader.checkpoint(name, present) for name in CheckpointFileName}
    for name in (CheckpointFileName.RECOVERY_POINT, CheckpointFileName.REPLICATION):
        if name.value not in present:
            reader.note(
                FindingKind.MISSING_CHECKPOINT,
                Severity.INFO,
                f"no {name.value}: the broker treats every partition here as at offset 0",
                file=name.value,
            )
    for checkpoint in checkpoints.values():
        if checkpoint is not None:
            reader.findings.extend(checkpoint.findings)

    for file_name in files:
        if file_name not in ROOT_FILES and not file_name.endswith(".tmp"):
            reader.note(
                FindingKind.UNEXPECTED_FILE,
                Severity.INFO,
                f"unexpected file {_display(file_name)} at the root of the log dir",
                file=_display(file_name),
            )

    partitions = []
    for entry in entries:
        if not entry.is_dir or entry.name in NOT_PARTITIONS:
            continue
        shown = _display(entry.name)
        # The JVM decodes file names as UTF-8 with replacement, then parses them.
        parsed = parse_partition_dir_name(os.fsencode(entry.name).decode("utf-8", "replace"))
        if not _is_utf8(entry.name):
            reader.note(
                FindingKind.UNEXPECTED_FILE,
                Severity.WARNING,
                f"directory name {shown} is not valid UTF-8",
                file=shown,
            )
        if parsed is None:
            reader.note(
                FindingKind.UNEXPECTED_FILE,
                Severity.CRITICAL,
                f"directory {shown} is not in the form of topic-partition or "
                "topic-partition.uniqueId-delete: the broker fails to load this log dir",
                file=shown,
            )
            continue
        partitions.append(_read_partition(reader, entry, None, *parsed))
    cleaned, started = (
        checkpoint.offsets() if checkpoint is not None else {}
        for checkpoint in (
            checkpoints[CheckpointFileName.CLEANER],
            checkpoints[CheckpointFileName.LOG_START],
        )
    )
    partitions = [
        replace(
            p,
            cleaner_checkpoint=cleaned.get((p.topic, p.partition)),
            log_start_checkpoint=started.get((p.topic, p.partition)),
        )
        for p in partitions
    ]
    partitions.sort(key=lambda p: (p.topic, p.partition, p.state.value, p.name))
    return LogDir(
        path=path,
        meta=meta,
        cleaner_checkpoint=checkpoints[CheckpointFileName.CLEANER],
        recovery_point_checkpoint=checkpoints[CheckpointFileName.RECOVERY_POINT],
        replication_checkpoint=checkpoints[CheckpointFileName.REPLICATION],
        log_start_checkpoint=checkpoints[CheckpointFileName.LOG_START],
        clean_shutdown=shutdown,
        partitions=tuple(partitions),
        findings=tuple(reader.findings),
        liveness=judge(fs.probe_lock(path / LOCK_FILE)),
    )


def _read_partition(
    reader: _Reader,
    entry: fs.FileInfo,
    snapshot: fs.DirSnapshot | None,
    topic: str,
    partition: int,
    state: DirState,
) -> PartitionDir:
    name = _display(entry.name)
    denied_before = len(reader.denied)
    if snapshot is not None:
        listing = snapshot.listing
    else:
        try:
            listing = fs.list_dir(entry.path)
        except OSError as error:
            if fs.is_permission_error(error):
                reader.permission_denied(
                    entry.path,
                    name,
                    name,
                    f"{name} is not audited (no verdict, no groups from it); the rest of the"
                    " log dir is.",
                )
            elif error.errno != errno.ENOENT:  # a partition deleted meanwhile is just gone
                reader.note(
                    FindingKind.UNREADABLE_FILE,
                    Severity.CRITICAL,
                    f"cannot list {name}: {error}",
                    file=name,
                    partition=name,
                )
            listing = []
    by_kind: dict[str, dict[int, FileEntry]] = {
        k: {} for k in ("log", "index", "timeindex", "txnindex", "snapshot")
    }
    leftovers: list[Leftover] = []
    others: list[FileEntry] = []
    epochs = None
    for info in listing:
        relative = f"{name}/{_display(info.name)}"
        if info.is_dir:
            reader.note(
                FindingKind.UNEXPECTED_FILE,
                Severity.INFO,
                f"unexpected directory {relative}",
                file=relative,
                partition=name,
            )
            continue
        if snapshot is not None and info.name in snapshot.files:
            readable = True  # opened with the listing
        else:
            readable = reader.readable(info.path, relative, name)
        item = FileEntry(_display(info.name), info.size, info.mtime_ms, info.identity)
        segment = segment_file(info.name)
        leftover = LEFTOVER.search(info.name)
        if segment is not None:
            base, suffix = segment
            by_kind[suffix][base] = item
        elif leftover is not None:
            leftovers.append(Leftover(item, LeftoverKind(leftover.group(1))))
        elif info.name == LEADER_EPOCH_CHECKPOINT:
            data = reader.read_text_file(info.path, relative, name) if readable else None
            if data is not None:
                epochs = parse_leader_epoch_checkpoint(
                    data.decode("utf-8", errors="replace"),
                    version=reader.version,
                    location=str(info.path),
                    file=relative,
                    partition=name,
                )
                reader.findings.extend(epochs.findings)
        else:
            others.append(item)
            if info.name not in _PARTITION_FILES and not info.name.endswith(".tmp"):
                looks_like_segment = info.name.endswith(SEGMENT_SUFFIXES)
                reader.note(
                    FindingKind.UNEXPECTED_FILE,
                    Severity.WARNING if looks_like_segment else Severity.INFO,
                    f"unexpected file {relative}"
                    + (": not a <base offset>.<suffix> segment name" if looks_like_segment else ""),
                    file=relative,
                    partition=name,
                )
    logs = by_kind["log"]
    segments = tuple(
        Segment(
            base,
            logs[base],
            by_kind["index"].get(base),
            by_kind["timeindex"].get(base),
            by_kind["txnindex"].get(base),
        )
        for base in sorted(logs)
    )
    for kind in ("index", "timeindex", "txnindex"):
        for base, item in by_kind[kind].items():
            if base not in logs:
                leftovers.append(Leftover(item, LeftoverKind.ORPHAN_INDEX))
    leftovers.sort(key=lambda left: left.file.name)
    snapshots = tuple(ProducerSnapshot(o, f) for o, f in sorted(by_kind["snapshot"].items()))
    return PartitionDir(
        name=name,
        path=entry.path,
        topic=topic,
        partition=partition,
        state=state,
        segments=segments,
        snapshots=snapshots,
        leftovers=tuple(leftovers),
        leader_epoch_checkpoint=epochs,
        other_files=tuple(others),
        denied=tuple(reader.denied[denied_before:]),
    )


def permission_finding(
    path: Path, relative: str, partition: str | None, consequence: str
) -> Finding:
    """``permission-denied``: the auditor's user may not read ``path``. Not a fault of the
    broker (which reads its files as its own user), so never a verdict about it; the advice
    is how to give the auditor read access without changing the broker's files."""
    access = fs.access_words(path)
    return Finding(
        FindingKind.PERMISSION_DENIED,
        Severity.WARNING,
        f"cannot read {relative}{f' ({access})' if access else ''}: permission denied to the"
        f" auditor's user (uid {os.getuid()}), not a problem of the broker, which reads it as its"
        f" own user. {consequence} To audit it, run the auditor as a member of the broker's"
        " group (the log dir group-readable: g+r on files, g+rx on dirs), or as the broker's"
        " own user against a read-only bind mount of the log dir (mount --bind -o ro; on"
        " Kubernetes the broker's volume mounted readOnly), where it reads everything and can"
        " write nothing.",
        file=relative,
        partition=partition,
    )


def _left_out(relative: str, partition: str) -> str:
    """What the audit leaves out when a file of ``partition`` cannot be read."""
    if relative.endswith(".log"):
        return (
            f"{partition} is not audited (its records cannot be read whole: no verdict, no"
            " groups from it); the rest of the log dir is."
        )
    if relative.endswith((".index", ".timeindex", ".txnindex")):
        return "Its start-up check is skipped; the records are audited."
    return "It is not read; the records are audited."


@dataclass
class PartitionSnapshot:
    """One partition dir read as a consistent whole: its model, and its segments' ``.log``
    files opened together with the listing (see ``fs.snapshot_dir``), so that what the cleaner
    of a running broker renames or deletes afterwards still reads as it was. ``findings`` say
    when the dir changed while it was read."""

    partition: PartitionDir
    files: dict[str, fs.ReadOnlyFile]
    findings: list[Finding]

    def opened(self, segment: Segment) -> fs.ReadOnlyFile | None:
        return self.files.get(segment.log.name)


def _swap_in_progress(listing: Sequence[fs.FileInfo]) -> bool:
    """``.swap`` files exist only while ``Log.replaceSegments`` is half done (and after a crash
    in the middle of it, until the next start completes it)."""
    return any(info.name.endswith(".swap") for info in listing)


#: how many times a partition is listed while the cleaner's checkpoint moves under the listing
CHECKPOINT_ATTEMPTS = 4


@contextmanager
def open_partition(
    logdir: LogDir, partition: PartitionDir, version: KafkaVersion | None = None
) -> Iterator[PartitionSnapshot]:
    """``partition`` re-read as one consistent state (list, open every ``.log``, list again,
    retry while a segment swap is under way, and again while its cleaner or log-start
    checkpoint line moves meanwhile), its files open until the block ends."""
    reader = _Reader(logdir.path, version or KafkaVersion.parse(DEFAULT_KAFKA_VERSION))
    try:
        snapshot, lines = _snapshot_with_checkpoints(reader, partition)
    except OSError as error:
        if fs.is_permission_error(error):  # unreadable since the log dir was read
            finding = permission_finding(
                partition.path,
                partition.name,
                partition.name,
                f"{partition.name} is not audited (no verdict, no groups from it); the rest of"
                " the log dir is.",
            )
            denied = replace(
                partition,
                segments=(),
                snapshots=(),
                leftovers=(),
                other_files=(),
                denied=(partition.name,),
            )
            yield PartitionSnapshot(denied, {}, [finding])
            return
        if error.errno != errno.ENOENT:
            raise
        gone = replace(partition, segments=(), snapshots=(), leftovers=(), other_files=())
        finding = Finding(
            FindingKind.CHANGED_WHILE_READ,
            Severity.INFO,
            f"{partition.name} was deleted while the log dir was read",
            partition=partition.name,
        )
        yield PartitionSnapshot(gone, {}, [finding])
        return
    with snapshot:
        entry = fs.FileInfo(partition.path, partition.path.name, True, 0, 0)
        model = _read_partition(
            reader, entry, snapshot, partition.topic, partition.partition, partition.state
        )
        model = replace(model, cleaner_checkpoint=lines.last[0], log_start_checkpoint=lines.last[1])
        # said when the log dir was read
        findings = [
            f
            for f in reader.findings
            if f.kind not in (FindingKind.UNEXPECTED_FILE, FindingKind.PERMISSION_DENIED)
        ]
        if snapshot.attempts > 1 or not snapshot.settled:
            how = (
                f"read again until it held still ({snapshot.attempts} listings)"
                if snapshot.settled
                else f"still changing (or a segment swap half done) after {snapshot.attempts}"
                " listings; read as the last one found it"
            )
            findings.append(
                Finding(
                    FindingKind.CHANGED_WHILE_READ,
                    Severity.INFO,
                    f"{partition.name} changed while it was read (the log cleaner swapping"
                    f" segments on a running broker): {how}",
                    partition=partition.name,
                )
            )
        if lines.rounds > 1:
            findings.append(_checkpoints_moved(partition, lines))
        for segment in model.segments[:-1]:  # rolled: no one writes to them
            opened = snapshot.files.get(segment.log.name)
            if opened is not None:
                opened.read_once()
        yield PartitionSnapshot(model, dict(snapshot.files), findings)


_Lines = tuple[int | None, int | None]  # a partition's cleaner and log-start checkpoint lines


@dataclass(frozen=True, slots=True)
class _CheckpointRounds:
    """A partition's checkpoint lines as first read and as read just after the listing kept
    (``settled``: read the same just before it), after ``rounds`` listings."""

    first: _Lines
    last: _Lines
    rounds: int
    settled: bool


def _snapshot_with_checkpoints(
    reader: _Reader, partition: PartitionDir
) -> tuple[fs.DirSnapshot, _CheckpointRounds]:
    """``partition``'s dir snapshot and its checkpoint lines, listed again while the lines read
    just before and just after a listing differ. The cleaner swaps its cleaned segments in and
    only then writes its checkpoint: lines that held still across the listing belong to the
    segments it found (lines read with the log dir, seconds earlier, may not: segments cleaned
    meanwhile would be emulated as dirty). After ``CHECKPOINT_ATTEMPTS`` listings the last is
    kept, with the lines read just after it."""
    first = before = _checkpoint_lines_now(reader, partition)
    for rounds in range(1, CHECKPOINT_ATTEMPTS + 1):
        snapshot = fs.snapshot_dir(
            partition.path, lambda name: name.endswith(".log"), _swap_in_progress
        )
        after = _checkpoint_lines_now(reader, partition)
        if before == after or rounds == CHECKPOINT_ATTEMPTS:
            return snapshot, _CheckpointRounds(first, after, rounds, before == after)
        snapshot.close()
        before = after
    raise AssertionError("unreachable")


def _checkpoint_lines_now(reader: _Reader, partition: PartitionDir) -> _Lines:
    """``partition``'s lines in the cleaner and log-start checkpoints as the files hold them
    now (the broker replaces each whole, by a rename). A file gone has no line; one that cannot
    be read keeps the line read with the log dir, whose finding said so."""
    key = (partition.topic, partition.partition)
    listed = {
        CheckpointFileName.CLEANER: partition.cleaner_checkpoint,
        CheckpointFileName.LOG_START: partition.log_start_checkpoint,
    }
    lines: list[int | None] = []
    for name, line in listed.items():
        try:
            data = fs.read_small_file(reader.root / name.value, limit=_SMALL_TEXT_LIMIT)
        except FileNotFoundError:
            lines.append(None)
            continue
        except (OSError, ValueError):
            lines.append(line)
            continue
        lines.append(reader.parse_checkpoint(name, data).offsets().get(key))
    return lines[0], lines[1]


def _checkpoints_moved(partition: PartitionDir, lines: _CheckpointRounds) -> Finding:
    moved = [
        f"its {what} line from {a} to {b}"
        for what, a, b in zip(
            ("cleaner checkpoint", "log-start checkpoint"), lines.first, lines.last, strict=True
        )
        if a != b
    ]
    how = (
        f"listed again until they held still ({lines.rounds} listings)"
        if lines.settled
        else f"still moving after {lines.rounds} listings; read as the last listing found it,"
        " with the lines read just after it"
    )
    return Finding(
        FindingKind.CHANGED_WHILE_READ,
        Severity.INFO,
        f"the broker moved {partition.name}'s checkpoints while it was read"
        f" ({', '.join(moved) or 'and back'}): {how}",
        partition=partition.name,
    )
