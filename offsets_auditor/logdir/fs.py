"""All file-system access of the core, read-only by construction.

The auditor runs against live broker log directories. Nothing here writes, renames, locks or
memory-maps a broker's file: files are opened ``O_RDONLY`` and read with ``pread`` in bounded
chunks (a file truncated under us just reads shorter; an ``mmap`` would raise SIGBUS instead).
Every other module takes bytes or typed values.
"""

from __future__ import annotations

import errno
import os
import stat
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

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

    def read_at(self, position: int, length: int) -> bytes:
        """Up to ``length`` bytes from ``position``; fewer at the end of the file (with
        ``frozen``: its size when opened)."""
        if self._end is not None:
            length = max(min(length, self._end - position), 0)
        chunks = []
        while length > 0:
            chunk = os.pread(self._fd, min(length, 1 << 30), position)
            if not chunk:
                break
            chunks.append(chunk)
            position += len(chunk)
            length -= len(chunk)
        return chunks[0] if len(chunks) == 1 else b"".join(chunks)

    def read_into(self, buffer: bytearray | memoryview, position: int) -> int:
        """Fill ``buffer`` from ``position``; returns the number of bytes read (short at EOF)."""
        view = memoryview(buffer)
        done = 0
        while done < len(view):
            n = os.preadv(self._fd, [view[done:]], position + done)
            if n == 0:
                break
            done += n
        return done

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
