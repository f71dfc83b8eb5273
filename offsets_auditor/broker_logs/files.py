"""A broker log and its rotated files, read oldest first as one stream of lines.

How the files come to be (Kafka's own ``config/log4j.properties``, 0.9.0.1 to 3.9, and
``config/log4j2.yaml`` of 4.x):

- log4j 1's ``DailyRollingFileAppender`` with ``DatePattern='.'yyyy-MM-dd-HH``: at the top of
  each hour the file is renamed ``log-cleaner.log.2026-11-25-19`` and a new one is created
  (any ``DatePattern``: the suffix is the date of the period it holds); 4.x's log4j2
  ``RollingFile`` with ``filePattern log-cleaner.log.%d{yyyy-MM-dd-HH}`` names them alike;
- log4j 1's ``RollingFileAppender`` (``MaxFileSize``, ``MaxBackupIndex``): ``.1`` is the newest
  rotated file, ``.N`` the oldest;
- logrotate: ``.1``, ``.2.gz`` ... (``compress``), or ``-YYYYMMDD`` with ``dateext``; with
  ``copytruncate`` the live file is copied and then truncated in place.

Order, oldest first: dated files by their date, then numbered ones from the highest number
down, then the live file. Gzip files are decompressed as a stream.

A rotation while the files are read loses nothing and reads nothing twice: every file of the
set is opened when it is listed (a descriptor keeps reading a file renamed or deleted since),
and when the live file is done, its path is looked at again: another file there (renamed
away) is read after the rest of the held one; the same file grown shorter than what was read
(copytruncate) is read again from its start, after the copy's part that had not been read.

Every byte goes through :class:`offsets_auditor.logdir.fs.ReadOnlyFile`: ``O_RDONLY``, ``pread``.
"""

from __future__ import annotations

import re
import zlib
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from offsets_auditor.findings import Finding, FindingKind, Severity
from offsets_auditor.logdir import fs

CHUNK_BYTES = 1 << 20
#: A line longer than this is cut (the rest of it is skipped): a log4j line never is.
MAX_LINE_BYTES = 1 << 20
#: How many rotations during one read are followed before the read stops.
MAX_ROTATIONS = 16
#: Compressed bytes fed to zlib at a time (how closely a damaged spot is placed).
GZIP_STEP = 4096
#: The first bytes of a file that tell it from what was written at its path after a cut.
FINGERPRINT_BYTES = 64

_DATED = re.compile(r"^[.-](?P<date>\d{4}-?\d{2}-?\d{2}(?:[-_T]?\d{2}){0,3})$")
_NUMBERED = re.compile(r"^\.(?P<n>\d+)$")


@dataclass(frozen=True, slots=True)
class SourcedLine:
    """One line (without its newline) of a broker log: ``file`` as named in the set, the
    1-based ``line`` number in that file and the byte ``position`` where it starts (in the
    decompressed bytes for a ``.gz``)."""

    text: str
    file: str
    line: int
    position: int


def rotation_key(live_name: str, name: str) -> tuple[int, tuple[int, ...]] | None:
    """Where ``name`` sits among ``live_name``'s rotated files (smaller: older), ``None`` for
    a file that is not one of them."""
    if not name.startswith(live_name):
        return None
    suffix = name[len(live_name) :]
    if suffix.endswith(".gz"):
        suffix = suffix[: -len(".gz")]
    if suffix == "":
        return (3, ())
    dated = _DATED.match(suffix)
    if dated is not None:
        # yyyyMMdd[HH[mm[ss]]] whatever the separators: compare as one number
        return (1, (int("".join(re.findall(r"\d", dated["date"])).ljust(14, "0")),))
    numbered = _NUMBERED.match(suffix)
    if numbered is not None:
        return (2, (-int(numbered["n"]),))
    return None


def rotated_set(path: Path) -> list[fs.FileInfo]:
    """``path`` and its rotated files, oldest first (the live file last, when it exists)."""
    try:
        listing = fs.list_dir(path.parent)
    except OSError:
        return []
    keyed = []
    for info in listing:
        if info.is_dir:
            continue
        key = rotation_key(path.name, info.name)
        if key is not None:
            keyed.append((key, info.name, info))
    return [info for _, _, info in sorted(keyed)]


@dataclass
class LogRead:
    """A read of a broker log's files: ``files`` those read, oldest first, each as the
    findings name it (the path given, or the rotated file's path beside it); ``problems`` the
    files (or bytes) that could not be read, as findings with file and byte position;
    ``notes`` say what rotations were seen."""

    files: list[str] = field(default_factory=list)
    problems: list[Finding] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def read_lines(
    paths: Sequence[Path], read: LogRead | None = None, *, chunk_bytes: int = CHUNK_BYTES
) -> Iterator[SourcedLine]:
    """The lines of ``paths`` (files given explicitly, oldest first, e.g. ``--cleaner-log``
    FILE...), each read whole, gzip or not. A file that cannot be read is a problem in
    ``read`` and the others are read."""
    read = read if read is not None else LogRead()
    for path in paths:
        try:
            handle = fs.ReadOnlyFile(path)
        except OSError as error:
            read.problems.append(_unreadable(str(path), error))
            continue
        read.files.append(str(path))
        with handle:
            yield from _file_lines(handle, str(path), read, chunk_bytes)


def read_rotated(
    path: Path, read: LogRead | None = None, *, chunk_bytes: int = CHUNK_BYTES
) -> Iterator[SourcedLine]:
    """The lines of ``path``'s whole rotated set, oldest first, following rotations that
    happen while it is read (see the module's docstring)."""
    read = read if read is not None else LogRead()
    opened = _open_set(path, read)
    live: fs.ReadOnlyFile | None = None
    try:
        for info, handle in opened:
            read.files.append(str(info.path))
            if info.name == path.name and not info.name.endswith(".gz"):
                live = handle
                break
            yield from _file_lines(handle, str(info.path), read, chunk_bytes)
        if live is None:
            return
        yield from _follow_live(path, live, read, chunk_bytes, {i.identity for i, _ in opened})
    finally:
        for _, handle in opened:
            handle.close()


def _open_set(path: Path, read: LogRead) -> list[tuple[fs.FileInfo, fs.ReadOnlyFile]]:
    """Open every file of the set as listed; a file renamed between the listing and its
    opening makes the listing start over (a few times)."""
    for _attempt in range(4):
        opened: list[tuple[fs.FileInfo, fs.ReadOnlyFile]] = []
        moved = False
        for info in rotated_set(path):
            try:
                opened.append((info, fs.ReadOnlyFile(info.path, expect=info.identity)))
            except FileNotFoundError:
                moved = True
            except fs.FileChangedError:
                moved = True
            except OSError as error:
                read.problems.append(_unreadable(str(info.path), error))
        if not moved:
            return opened
        for _, handle in opened:
            handle.close()
    read.notes.append(f"{path}: the rotated files kept changing while listed; read as last listed")
    return [
        (info, fs.ReadOnlyFile(info.path)) for info in rotated_set(path) if _readable(info.path)
    ]


def _readable(path: Path) -> bool:
    try:
        fs.ReadOnlyFile(path).close()
    except OSError:
        return False
    return True


def _follow_live(
    path: Path,
    live: fs.ReadOnlyFile,
    read: LogRead,
    chunk_bytes: int,
    seen: set[tuple[int, int]],
) -> Iterator[SourcedLine]:
    """Read the live file; then, as long as the path holds another file (or this one cut
    short), read what was added and the new file."""
    reader = _PlainLines(live, str(path), read)
    held: list[fs.ReadOnlyFile] = []
    try:
        yield from _follow(path, live, reader, read, chunk_bytes, seen, held)
    finally:
        for handle in held:
            handle.close()


def _follow(
    path: Path,
    live: fs.ReadOnlyFile,
    reader: _PlainLines,
    read: LogRead,
    chunk_bytes: int,
    seen: set[tuple[int, int]],
    held: list[fs.ReadOnlyFile],
) -> Iterator[SourcedLine]:
    for _rotation in range(MAX_ROTATIONS + 1):
        yield from reader.lines(chunk_bytes)
        try:
            now = fs.ReadOnlyFile(path)
        except OSError:
            yield from reader.flush()
            return  # renamed away and no new file yet: what the held file had is read
        if now.identity == live.identity:
            now.close()
            if now.size >= reader.position and not reader.cut:
                yield from reader.flush()
                return
            yield from _copy_tail(path, reader, read, chunk_bytes, seen)
            read.notes.append(f"{path}: truncated in place while read (copytruncate); read anew")
            reader = _PlainLines(live, str(path), read)
            continue
        yield from reader.lines(chunk_bytes)  # what was appended before the rename
        yield from reader.flush()
        read.notes.append(f"{path}: rotated while read; the new file at the path is read too")
        seen.add(live.identity)
        held.append(now)
        live = now
        reader = _PlainLines(live, str(path), read)
    read.problems.append(
        Finding(
            kind=FindingKind.LOG_ROTATING_TOO_FAST,
            severity=Severity.WARNING,
            detail=f"{path} was rotated more than {MAX_ROTATIONS} times while it was read;"
            " the read stopped there",
            file=str(path),
        )
    )


def _copy_tail(
    path: Path,
    reader: _PlainLines,
    read: LogRead,
    chunk_bytes: int,
    seen: set[tuple[int, int]],
) -> Iterator[SourcedLine]:
    """After a copytruncate: the part of the copy past what was read of the live file."""
    for info in reversed(rotated_set(path)):
        if info.identity in seen or info.name == path.name or info.name.endswith(".gz"):
            continue
        try:
            copy = fs.ReadOnlyFile(info.path, expect=info.identity)
        except OSError:
            continue
        with copy:
            if copy.size < reader.position:
                continue
            seen.add(copy.identity)
            tail = _PlainLines(copy, str(info.path), read)
            tail.position, tail.line = reader.position, reader.line
            tail.partial = reader.partial
            reader.partial = b""
            yield from tail.lines(chunk_bytes)
            yield from tail.flush()
            return
    yield from reader.flush()


class _PlainLines:
    """Lines of an uncompressed file from ``position`` to its current end. The file's first
    bytes are remembered: when they change under the same descriptor the file was cut and
    written again in place (copytruncate), and ``cut`` stops the read before any new byte."""

    def __init__(self, handle: fs.ReadOnlyFile, name: str, read: LogRead) -> None:
        self.handle = handle
        self.name = name
        self.read = read
        self.position = 0
        self.line = 0
        self.partial = b""
        self.fingerprint = b""
        self.cut = False

    def lines(self, chunk_bytes: int) -> Iterator[SourcedLine]:
        while not self.cut:
            chunk = self.handle.read_at(self.position, chunk_bytes)
            if not chunk:
                return
            if self.position == 0:
                self.fingerprint = chunk[:FINGERPRINT_BYTES]
            elif self.handle.read_at(0, len(self.fingerprint)) != self.fingerprint:
                self.cut = True
                return
            start = self.position - len(self.partial)
            self.position += len(chunk)
            yield from self._split(self.partial + chunk, start)

    def _split(self, data: bytes, start: int) -> Iterator[SourcedLine]:
        pieces = data.split(b"\n")
        self.partial = pieces.pop()
        if len(self.partial) > MAX_LINE_BYTES:
            self.partial = self.partial[:MAX_LINE_BYTES]
        for piece in pieces:
            self.line += 1
            yield SourcedLine(_decode(piece), self.name, self.line, start)
            start += len(piece) + 1

    def flush(self) -> Iterator[SourcedLine]:
        if self.partial:
            self.line += 1
            start = self.position - len(self.partial)
            text, self.partial = self.partial, b""
            yield SourcedLine(_decode(text), self.name, self.line, start)


def _file_lines(
    handle: fs.ReadOnlyFile, name: str, read: LogRead, chunk_bytes: int
) -> Iterator[SourcedLine]:
    head = handle.read_at(0, 2)
    if head != b"\x1f\x8b":
        plain = _PlainLines(handle, name, read)
        yield from plain.lines(chunk_bytes)
        yield from plain.flush()
        return
    yield from _gzip_lines(handle, name, read, chunk_bytes)


def _gzip_lines(
    handle: fs.ReadOnlyFile, name: str, read: LogRead, chunk_bytes: int
) -> Iterator[SourcedLine]:
    """A gzip file's lines, decompressed chunk by chunk (members one after the other)."""
    decompressor = zlib.decompressobj(wbits=31)
    position = 0  # compressed bytes consumed
    out = 0  # decompressed bytes seen
    partial = b""
    line = 0
    pending = b""
    in_member = False  # inside a gzip member not finished yet
    broken = False
    while not broken:
        chunk = pending or handle.read_at(position, chunk_bytes)
        if not pending:
            position += len(chunk)
        pending = b""
        if not chunk:
            break
        # fed in small pieces, so that a damaged spot is placed to within GZIP_STEP bytes
        consumed = position - len(chunk)
        for step in range(0, len(chunk), GZIP_STEP):
            piece = chunk[step : step + GZIP_STEP]
            try:
                data = decompressor.decompress(piece)
            except zlib.error as error:
                read.problems.append(
                    Finding(
                        kind=FindingKind.UNREADABLE_LOG,
                        severity=Severity.WARNING,
                        detail=f"{name}: not valid gzip in the {GZIP_STEP:,} bytes from here"
                        f" (after {out:,} decompressed bytes: {error}); the rest of the file"
                        " is skipped",
                        file=name,
                        position=consumed + step,
                    )
                )
                in_member = False
                broken = True
                break
            in_member = True
            if decompressor.eof:
                pending = decompressor.unused_data + chunk[step + GZIP_STEP :]
                decompressor = zlib.decompressobj(wbits=31)
                in_member = False
            start = out - len(partial)
            out += len(data)
            pieces = (partial + data).split(b"\n")
            partial = pieces.pop()[:MAX_LINE_BYTES]
            for text in pieces:
                line += 1
                yield SourcedLine(_decode(text), name, line, start)
                start += len(text) + 1
            if pending:
                break
    if in_member:
        read.problems.append(
            Finding(
                kind=FindingKind.TRUNCATED_LOG,
                severity=Severity.INFO,
                detail=f"{name}: the gzip stream ends early (after {out:,} decompressed bytes):"
                " a file still being compressed, or cut",
                file=name,
                position=position,
            )
        )
    if partial:
        yield SourcedLine(_decode(partial), name, line + 1, out - len(partial))


def _decode(raw: bytes) -> str:
    text = raw.decode("utf-8", "replace")
    return text[:-1] if text.endswith("\r") else text


def _unreadable(name: str, error: OSError) -> Finding:
    return Finding(
        kind=FindingKind.UNREADABLE_LOG,
        severity=Severity.WARNING,
        detail=f"{name}: cannot be read ({error.strerror or error})",
        file=name,
    )
