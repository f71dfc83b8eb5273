"""Kafka's index sanity checks at log load, per version, and what the next start will rebuild.

Layouts (docs/kafka-internals.md §5.1), big-endian:

- ``.index``: ``relativeOffset int32, position int32`` (8 bytes; 0.9.0.1 ``OffsetIndex.scala``)
- ``.timeindex`` (0.10.1+): ``timestamp int64, relativeOffset int32`` (12 bytes; 0.10.1.0
  ``TimeIndex.scala``)
- ``.txnindex`` (0.11+): ``version int16, producerId, firstOffset, lastOffset, lastStableOffset
  int64`` (34 bytes; 0.11.0.0/2.3.0 ``TransactionIndex.scala`` ``AbortedTxn``).
  ``AbortedTxn.version`` is ``buffer.get(0)``: only the *first byte*, signed, is compared with 0.

How the broker sees an existing index (0.9.0.1 ``OffsetIndex`` constructor; 2.3.0 and 3.9.0-rc3
``AbstractIndex``: "if this is a pre-existing index, assume it is valid"): the whole file length
is valid, ``entries = roundDown(length, entrySize) / entrySize`` and the last entry is the file's
last whole slot, so a zero-filled preallocated tail reads as ``lastOffset == baseOffset`` and
``lastTimestamp == 0``. The ``.txnindex`` iterator reads ``length // 34`` entries and ignores a
partial tail (``hasNext``: ``channel.position - position >= TotalSize``).

Which checks run at load (``Log.loadSegments``/``loadSegmentFiles``, ``LogLoader`` in 3.x), always
*before* the unflushed-segment recovery of an unclean shutdown (``recoverLog``), for every
segment whatever the recovery point:

- 0.8.1 – 0.10.0.x (0.9.0.1 ``Log.scala``): ``OffsetIndex.sanityCheck`` only. A missing ``.index``
  is created empty by ``new OffsetIndex`` *before* ``indexFile.exists()`` is tested, so the
  "Could not find index file" branch never runs and the segment keeps an empty index.
  Failure (``IllegalArgumentException``): "Found a corrupted index file, <index>, deleting and
  rebuilding index...".
- 0.10.1.0 – 1.0.x (0.10.1.0, 0.11.0.0, 1.0.0 ``Log.scala``): offset, then time, then (0.11+)
  transaction index, only if the ``.index`` existed; else "Could not find [offset] index file
  corresponding to log file <log>, rebuilding index..." and recovery. A missing ``.timeindex``
  is created empty. Failure: "Found a corrupted index file due to requirement failed: ...}.
  deleting <timeindex>, <index>[, and <txnindex>] and rebuilding index...".
- 1.1.0 – 2.2.x (1.1.0, 2.2.0 ``LogSegment.sanityCheck``): the same three checks, now
  ``CorruptIndexException``; the ``.index`` is created eagerly by ``LogSegment.open`` so a missing
  one is silently recreated empty. Failure: "Found a corrupted index file corresponding to log
  file <log> due to <message>}, recovering segment and rebuilding index files...".
- 2.3.0+ (2.3.0 ``LogSegment.sanityCheck``; 3.9.0-rc3 ``LogSegment.java``): offset and time
  checks are *skipped* ("we will recover the segments above the recovery point in recoverLog()
  in any case"); only the ``.txnindex`` is checked. Indexes are lazy, so a missing ``.index`` is
  ``NoSuchFileException``: "Could not find offset index file corresponding to log file <log>,
  recovering segment and rebuilding index files..." (3.2.0+ logs it only after a clean shutdown
  or below the recovery point, but recovers either way).

In every version a ``KafkaException`` from an aborted-transaction version byte > 0 is not caught
by the loader: the log, and with it the broker's start, fails.

Preallocation (0.9.0.1 ``OffsetIndex``; 2.1.0/2.3.0 ``AbstractIndex``): a new index file is
created at ``segment.index.bytes`` (10 MiB by default, rounded down to whole entries), zero
filled, and the broker writes its entries from the start, keeping their count in memory. A
segment's index files are trimmed to their entries (``trimToValidSize``) when it stops being
the active one (``Log.roll``: 0.9.0.1 ``index.trimToValidSize()``, 2.x
``LogSegment.onBecomeInactiveSegment``) and when the broker closes it at a clean shutdown
(``LogSegment.close`` -> ``AbstractIndex.close``); after loading, the active segment's are
preallocated again (2.x ``activeSegment.resizeIndexes(config.maxIndexSize)``). So on a running
broker the active segment's ``.index`` and ``.timeindex`` end in zero slots: normal, and what
the next start finds depends on how the broker stops. After a clean shutdown they are trimmed
to their entries, which pass the checks above; after a crash (``kill -9``) they keep the zero
tail, read as entries at load ("assume it is valid"): before 2.0.0 a zero ``.index`` tail is
``lastOffset == baseOffset`` (corrupt), and before 2.3.0 a ``.timeindex`` with entries and a
zero tail has a last timestamp 0 below its first (corrupt). For a running broker
(``LogDir.liveness``) the active segment's files are judged as a clean shutdown leaves them:
trimmed to the entries written so far (the slots before the first all-zero one: a written
``.index`` entry has a position > 0, ``LogSegment.append`` indexes no batch at position 0, and
a written ``.timeindex`` entry a timestamp > -1; a record timestamp of exactly 0 would end the
count early).
"""

from __future__ import annotations

import errno
import struct
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path

from offsets_auditor.logdir import fs
from offsets_auditor.logdir.layout import CheckpointFileName
from offsets_auditor.logdir.model import FileEntry, LogDir, PartitionDir, Segment
from offsets_auditor.versions import KafkaVersion

#: ``.index`` entry: relativeOffset (offset - baseOffset), position (byte position in the .log).
OFFSET_ENTRY = struct.Struct(">ii")
#: ``.timeindex`` entry: timestamp (ms), relativeOffset.
TIME_ENTRY = struct.Struct(">qi")
#: ``.txnindex`` entry: version, producerId, firstOffset, lastOffset, lastStableOffset.
ABORTED_TXN = struct.Struct(">hqqqq")

_CAUGHT = ("IllegalArgumentException", "CorruptIndexException")
NOT_REBUILT = "not rebuilt"


class IndexKind(StrEnum):
    OFFSET = "offset"
    TIME = "time"
    TXN = "txn"

    @property
    def suffix(self) -> str:
        return {"offset": ".index", "time": ".timeindex", "txn": ".txnindex"}[self.value]


@dataclass(frozen=True, slots=True)
class Check:
    """One ``sanityCheck()``: ``message`` and ``exception`` (Java class simple name) on failure."""

    passed: bool
    message: str | None = None
    exception: str | None = None


_PASS = Check(True)


def _fail(version: KafkaVersion, message: str) -> Check:
    """Scala ``require`` (IllegalArgumentException, "requirement failed: " prefix) up to 1.0.x;
    ``CorruptIndexException`` from 1.1.0 (1.1.0 ``OffsetIndex``, ``TimeIndex``,
    ``TransactionIndex``)."""
    if version.at_least("1.1.0"):
        return Check(False, message, "CorruptIndexException")
    return Check(False, f"requirement failed: {message}", "IllegalArgumentException")


def offset_index_check(
    length: int, last_slot: bytes, base_offset: int, version: KafkaVersion, path: str
) -> Check:
    """``OffsetIndex.sanityCheck`` of ``version``. ``length`` is the file length, ``last_slot``
    the file's last whole 8-byte slot (empty when ``length < 8``), ``path`` the file's path.

    Conditions: ``entries != 0 && lastOffset <= baseOffset`` up to 1.1.x, ``< baseOffset`` from
    2.0.0 (2.0.0 ``OffsetIndex.scala``); then ``length % 8 != 0``. Texts: 0.9.0.1 (absolute
    path, then file *name*), 0.10.1.0 "no larger than", 1.1.0 "no greater than"/"neither positive
    nor", 2.0.0 "less than", 3.5.0 Java (no parentheses around the path).
    """
    name = path.replace("\\", "/").rsplit("/", 1)[-1]
    entries = length // OFFSET_ENTRY.size
    if entries:
        relative, _position = OFFSET_ENTRY.unpack(last_slot)
        last = base_offset + relative
        if version.at_least("2.0.0"):
            if last < base_offset:
                shown = path if version.at_least("3.5.0") else f"({path})"
                return _fail(
                    version,
                    f"Corrupt index found, index file {shown} has non-zero size but the last "
                    f"offset is {last} which is less than the base offset {base_offset}.",
                )
        elif last <= base_offset:
            if version.at_least("1.1.0"):
                tail = f"which is no greater than the base offset {base_offset}."
            elif version.at_least("0.10.1.0"):
                tail = f"which is no larger than the base offset {base_offset}."
            else:
                tail = f"and the base offset is {base_offset}"
            return _fail(
                version,
                f"Corrupt index found, index file ({path}) has non-zero size but the last "
                f"offset is {last} {tail}",
            )
    if length % OFFSET_ENTRY.size:
        if version.at_least("1.1.0"):
            return _fail(
                version,
                f"Index file {path} is corrupt, found {length} bytes which is neither positive "
                "nor a multiple of 8.",
            )
        shown = path if version.at_least("0.10.1.0") else name
        return _fail(
            version,
            f"Index file {shown} is corrupt, found {length} bytes which is not positive or not "
            "a multiple of 8.",
        )
    return _PASS


def time_index_check(
    length: int,
    first_slot: bytes,
    last_slot: bytes,
    base_offset: int,
    version: KafkaVersion,
    path: str,
) -> Check:
    """``TimeIndex.sanityCheck`` (0.10.1.0+): ``lastTimestamp < timestamp(slot 0)``, then
    ``lastOffset < baseOffset``, then ``length % 12 != 0``. Texts: 0.10.1.0 ("no larger than",
    "smaller than", "not positive or not"), 1.1.0 ("less than", "neither positive nor"), same
    through 3.9.0-rc3 ``TimeIndex.java``."""
    entries = length // TIME_ENTRY.size
    new = version.at_least("1.1.0")
    if entries:
        first_ts, _ = TIME_ENTRY.unpack(first_slot)
        last_ts, relative = TIME_ENTRY.unpack(last_slot)
        last = base_offset + relative
        lead = f"Corrupt time index found, time index file ({path}) has non-zero size but the last"
        if last_ts < first_ts:
            word = "less than" if new else "no larger than"
            return _fail(
                version,
                f"{lead} timestamp is {last_ts} which is {word} the first timestamp {first_ts}",
            )
        if last < base_offset:
            word = "less than" if new else "smaller than"
            return _fail(
                version, f"{lead} offset is {last} which is {word} the first offset {base_offset}"
            )
    if length % TIME_ENTRY.size:
        words = "neither positive nor" if new else "not positive or not"
        return _fail(
            version,
            f"Time index file {path} is corrupt, found {length} bytes which is {words} a "
            "multiple of 12.",
        )
    return _PASS


def aborted_txn_text(data: bytes | memoryview, position: int = 0) -> str:
    """``AbortedTxn.toString`` (0.11.0.0 ``TransactionIndex.scala``; 3.9.0-rc3
    ``AbortedTxn.java``)."""
    _, producer_id, first, last, stable = ABORTED_TXN.unpack_from(data, position)
    version = struct.unpack_from(">b", data, position)[0]
    return (
        f"AbortedTxn(version={version}, producerId={producer_id}, firstOffset={first}, "
        f"lastOffset={last}, lastStableOffset={stable})"
    )


def txn_index_check(data: bytes, base_offset: int, version: KafkaVersion, path: str) -> Check:
    """``TransactionIndex.sanityCheck`` (0.11.0+) over the whole file: for each whole 34-byte
    entry, the version byte must be <= 0 (``KafkaException``, not caught by the loader), then
    ``lastOffset >= startOffset``. Texts: 0.11.0.0 bare ``require`` ("requirement failed"),
    1.0.0 with a message, 1.1.0 ``CorruptIndexException``, 2.3.0 adds "in index <path>"."""
    view = memoryview(data)
    for position in range(0, len(view) - ABORTED_TXN.size + 1, ABORTED_TXN.size):
        txn_version = struct.unpack_from(">b", view, position)[0]
        if txn_version > 0:
            where = f" in transaction index {path}" if version.at_least("2.3.0") else ""
            return Check(
                False,
                f"Unexpected aborted transaction version {txn_version}{where}, "
                "current version is 0",
                "KafkaException",
            )
        last = ABORTED_TXN.unpack_from(view, position)[3]
        if last < base_offset:
            if not version.at_least("1.0.0"):
                return Check(False, "requirement failed", "IllegalArgumentException")
            where = f" in index {path}" if version.at_least("2.3.0") else ""
            return _fail(
                version,
                f"Last offset of aborted transaction {aborted_txn_text(view, position)}{where} "
                f"is less than start offset {base_offset}",
            )
    return _PASS


# --- What the next start does with each index file -------------------------------------------


class Verdict(StrEnum):
    """What the next broker start does with one index file."""

    OK = "ok"  # checked at load and passes
    CORRUPT = "corrupt"  # the check fails: "Found a corrupted index file ...", rebuilt
    REBUILT = "rebuilt"  # not itself at fault, but rebuilt with a corrupt or missing sibling
    MISSING = "missing"  # no such file; ``reason`` says whether the segment is rebuilt
    NOT_CHECKED = "not-checked"  # this version does not check (or use) this file at load
    FATAL = "fatal"  # an exception the loader does not catch: the log fails to load
    CHANGED = "changed"  # renamed or replaced since it was listed (a running broker's cleaner)
    #: the broker's version is known as a range whose releases do different things with it
    #: (``audit.alternatives``: the reason gives each one's verdict)
    DEPENDS_ON_VERSION = "depends-on-version"


@dataclass(frozen=True, slots=True)
class IndexVerdict:
    """``file`` is relative to the log dir (``__consumer_offsets-3/00000000000000000000.index``);
    ``reason`` quotes the broker's exception (``<Class>: <message>``) for corrupt/fatal files."""

    file: str
    partition: str
    kind: IndexKind
    base_offset: int
    verdict: Verdict
    reason: str


def _load_era(version: KafkaVersion) -> str:
    """The four loaders of the module docstring, by first release."""
    for era in ("2.3.0", "1.1.0", "0.10.1.0"):
        if version.at_least(era):
            return era
    return "0.8.1"


@dataclass(frozen=True, slots=True)
class Trimmed:
    """A preallocated index as a clean shutdown leaves it: ``entries`` written of the
    ``slots`` whole slots the file has."""

    entries: int
    slots: int


def written_entries(f: fs.ReadOnlyFile, entry_size: int) -> int:
    """The entries written at the start of a preallocated index: the slots before the first
    all-zero one (a binary search: the broker writes them in order, and the rest stays zero)."""
    zero = bytes(entry_size)
    low, high = 0, f.size // entry_size  # slots before ``low`` are written; ``high`` is zero
    while low < high:
        middle = (low + high) // 2
        if f.read_at(middle * entry_size, entry_size) == zero:
            high = middle
        else:
            low = middle + 1
    return low


def _read_check(
    kind: IndexKind,
    path: Path,
    base: int,
    version: KafkaVersion,
    identity: tuple[int, int] | None = None,
    trimmed: list[Trimmed] | None = None,
) -> Check | None:
    """Read only what the check needs: the first and last slots, or a whole ``.txnindex``.
    None when the file is gone or replaced since it was listed (``identity``): on a running
    broker that is the cleaner swapping segments, and says nothing about the file. With
    ``trimmed`` (a list, appended to), an offset or time index is checked as a clean shutdown
    trims it (the module docstring), and what was found is appended."""
    try:
        with fs.ReadOnlyFile(path, expect=identity) as f:
            if kind is IndexKind.TXN:
                return txn_index_check(f.read_at(0, f.size), base, version, str(path))
            size = OFFSET_ENTRY.size if kind is IndexKind.OFFSET else TIME_ENTRY.size
            entries = f.size // size
            length = f.size
            if trimmed is not None:
                written = written_entries(f, size)
                trimmed.append(Trimmed(written, entries))
                entries, length = written, written * size
            first = f.read_at(0, size) if entries else b""
            last = f.read_at((entries - 1) * size, size) if entries else b""
    except OSError as error:
        if error.errno in (errno.ENOENT, errno.ESTALE):
            return None
        return Check(False, f"Could not read file {path} ({error.strerror})", "IOException")
    if len(first) < (size if entries else 0) or len(last) < (size if entries else 0):
        return Check(False, f"{path} shrank while being read", "IOException")
    if kind is IndexKind.OFFSET:
        return offset_index_check(length, last, base, version, str(path))
    return time_index_check(length, first, last, base, version, str(path))


@dataclass(frozen=True, slots=True)
class _SegmentContext:
    part: PartitionDir
    seg: Segment
    version: KafkaVersion
    clean: bool
    recovery_point: int
    #: a broker runs on the log dir and this is the partition's active segment: its offset and
    #: time indexes are preallocated, and judged as a clean shutdown trims them
    live_active: bool = False

    def files(self) -> dict[IndexKind, FileEntry | None]:
        s = self.seg
        return {IndexKind.OFFSET: s.index, IndexKind.TIME: s.time_index, IndexKind.TXN: s.txn_index}

    def name(self, kind: IndexKind) -> str:
        entry = self.files()[kind]
        return entry.name if entry is not None else self.seg.log.name[: -len(".log")] + kind.suffix

    def used(self, kind: IndexKind) -> bool:
        return {
            IndexKind.OFFSET: True,
            IndexKind.TIME: self.version.at_least("0.10.1.0"),
            IndexKind.TXN: self.version.at_least("0.11.0.0"),
        }[kind]


def _missing_offset_index(ctx: _SegmentContext, era: str) -> tuple[str, bool]:
    """(reason, rebuilt) for a segment whose ``.index`` is missing."""
    if era == "0.8.1":
        return "recreated empty by new OffsetIndex before the exists() test; " + NOT_REBUILT, False
    if era == "1.1.0":
        return "recreated empty by LogSegment.open before the exists() test; " + NOT_REBUILT, False
    log_path = str(ctx.part.path / ctx.seg.log.name)
    if era == "0.10.1.0":
        word = "offset index" if ctx.version.at_least("0.11.0.0") else "index"
        return (
            f"Could not find {word} file corresponding to log file {log_path}, rebuilding index...",
            True,
        )
    # 3.2.0 LogLoader logs it only "if (hadCleanShutdown || segment.baseOffset < recoveryPoint)"
    quiet = ctx.version.at_least("3.2.0") and not (
        ctx.clean or ctx.seg.base_offset < ctx.recovery_point
    )
    if quiet:
        return (
            "recovered and rebuilt without a log line (3.2+, unclean, above the recovery point)",
            True,
        )
    return (
        f"Could not find offset index file corresponding to log file {log_path}, "
        "recovering segment and rebuilding index files...",
        True,
    )


def segment_verdicts(ctx: _SegmentContext) -> list[IndexVerdict]:
    """Verdicts for one segment's index files (see the module docstring for the rules)."""
    era = _load_era(ctx.version)
    files = ctx.files()
    out: dict[IndexKind, tuple[Verdict, str]] = {}

    def rebuild_siblings(cause: IndexKind, why: str) -> None:
        for kind in IndexKind:
            passed = out.get(kind, (None, ""))[0] is Verdict.OK
            if (kind not in out or passed) and ctx.used(kind) and files[kind] is not None:
                note = "passes the sanity check, but " if passed else ""
                out[kind] = (
                    Verdict.REBUILT,
                    f"{note}rebuilt with the segment ({ctx.name(cause)} {why})",
                )

    for kind in IndexKind:  # e.g. a .txnindex next to a 0.10 broker: ignored by that broker
        if files[kind] is not None and not ctx.used(kind):
            out[kind] = (
                Verdict.NOT_CHECKED,
                f"Kafka {ctx.version} does not use {kind.suffix} files",
            )
    checks = [IndexKind.OFFSET, IndexKind.TIME, IndexKind.TXN]
    if files[IndexKind.OFFSET] is None:
        reason, rebuilt = _missing_offset_index(ctx, era)
        out[IndexKind.OFFSET] = (Verdict.MISSING, reason)
        if rebuilt:
            rebuild_siblings(IndexKind.OFFSET, "missing")
            checks = []
    if ctx.used(IndexKind.TIME) and files[IndexKind.TIME] is None and checks:
        out[IndexKind.TIME] = (Verdict.MISSING, "created empty at load; passes, not rebuilt")
    if era == "2.3.0":
        checks = [k for k in checks if k is IndexKind.TXN]
    for kind in checks:
        if kind in out or files[kind] is None:
            continue
        entry = files[kind]
        identity = entry.identity if entry is not None and entry.identity != (0, 0) else None
        trimmed: list[Trimmed] | None = (
            [] if ctx.live_active and kind is not IndexKind.TXN else None
        )
        check = _read_check(
            kind,
            ctx.part.path / ctx.name(kind),
            ctx.seg.base_offset,
            ctx.version,
            identity,
            trimmed,
        )
        if check is None:
            out[kind] = (Verdict.CHANGED, "renamed or replaced since it was listed: not checked")
            continue
        live = _live_note(trimmed[0]) if trimmed else ""
        if check.passed:
            out[kind] = (Verdict.OK, f"{live}passes the sanity check")
            continue
        caught = check.exception in _CAUGHT
        out[kind] = (
            Verdict.CORRUPT if caught else Verdict.FATAL,
            f"{live}{'fails: ' if live else ''}{check.exception}: {check.message}",
        )
        if caught:
            rebuild_siblings(kind, "corrupt")
        break
    for kind in IndexKind:
        if kind not in out and files[kind] is not None:
            why = (
                f"Kafka {ctx.version} skips offset/time index sanity checks at load (2.3.0+)"
                if era == "2.3.0" and kind is not IndexKind.TXN
                else "not reached: the segment's load stopped at an earlier check"
            )
            out[kind] = (Verdict.NOT_CHECKED, why)
    return [
        IndexVerdict(
            f"{ctx.part.name}/{ctx.name(kind)}",
            ctx.part.name,
            kind,
            ctx.seg.base_offset,
            *out[kind],
        )
        for kind in IndexKind
        if kind in out
    ]


def _live_note(trimmed: Trimmed) -> str:
    if trimmed.entries == trimmed.slots:
        return "the active segment's index on a running broker, not preallocated; it "
    return (
        f"the active segment's index on a running broker, preallocated ({trimmed.entries:,} of"
        f" its {trimmed.slots:,} slots written, the rest zero): normal while it runs; a clean"
        " shutdown trims it to its entries (AbstractIndex.trimToValidSize), and trimmed it "
    )


def recovery_points(logdir: LogDir) -> tuple[dict[tuple[str, int], int], str]:
    checkpoint = logdir.recovery_point_checkpoint
    if checkpoint is None:
        return {}, "no recovery-point-offset-checkpoint: 0"
    if not checkpoint.readable_by_broker:
        return {}, "unreadable recovery-point-offset-checkpoint: reset to 0"
    return checkpoint.offsets(), CheckpointFileName.RECOVERY_POINT.value


def index_verdicts(logdir: LogDir, version: KafkaVersion) -> list[IndexVerdict]:
    """Every index file of every live segment in every partition dir, with what the next start
    of a ``version`` broker does with it. The files with verdict ``corrupt`` are exactly those
    the broker will log as "Found a corrupted index file" and rebuild. For a running broker
    (``logdir.liveness``), the next start after a clean shutdown: the active segments' indexes
    trimmed (the module docstring)."""
    points, _ = recovery_points(logdir)
    running = logdir.liveness.running
    clean = logdir.clean_shutdown.present or running  # a running broker: after a clean stop
    verdicts: list[IndexVerdict] = []
    for part in logdir.partitions:
        point = points.get((part.topic, part.partition), 0)
        for seg in part.segments:
            active = running and seg is part.segments[-1]
            ctx = _SegmentContext(part, seg, version, clean, point, active)
            verdicts.extend(segment_verdicts(ctx))
    return verdicts
