"""All file-system access of the core, read-only by construction.

The auditor runs against live broker log directories. Nothing here writes, renames, locks or
memory-maps a broker's file: files are opened ``O_RDONLY`` and read with ``pread`` in bounded
chunks (a file truncated under us just reads shorter; an ``mmap`` would raise SIGBUS instead).
Every other module takes bytes or typed values.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

#: Files bigger than this are not read whole by :func:`read_small_file`.
SMALL_FILE_LIMIT = 64 * 1024 * 1024


@dataclass(frozen=True)
class FileInfo:
    """What ``stat`` says about one directory entry."""

    path: Path
    name: str
    is_dir: bool
    size: int
    mtime_ms: int


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
    """A file opened ``O_RDONLY`` and read with ``pread``: no locks, no mmap, no writes."""

    def __init__(self, path: Path) -> None:
        self.path = path
        flags = os.O_RDONLY | getattr(os, "O_CLOEXEC", 0)
        self._fd = os.open(path, flags)
        self.size = os.fstat(self._fd).st_size

    def read_at(self, position: int, length: int) -> bytes:
        """Up to ``length`` bytes from ``position``; fewer at the end of the file."""
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
