"""The log cleaner's renames, replayed step by step on a copy of a real log dir while the
auditor reads it, and an injector that runs them at chosen points of the auditor's own
file-system calls.

One clean of a ``__consumer_offsets`` partition on disk, as the broker does it (tags are
github.com/apache/kafka release tags; "2.3.0" is A:2.3.0 ``core/src/main/scala/kafka/log/``,
"0.9.0.1" is A:0.9.0.1 ``core/src/main/scala/kafka/log/``):

1. ``LogCleaner.cleanSegments`` cleans a GROUP of old segments (``groupSegmentsBySize``) into
   ONE new segment that takes the base offset of the group's first segment, written under the
   suffix ``.cleaned`` (``Log.CleanedFileSuffix``): ``<base>.log.cleaned`` first, then its
   indexes (0.9.0.1: ``new OffsetIndex`` right after the log; 2.3.0: ``LazyOffsetIndex.get`` at
   the first index append, ``.index`` then ``.timeindex``; ``.txnindex`` only when an aborted
   transaction is indexed, ``TransactionIndex.openChannel``). Then ``cleaned.lastModified =
   segments.last.lastModified`` (``LogSegment.lastModified_=``: log and offset/time index).
2. ``Log.replaceSegments``: ``changeFileSuffixes(".cleaned", ".swap")`` renames the new
   segment's files one at a time (``LogSegment.changeFileSuffixes``: log, offset index, time
   index, txn index if it exists, ``TransactionIndex.renameTo``).
3. Still in ``replaceSegments``, each old segment in base-offset order goes through
   ``Log.asyncDeleteSegment``: ``changeFileSuffixes("", ".deleted")``.
4. ``changeFileSuffixes(".swap", "")``: the new segment takes its final names. Its base offset
   is the first old segment's, so ``<base>.log`` comes back as a NEW inode.
5. Once every group is swapped, ``LogCleanerManager.doneCleaning`` -> ``updateCheckpoints``
   writes ``cleaner-offset-checkpoint`` (2.3.0 ``server/checkpoints/CheckpointFile.write``,
   0.9.0.1 ``server/OffsetCheckpoint.write``): ``<file>.tmp``, then renamed over the file.
6. ``file.delete.delay.ms`` later (broker ``log.segment.delete.delay.ms``) the ``delete-file``
   task scheduled by ``asyncDeleteSegment`` unlinks the ``.deleted`` files (2.3.0
   ``LogSegment.deleteIfExists``: log, offset index, time index, txn index; 0.9.0.1
   ``LogSegment.delete``: log, index).

The real brokers of ``tests/fixtures`` logged exactly these swaps ("Swapping in cleaned segment
... for segment(s) ..." in ``log-cleaner.log``, "Deleting segment ..." in ``server.log``).

Every step here is one ``os`` call of the test process (``os.rename`` is Kafka's
``Utils.atomicMoveWithFallback`` = ``Files.move(ATOMIC_MOVE)``). Nothing touches
``tests/fixtures``: plans read a pristine copy and steps run on another copy.
"""

from __future__ import annotations

import os
import struct
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any

CHECKPOINT = "cleaner-offset-checkpoint"
_OFFSET_ENTRY = struct.Struct(">ii")  # OffsetIndex: relativeOffset, physicalPosition
_TIME_ENTRY = struct.Struct(">qi")  # TimeIndex: timestamp, relativeOffset


@dataclass(frozen=True, slots=True)
class Era:
    """What a broker version writes per segment, in the order its methods create, rename and
    delete the files."""

    tag: str
    suffixes: tuple[str, ...]  # changeFileSuffixes / delete order
    stamped: tuple[str, ...]  # the files LogSegment.lastModified_= stamps


ERA_0_9 = Era("A:0.9.0.1", (".log", ".index"), (".log", ".index"))
ERA_2_3 = Era(
    "A:2.3.0", (".log", ".index", ".timeindex", ".txnindex"), (".log", ".index", ".timeindex")
)


def era_of(version: str) -> Era:
    return ERA_0_9 if version.startswith("0.") else ERA_2_3


def segment_name(base: int, suffix: str) -> str:
    """``Log.filenamePrefixFromOffset``: the base offset on 20 digits."""
    return f"{base:020d}{suffix}"


@dataclass(frozen=True, slots=True)
class Step:
    """One file-system call of the broker; paths are relative to the log dir."""

    op: str  # "write" | "rename" | "unlink"
    path: str
    target: str | None = None
    data: bytes = b""
    mtime_ns: int | None = None
    mirrors: str = ""

    def apply(self, root: Path) -> None:
        """Run the step under ``root``. A write creates its file (``O_EXCL``: the broker writes
        new ``.cleaned``/``.tmp`` files, never over a file a copy may share with another)."""
        if self.op == "write":
            with open(root / self.path, "xb") as f:
                f.write(self.data)
            if self.mtime_ns is not None:
                os.utime(root / self.path, ns=(self.mtime_ns, self.mtime_ns))
        elif self.op == "rename":
            assert self.target is not None
            os.rename(root / self.path, root / self.target)
        else:
            os.unlink(root / self.path)

    def names(self) -> tuple[str, ...]:
        return (self.path,) if self.target is None else (self.path, self.target)

    def __str__(self) -> str:
        what = f"{self.path} -> {self.target}" if self.target else self.path
        return f"{self.op} {what} ({self.mirrors})"


@dataclass(frozen=True, slots=True)
class GroupSwap:
    """One ``cleanSegments`` call: old segments (base offsets, ascending) cleaned into one new
    segment at ``old[0]`` whose files are ``new`` (suffix -> bytes)."""

    old: tuple[int, ...]
    new: Mapping[str, bytes]


@dataclass(frozen=True, slots=True)
class Clean:
    """The steps of one clean of ``partition`` and the step counts after which the partition
    is a whole log again (0, the end of each ``replaceSegments``, the checkpoint): every
    consistent snapshot a reader may report."""

    partition: str
    steps: tuple[Step, ...]
    whole_after: tuple[int, ...]

    @property
    def touched(self) -> frozenset[str]:
        """Every path a step wrote, renamed (both names) or unlinked, excluding the root
        checkpoint (its rename is atomic and never makes a file vanish)."""
        return frozenset(n for s in self.steps for n in s.names() if "/" in n)


def real_swap(after_partition: Path, group: Sequence[int]) -> GroupSwap:
    """The segment a real broker wrote for ``group`` (from a fixture's ``kafka-logs-after``)."""
    new = {}
    for suffix in ERA_2_3.suffixes:
        path = after_partition / segment_name(group[0], suffix)
        if path.exists():
            new[suffix] = path.read_bytes()
    return GroupSwap(tuple(group), new)


def merged_swap(partition: Path, group: Sequence[int], era: Era) -> GroupSwap:
    """``group`` merged into one segment holding all of its records: what a clean that
    removes nothing writes. Log bytes concatenated; offset and time index entries rebased
    on ``group[0]`` (positions shifted, time entries kept only when the timestamp grows, as
    ``TimeIndex.maybeAppend`` does); ``.txnindex`` entries hold absolute offsets, so they
    concatenate."""
    base = group[0]
    log, index, time_index, txn = bytearray(), bytearray(), bytearray(), bytearray()
    last_ts = None
    for seg in group:

        def read(suffix: str, seg: int = seg) -> bytes:
            path = partition / segment_name(seg, suffix)
            return path.read_bytes() if path.exists() else b""

        for rel, pos in _OFFSET_ENTRY.iter_unpack(_whole(read(".index"), _OFFSET_ENTRY)):
            index += _OFFSET_ENTRY.pack(seg + rel - base, pos + len(log))
        for ts, rel in _TIME_ENTRY.iter_unpack(_whole(read(".timeindex"), _TIME_ENTRY)):
            if last_ts is None or ts > last_ts:
                time_index += _TIME_ENTRY.pack(ts, seg + rel - base)
                last_ts = ts
        txn += read(".txnindex")
        log += read(".log")
    new = {".log": bytes(log), ".index": bytes(index)}
    if ".timeindex" in era.suffixes:
        new[".timeindex"] = bytes(time_index)
    if txn:
        new[".txnindex"] = bytes(txn)
    return GroupSwap(tuple(group), new)


def _whole(data: bytes, entry: struct.Struct) -> bytes:
    return data[: len(data) // entry.size * entry.size]


def plan_clean(
    root: Path, partition: str, era: Era, swaps: Sequence[GroupSwap], checkpoint: int | None
) -> Clean:
    """Every step of one clean of ``root/partition`` (read, not changed), in the broker's
    order: per group, steps 1-4 of the module docstring; then the checkpoint (5) when
    ``checkpoint`` is given; then the delayed deletes (6)."""
    steps: list[Step] = []
    whole = [0]
    deletes: list[Step] = []
    for swap in swaps:
        steps += _cleaned_files(root, partition, era, swap)
        old_files = [(seg, _existing(root, partition, era, seg)) for seg in swap.old]
        steps += _change_suffixes(partition, era, swap.old[0], swap.new, ".cleaned", ".swap")
        for seg, suffixes in old_files:
            steps += _change_suffixes(partition, era, seg, suffixes, "", ".deleted")
            deletes += _deletes(partition, era, seg, suffixes)
        steps += _change_suffixes(partition, era, swap.old[0], swap.new, ".swap", "")
        whole.append(len(steps))
    if checkpoint is not None:
        steps += _checkpoint(root, partition, era, checkpoint)
        whole.append(len(steps))
    return Clean(partition, tuple(steps + deletes), tuple(whole))


def _existing(root: Path, partition: str, era: Era, seg: int) -> tuple[str, ...]:
    return tuple(s for s in era.suffixes if (root / partition / segment_name(seg, s)).exists())


def _cleaned_files(root: Path, partition: str, era: Era, swap: GroupSwap) -> list[Step]:
    """Step 1: ``LogCleaner.createNewCleanedSegment``/``cleanSegments`` writes the new segment
    as ``.cleaned`` files, stamped with the last old segment's mtime."""
    last = root / partition / segment_name(swap.old[-1], ".log")
    mtime = last.stat().st_mtime_ns
    where = f"{era.tag} LogCleaner.scala cleanSegments"
    return [
        Step(
            "write",
            f"{partition}/{segment_name(swap.old[0], suffix)}.cleaned",
            data=swap.new[suffix],
            mtime_ns=mtime if suffix in era.stamped else None,
            mirrors=where,
        )
        for suffix in era.suffixes
        if suffix in swap.new
    ]


def _change_suffixes(
    partition: str, era: Era, base: int, suffixes: Iterable[str], old: str, new: str
) -> list[Step]:
    """``LogSegment.changeFileSuffixes(old, new)``: one rename per existing file, log first."""
    present = set(suffixes)
    caller = "asyncDeleteSegment" if new == ".deleted" else "replaceSegments"
    method = f"LogSegment.changeFileSuffixes({old!r}, {new!r})"
    return [
        Step(
            "rename",
            f"{partition}/{segment_name(base, suffix)}{old}",
            f"{partition}/{segment_name(base, suffix)}{new}",
            mirrors=f"{era.tag} Log.scala {caller} -> {method}",
        )
        for suffix in era.suffixes
        if suffix in present
    ]


def _deletes(partition: str, era: Era, seg: int, suffixes: tuple[str, ...]) -> list[Step]:
    """Step 6: the delayed ``deleteSeg`` of ``Log.asyncDeleteSegment``."""
    method = "LogSegment.delete" if era is ERA_0_9 else "LogSegment.deleteIfExists"
    return [
        Step(
            "unlink",
            f"{partition}/{segment_name(seg, suffix)}.deleted",
            mirrors=f"{era.tag} Log.scala asyncDeleteSegment -> {method}",
        )
        for suffix in suffixes
    ]


def _checkpoint(root: Path, partition: str, era: Era, offset: int) -> list[Step]:
    """Step 5: ``updateCheckpoints`` rewrites every entry (existing ones kept) via ``.tmp``."""
    topic, _, number = partition.rpartition("-")
    entries: dict[tuple[str, str], str] = {}
    path = root / CHECKPOINT
    if path.exists():
        for line in path.read_text().splitlines()[2:]:
            t, p, o = line.split()
            entries[(t, p)] = o
    entries[(topic, number)] = str(offset)
    text = f"0\n{len(entries)}\n" + "".join(f"{t} {p} {o}\n" for (t, p), o in entries.items())
    method = "OffsetCheckpoint.write" if era is ERA_0_9 else "CheckpointFile.write"
    where = f"{era.tag} LogCleanerManager.doneCleaning -> {method}"
    return [
        Step("write", CHECKPOINT + ".tmp", data=text.encode(), mirrors=where),
        Step("rename", CHECKPOINT + ".tmp", CHECKPOINT, mirrors=where),
    ]


def run_steps(root: Path, steps: Sequence[Step]) -> None:
    for step in steps:
        step.apply(root)


# -- the injector ------------------------------------------------------------------------------


class StepFailed(RuntimeError):
    """A broker step could not run: the simulation, not the auditor, is wrong."""


@dataclass
class FsCalls:
    """Counts the ``os`` calls that ``offsets_auditor.logdir.fs`` makes (each entry a listing
    yields, and each method call on it, count as one) and runs ``schedule[k]`` right after call
    ``k`` (1-based) returns or raises; ``schedule[0]`` runs on entry. ``trace`` names each call and
    the file it is about, relative to ``root`` where it can."""

    root: Path
    schedule: Mapping[int, Sequence[Step]] = field(default_factory=dict)
    count: int = 0
    trace: list[str] = field(default_factory=list)
    _fds: dict[int, str] = field(default_factory=dict)

    def __enter__(self) -> FsCalls:
        import offsets_auditor.logdir.fs as target

        self._target = target
        self._real = target.os
        target.os = _OsProxy(self._real, self)  # type: ignore[assignment]
        run_steps(self.root, self.schedule.get(0, ()))
        return self

    def __exit__(self, *exc: object) -> None:
        self._target.os = self._real

    def called(self, name: str, args: tuple[Any, ...], result: Any) -> None:
        self.count += 1
        self.trace.append(f"{name} {self._about(name, args, result)}")
        steps = self.schedule.get(self.count, ())
        try:
            run_steps(self.root, steps)
        except OSError as error:  # a harness bug: never let the audit swallow it as an OSError
            raise StepFailed(f"after call {self.count} ({self.trace[-1]}): {error}") from error

    def _about(self, name: str, args: tuple[Any, ...], result: Any) -> str:
        first = args[0] if args else None
        if isinstance(first, int) and first in self._fds:
            about = self._fds[first]
        elif isinstance(first, str | os.PathLike | os.DirEntry):
            about = self._relative(os.fspath(first))
        else:
            about = ""
        if name == "open" and isinstance(result, int):
            self._fds[result] = about
        return about

    def _relative(self, path: str) -> str:
        root = str(self.root)
        return path[len(root) + 1 :] if path.startswith(root + os.sep) else path


class _OsProxy:
    """``os`` for ``offsets_auditor.logdir.fs``: every function call is reported to the counter."""

    def __init__(self, real: ModuleType, calls: FsCalls) -> None:
        self._real = real
        self._calls = calls

    def __getattr__(self, name: str) -> Any:
        value = getattr(self._real, name)
        if not callable(value) or isinstance(value, type):
            return value
        return _counted(name, value, self._calls)


def _counted(
    name: str, fn: Callable[..., Any], calls: FsCalls, subject: str | None = None
) -> Callable[..., Any]:
    def call(*args: Any, **kwargs: Any) -> Any:
        result = None
        try:
            result = fn(*args, **kwargs)
            if name == "scandir":
                result = _Listing(result, calls)
            return result
        finally:
            calls.called(name, args if subject is None else (subject,), result)

    return call


class _Listing:
    """A counted ``os.scandir`` iterator: each entry it yields is one call."""

    def __init__(self, real: Any, calls: FsCalls) -> None:
        self._real = real
        self._calls = calls

    def __enter__(self) -> _Listing:
        self._real.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        self._real.__exit__(*exc)

    def __iter__(self) -> _Listing:
        return self

    def __next__(self) -> _Entry:
        entry = None
        try:
            entry = next(self._real)
            return _Entry(entry, self._calls)
        finally:
            self._calls.called("scandir.next", (entry,) if entry else (), None)

    def close(self) -> None:
        self._real.close()


class _Entry:
    """A counted ``os.DirEntry``: its methods (``stat``, ``is_dir`` ...) are calls."""

    def __init__(self, real: os.DirEntry[str], calls: FsCalls) -> None:
        self._real = real
        self._calls = calls

    def __fspath__(self) -> str:
        return self._real.path

    def __getattr__(self, name: str) -> Any:
        value = getattr(self._real, name)
        if not callable(value):
            return value
        return _counted(f"DirEntry.{name}", value, self._calls, self._real.path)
