"""All file-system access of the core, read-only by construction.

The auditor runs against live broker log directories. Nothing here writes, renames, locks or
memory-maps a broker's file: files are opened ``O_RDONLY`` and read with ``pread`` in bounded
chunks (a file truncated under us just reads shorter; an ``mmap`` would raise SIGBUS instead).
Whether the broker holds its log dir's ``.lock`` is asked with ``fcntl(F_GETLK)``, which takes
no lock (:func:`probe_lock`). Every other module takes bytes or typed values.

A rolled segment is read once (:meth:`ReadOnlyFile.read_once`): the pages its reads bring into
the page cache are dropped again (``POSIX_FADV_DONTNEED``), the pages that were there before are
left, decided per block of :data:`READ_ONCE_BLOCK` bytes from what the page cache held before
the file's first read. Reading terabytes of old segments then does not push the broker's
working set (the active segments its consumers read) out of memory, nor the auditor's own
scratch files.
"""

from __future__ import annotations

import errno
import os
import re
import stat
import struct
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from offsets_auditor.logdir import page_cache

#: The blocks :meth:`ReadOnlyFile.read_once` decides by: the reader's window (a multiple of
#: the page size).
READ_ONCE_BLOCK = 2 << 20
_PAGE = os.sysconf("SC_PAGE_SIZE")

#: Files bigger than this are not read whole by :func:`read_small_file`.
SMALL_FILE_LIMIT = 64 * 1024 * 1024


@dataclass(frozen=True)
class FileInfo:
    """What ``stat`` says about one directory entry. ``identity`` is (device, inode): a file the
    broker replaces under the same name (a cleaned segment swapped in) has another."""

    path: Path
    name: str
    is_dir: bool
    size: int
    mtime_ms: int
    identity: tuple[int, int] = (0, 0)


class FileChangedError(OSError):
    """The file under a name is not the one that was listed there: the broker renamed or
    replaced it in between (a running broker's cleaner does so all the time)."""

    def __init__(self, path: Path) -> None:
        super().__init__(errno.ESTALE, "replaced since it was listed", str(path))


def is_permission_error(error: OSError) -> bool:
    """The auditor's own user may not read this (``EACCES``, ``EPERM``): not a fact about the
    broker, which reads its files as its own user."""
    return error.errno in (errno.EACCES, errno.EPERM)


def access_words(path: Path) -> str:
    """Who may read ``path``, as ``ls -l`` would say it: ``owner kafka:kafka, mode 0750`` (ids
    where no name is known; empty when even ``stat`` fails)."""
    try:
        st = os.stat(path)
    except OSError:
        return ""
    return f"owner {_user(st.st_uid)}:{_group(st.st_gid)}, mode {stat.S_IMODE(st.st_mode):04o}"


def _user(uid: int) -> str:
    import pwd

    try:
        return pwd.getpwuid(uid).pw_name
    except KeyError:
        return str(uid)


def _group(gid: int) -> str:
    import grp

    try:
        return grp.getgrgid(gid).gr_name
    except KeyError:
        return str(gid)


def list_dir(path: Path) -> list[FileInfo]:
    """The entries of ``path`` sorted by name. Names that are not valid UTF-8 come back with
    Python's surrogate escapes (``os.fsdecode``) and can be shown with ``repr``."""
    entries = []
    with os.scandir(path) as scan:
        for entry in scan:
            try:
                st = entry.stat(follow_symlinks=True)
            except OSError:
                continue
            entries.append(
                FileInfo(
                    path=Path(entry.path),
                    name=entry.name,
                    is_dir=stat.S_ISDIR(st.st_mode),
                    size=st.st_size,
                    mtime_ms=st.st_mtime_ns // 1_000_000,
                    identity=(st.st_dev, st.st_ino),
                )
            )
    return sorted(entries, key=lambda e: e.name)


def file_info(path: Path) -> FileInfo:
    st = os.stat(path)
    return FileInfo(
        path=path,
        name=path.name,
        is_dir=stat.S_ISDIR(st.st_mode),
        size=st.st_size,
        mtime_ms=st.st_mtime_ns // 1_000_000,
        identity=(st.st_dev, st.st_ino),
    )


def is_readable_file(path: Path) -> bool:
    """Whether ``path`` is a regular file (not a directory, a FIFO, a device) this process may
    read."""
    try:
        st = os.stat(path)
    except OSError:
        return False
    return stat.S_ISREG(st.st_mode) and os.access(path, os.R_OK)


def read_small_file(path: Path, limit: int = SMALL_FILE_LIMIT) -> bytes:
    """The whole content of a small file (a checkpoint, ``meta.properties``, an index).

    Raises ``OSError`` when the file is missing or unreadable and ``ValueError`` when it is
    larger than ``limit`` bytes.
    """
    with ReadOnlyFile(path) as f:
        if f.size > limit:
            raise ValueError(f"{path}: {f.size} bytes, more than the {limit} bytes read whole")
        return f.read_at(0, f.size)


class ReadOnlyFile:
    """A file opened ``O_RDONLY`` and read with ``pread``: no locks, no mmap, no writes.

    With ``expect`` (a listed ``FileInfo.identity``), a file that is not that one raises
    :class:`FileChangedError`. ``size`` is the size at open; with ``frozen``, reads stop there,
    so a file being appended to (the active segment) reads as it was when opened; otherwise
    reads go to the end of the file as it is (a growing server.log). With ``end`` too (which
    implies ``frozen``), ``size`` and reads stop there as well: a segment read as it was
    listed, though appended to since (:func:`open_as_listed`)."""

    def __init__(
        self,
        path: Path,
        expect: tuple[int, int] | None = None,
        *,
        frozen: bool = False,
        end: int | None = None,
    ) -> None:
        self.path = path
        flags = os.O_RDONLY | getattr(os, "O_CLOEXEC", 0)
        self._fd = os.open(path, flags)
        st = os.fstat(self._fd)
        if expect is not None and (st.st_dev, st.st_ino) != expect:
            os.close(self._fd)
            self._fd = -1
            raise FileChangedError(path)
        self.identity = (st.st_dev, st.st_ino)
        self.size = st.st_size if end is None else min(st.st_size, end)
        self._end = self.size if frozen or end is not None else None
        self._once = False
        #: per block of READ_ONCE_BLOCK bytes, whether it was mostly out of the page cache
        #: before the first read once (None: the kernel cannot tell, or not asked yet)
        self._ours: list[bool] | None = None
        self._probed = False
        self._from_disk = False  # without blocks: a read found its pages not in the page cache

    def read_once(self) -> None:
        """From now on, what a read brings into the page cache is dropped once it is read. Call
        it before the first read: that read first asks the page cache (``cachestat``, Linux
        6.5+) which blocks of :data:`READ_ONCE_BLOCK` bytes it holds, before any readahead of
        ours could blur the answer, and each read drops what it read of the blocks most of
        whose pages were not there (a block the cache mostly held stays, though a page of it
        was reclaimed). Where the kernel cannot tell, a read whose first or last page is not in
        the page cache starts the dropping, and every read after it is dropped too (the
        kernel's readahead brought them). Only for files no one writes to (a rolled segment):
        dropping a range starts the writeback of its dirty pages."""
        self._once = True

    def read_at(self, position: int, length: int) -> bytes:
        """Up to ``length`` bytes from ``position``; fewer at the end of the file (with
        ``frozen``: its size when opened)."""
        if self._end is not None:
            length = max(min(length, self._end - position), 0)
        if self._once and not self._probed and length > 0:
            self._ours = page_cache.mostly_uncached_blocks(self._fd, self.size, READ_ONCE_BLOCK)
            self._probed = True
        if self._once and self._ours is None and not self._from_disk and length > 0:
            self._from_disk = not self._first_and_last_cached(position, length)
        start = position
        chunks = []
        while length > 0:
            chunk = os.pread(self._fd, min(length, 1 << 30), position)
            if not chunk:
                break
            chunks.append(chunk)
            position += len(chunk)
            length -= len(chunk)
        if self._once and position > start:
            self._drop_read(start, position)
        return chunks[0] if len(chunks) == 1 else b"".join(chunks)

    def _drop_read(self, start: int, end: int) -> None:
        """Drop the pages of ``[start, end)`` (just read) that ``read_once`` says are ours:
        the blocks' pages that range touches, whole, or with no blocks known, the range."""
        if self._ours is None:
            if self._from_disk:
                os.posix_fadvise(self._fd, start, end - start, os.POSIX_FADV_DONTNEED)
            return
        for index in range(start // READ_ONCE_BLOCK, (end - 1) // READ_ONCE_BLOCK + 1):
            if index < len(self._ours) and self._ours[index]:
                low = max(start, index * READ_ONCE_BLOCK) // _PAGE * _PAGE
                high = min(end, (index + 1) * READ_ONCE_BLOCK)
                high = -(-high // _PAGE) * _PAGE  # a page read in part is dropped too
                os.posix_fadvise(self._fd, low, high - low, os.POSIX_FADV_DONTNEED)

    def _first_and_last_cached(self, position: int, length: int) -> bool:
        """Where the kernel has no ``cachestat``: whether the range's first and last pages are
        in the page cache, by a one-byte read of each that does not wait for the disk
        (``RWF_NOWAIT``; on a miss the kernel starts the readahead the read that follows needs
        anyway, and a fast disk may finish it first, so a miss can pass for a hit and its pages
        stay). True where the kernel cannot tell (nothing is dropped then)."""
        length = min(length, self.size - position)
        if length <= 0:
            return True
        probe = bytearray(1)
        for at in (position, position + length - 1):
            try:
                if os.preadv(self._fd, [probe], at, os.RWF_NOWAIT) == 0:
                    return True  # past the end of the file
            except BlockingIOError:
                return False
            except OSError:  # RWF_NOWAIT unsupported here
                return True
        return True

    def close(self) -> None:
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1

    def __enter__(self) -> ReadOnlyFile:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def open_as_listed(path: Path, identity: tuple[int, int], size: int) -> ReadOnlyFile:
    """The snapshot rule, the same for ``audit`` and on the scan's executors: a file read as
    it was listed, with its ``identity`` and ``size`` then. It must still be that file (else
    :class:`FileChangedError`, or ``FileNotFoundError`` when it is gone), and it reads up to
    its listed size, whatever the broker appends afterwards (the active segment); a file
    found shorter than listed (truncated since) reads shorter."""
    return ReadOnlyFile(path, expect=identity, end=size)


@dataclass
class DirSnapshot:
    """A directory's entries and some of its files, opened together: what the files held when
    listed stays readable through them whatever is renamed or deleted afterwards. ``attempts``
    is how many listings it took; ``settled`` is False when the directory kept changing (or
    stayed ``unsettled``) through every attempt, and the last listing was kept anyway."""

    listing: list[FileInfo]
    files: dict[str, ReadOnlyFile] = field(default_factory=dict)
    attempts: int = 1
    settled: bool = True

    def close(self) -> None:
        for f in self.files.values():
            f.close()
        self.files.clear()

    def __enter__(self) -> DirSnapshot:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def snapshot_dir(
    path: Path,
    opened: Callable[[str], bool],
    unsettled: Callable[[Sequence[FileInfo]], bool] = lambda listing: False,
    *,
    attempts: int = 8,
    pause_seconds: float = 0.01,
) -> DirSnapshot:
    """List ``path``, open the files whose names ``opened`` selects, list again: when both
    listings name the same files with the same identities (and ``unsettled`` does not say a
    change is half done), that is the snapshot. Otherwise close, pause, try again, up to
    ``attempts`` times. Raises ``OSError`` only if ``path`` itself cannot be listed."""
    snapshot = DirSnapshot([])
    for attempt in range(1, attempts + 1):
        first = list_dir(path)
        snapshot = DirSnapshot(first, attempts=attempt, settled=False)
        stable = not unsettled(first)
        last = attempt == attempts
        for info in first:
            if (stable or last) and not info.is_dir and opened(info.name):
                try:
                    snapshot.files[info.name] = open_as_listed(info.path, info.identity, info.size)
                except OSError as error:
                    if error.errno in (errno.ENOENT, errno.ESTALE):
                        stable = False  # renamed or replaced since the listing
                    # else: unreadable; said by whoever reads it (the listing keeps it)
        if stable and _identities(list_dir(path)) == _identities(first):
            snapshot.settled = True
            return snapshot
        if attempt < attempts:
            snapshot.close()
            time.sleep(pause_seconds * attempt)
    return snapshot


def _identities(listing: Sequence[FileInfo]) -> dict[str, tuple[int, int]]:
    return {info.name: info.identity for info in listing}


def iter_files(paths: list[Path]) -> Iterator[Path]:
    """Expand directories into the files below them (sorted); files pass through."""
    for path in paths:
        if path.is_dir():
            for root, dirs, files in os.walk(path):
                dirs.sort()
                for name in sorted(files):
                    yield Path(root) / name
        else:
            yield path


def iter_lines(path: Path, chunk_bytes: int = 1 << 20) -> Iterator[str]:
    """The lines of a text file (a broker's ``server.log``), read in bounded chunks; bytes that
    are not UTF-8 are replaced, never fatal."""
    with ReadOnlyFile(path) as f:
        position = 0
        pending = b""
        while True:
            chunk = f.read_at(position, chunk_bytes)
            if not chunk:
                break
            position += len(chunk)
            lines = (pending + chunk).split(b"\n")
            pending = lines.pop()
            for line in lines:
                yield line.decode("utf-8", "replace")
        if pending:
            yield pending.decode("utf-8", "replace")


# --- Whether a process holds a lock on a file (the broker's ``.lock``) ------------------------

#: ``struct flock`` of Linux on LP64 (x86_64, aarch64, ...): l_type, l_whence (short), l_start,
#: l_len (off_t), l_pid (pid_t), padded to its 8-byte alignment (32 bytes).
_FLOCK = struct.Struct("@hhqqi")
_FLOCK_SIZE = struct.calcsize("@hhqqi0q")
#: the kernel's lock table (``fs/locks.c`` ``lock_get_status``): id, class, mode, type, pid,
#: ``MAJOR:MINOR:INODE`` (device numbers in hex), start, end; "->" marks a blocked waiter
_PROC_LOCK = re.compile(
    r"^\d+:\s+(?P<cls>POSIX|OFDLCK|FLOCK|LEASE|DELEG)\s+\S+\s+(?P<type>READ|WRITE|UNLCK)\s+"
    r"(?P<pid>-?\d+)\s+(?P<major>[0-9a-f]+):(?P<minor>[0-9a-f]+):(?P<inode>\d+)\s"
)


@dataclass(frozen=True, slots=True)
class HeldLock:
    """A lock some process holds on a file, as the kernel says. ``pid`` is 0 for a holder in
    another PID namespace (the kernel hides it) and -1 for an open file description lock."""

    pid: int
    write: bool
    seen_by: str  # "fcntl(F_GETLK)" or "/proc/locks"


@dataclass(frozen=True, slots=True)
class LockProbe:
    """What can be told, without taking it, of a lock on ``path``.

    ``identity`` is None when there is no such file. ``getlk`` is the lock ``fcntl(F_GETLK)``
    found conflicting with a read lock over the whole file (None: none, or not asked);
    ``getlk_error`` says why it was not asked (None: asked). ``proc_locks`` are the POSIX and
    OFD locks ``/proc/locks`` lists on the file's device and inode (None: unreadable).
    ``filesystem`` is the type of the filesystem holding it (``/proc/self/mountinfo``), None
    when not found."""

    path: Path
    identity: tuple[int, int] | None
    getlk: HeldLock | None = None
    getlk_error: str | None = None
    proc_locks: tuple[HeldLock, ...] | None = None
    filesystem: str | None = None


def probe_lock(path: Path) -> LockProbe:
    """Ask the kernel whether a process holds a lock on ``path``, without taking one.

    The file is opened ``O_RDONLY | O_NONBLOCK`` (only if it is a regular file: a FIFO would
    block) and asked with ``fcntl(F_GETLK)`` whether a read lock over the whole file could be
    placed: the kernel answers with a conflicting lock if one is held (a POSIX record lock, as
    the JVM's ``FileChannel.tryLock`` takes, or an open file description lock), and places
    nothing. Nothing is read or written; the descriptor is closed at once (closing it releases
    no one's lock: POSIX locks belong to the process that took them, and this one holds none).
    ``/proc/locks`` is read too, for the holder's pid (it lists only holders visible in this
    PID namespace, so only F_GETLK can tell that no lock is held). Linux only (the
    ``struct flock`` layout of LP64); elsewhere ``getlk_error`` says so."""
    try:
        st = os.stat(path)
    except OSError:
        return LockProbe(path, None, filesystem=filesystem_type(path.parent))
    identity = (st.st_dev, st.st_ino)
    getlk: HeldLock | None = None
    error: str | None = None
    if sys.platform != "linux" or struct.calcsize("l") != 8:
        error = f"fcntl(F_GETLK) is not asked on {sys.platform} ({struct.calcsize('l') * 8}-bit)"
    elif not stat.S_ISREG(st.st_mode):
        error = "not a regular file"
    else:
        try:
            getlk = _getlk(path, identity)
        except OSError as failure:
            error = f"fcntl(F_GETLK) failed: {failure.strerror or failure}"
    return LockProbe(
        path, identity, getlk, error, _proc_locks(identity), filesystem_type(path.parent)
    )


def _getlk(path: Path, identity: tuple[int, int]) -> HeldLock | None:
    import fcntl

    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    try:
        st = os.fstat(fd)
        if (st.st_dev, st.st_ino) != identity:
            raise FileChangedError(path)
        query = _FLOCK.pack(fcntl.F_RDLCK, os.SEEK_SET, 0, 0, 0).ljust(_FLOCK_SIZE, b"\0")
        answer = fcntl.fcntl(fd, fcntl.F_GETLK, query)
    finally:
        os.close(fd)
    lock_type, _, _, _, pid = _FLOCK.unpack_from(answer)
    if lock_type == fcntl.F_UNLCK:
        return None
    return HeldLock(pid, lock_type == fcntl.F_WRLCK, "fcntl(F_GETLK)")


def _proc_locks(identity: tuple[int, int]) -> tuple[HeldLock, ...] | None:
    """The POSIX and OFD locks held on the file ``identity`` (device, inode) that
    ``/proc/locks`` lists (waiters left out); None when it cannot be read."""
    device, inode = identity
    wanted = (os.major(device), os.minor(device), inode)
    held = []
    try:
        for line in iter_lines(Path("/proc/locks")):
            match = _PROC_LOCK.match(line)
            if match is None or match["cls"] not in ("POSIX", "OFDLCK"):
                continue
            found = (int(match["major"], 16), int(match["minor"], 16), int(match["inode"]))
            if found == wanted:
                held.append(HeldLock(int(match["pid"]), match["type"] == "WRITE", "/proc/locks"))
    except OSError:
        return None
    return tuple(held)


def filesystem_type(path: Path) -> str | None:
    """The type of the filesystem ``path`` is on (``ext4``, ``nfs4``, ...): the mount in
    ``/proc/self/mountinfo`` with the longest mount point holding ``path``'s real path. None
    when that cannot be read (not Linux) or no mount holds it."""
    try:
        real = os.path.realpath(path)
        best: tuple[int, str] | None = None
        for line in iter_lines(Path("/proc/self/mountinfo")):
            fields = line.split(" ")
            if " - " not in line or len(fields) < 5:
                continue
            point = _unescape_mount(fields[4])
            inside = real == point or real.startswith(point.rstrip("/") + "/")
            if inside and (best is None or len(point) >= best[0]):
                kind = line.split(" - ", 1)[1].split(" ", 1)[0]
                best = (len(point), kind)
    except OSError:
        return None
    return None if best is None else best[1]


def _unescape_mount(text: str) -> str:
    """A mountinfo path field: space, tab, newline and backslash are octal escapes."""
    return re.sub(r"\\([0-7]{3})", lambda m: chr(int(m.group(1), 8)), text)
