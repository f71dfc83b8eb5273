"""Per-segment results kept between scans (``RESULTS/cache``).

A rolled segment never changes until the cleaner replaces it (a new file, another inode), so a
segment whose fingerprint is unchanged gives the same result: its size, its mtime and an xxhash
of its first and last 64 KiB, with what the result also depends on (this code, the loader's rules
and start offset, the reader). The active segment is fingerprinted as listed: once the broker
appends to it, its size and mtime differ and it is read again.

Entries are written by the executors that read the segments (tmp file + rename) and read by the
ones that fold each partition, memory-mapped (``store``, ``load``: the results' numpy columns
are never copied into the process, and stay pages the kernel can drop). The per-segment results
travel through the results dir, not through Spark's shuffle (a partition's results can be far
larger than the JVM's buffers). So on a cluster ``--out`` must be a filesystem every executor
sees, as the log dirs are.
"""

from __future__ import annotations

import contextlib
import mmap
import os
import pickle
import shutil
import struct
import tempfile
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any, Final

import xxhash

import offsets_auditor
from offsets_auditor.logdir import fs

_EDGE: Final = 64 * 1024


def code_digest(root: Path = Path(offsets_auditor.__file__).parent) -> str:
    """A digest of the code under ``root`` (Python and native; by default the core's): results
    of other code are not reused."""
    digest = xxhash.xxh3_128()
    for path in sorted(root.rglob("*")):
        if path.suffix in (".py", ".so", ".c", ".h") and path.is_file():
            digest.update(str(path.relative_to(root)).encode())
            digest.update(path.read_bytes())
    return digest.hexdigest()


def context_digest(*parts: Any) -> str:
    """A digest of what a segment's result depends on besides its bytes (reprs of frozen
    dataclasses and plain values)."""
    return xxhash.xxh3_128(repr(parts).encode("utf-8", "backslashreplace")).hexdigest()


def segment_key(source: fs.ReadOnlyFile, size: int, mtime_ms: int, context: str) -> str:
    """The cache key of the segment open in ``source``, as listed (``size``, ``mtime_ms``)."""
    digest = xxhash.xxh3_128()
    digest.update(f"{context}:{size}:{mtime_ms}:".encode())
    digest.update(source.read_at(0, _EDGE))
    digest.update(source.read_at(max(size - _EDGE, 0), _EDGE))
    return digest.hexdigest()


#: An entry: ``_MAGIC`` and the number of parts (``_HEAD``); per part, its pickle's length and
#: number of buffers (``_PART``) and each buffer's length; then each part's pickle and buffers,
#: each at a multiple of ``_ALIGN``. A part is loaded without unpickling the others.
_SUFFIX: Final = ".res"
_MAGIC: Final = b"OARES002"
_HEAD: Final = struct.Struct("<8sQ")
_PART: Final = struct.Struct("<QQ")
_LENGTH: Final = struct.Struct("<Q")
_ALIGN: Final = 64


def exists(cache: Path, key: str) -> bool:
    return (cache / f"{key}{_SUFFIX}").is_file()


def store(cache: Path, key: str, *parts: Any) -> bool:
    """Keep ``parts`` under ``key``, each pickled apart (so that :func:`load` takes one
    without the others) with its numpy arrays written as they are, out of the pickle (so that
    :func:`load` maps them instead of copying); False when the cache cannot be written."""
    buffers: list[pickle.PickleBuffer] = []
    index = [_HEAD.pack(_MAGIC, len(parts))]
    sections: list[bytes | memoryview] = []
    for part in parts:
        mine: list[pickle.PickleBuffer] = []
        data = pickle.dumps(part, protocol=5, buffer_callback=mine.append)
        buffers.extend(mine)
        raws = [b.raw() for b in mine]
        index.append(_PART.pack(len(data), len(raws)))
        index.extend(_LENGTH.pack(raw.nbytes) for raw in raws)
        sections.extend([data, *raws])
    target = cache / f"{key}{_SUFFIX}"
    tmp = cache / f".{key}.{os.getpid()}.tmp"
    try:
        cache.mkdir(parents=True, exist_ok=True)
        with open(tmp, "wb") as out:
            out.write(b"".join(index))
            for section in sections:
                out.write(b"\0" * (-out.tell() % _ALIGN))
                out.write(section)
        os.replace(tmp, target)
        return True
    except OSError:
        with contextlib.suppress(OSError):
            tmp.unlink()
        return False
    finally:
        for b in buffers:
            b.release()


def load(cache: Path, key: str, part: int = 0) -> Any | None:
    """Part ``part`` of what is kept under ``key``, its arrays read-only views of the entry's
    pages (mapped, not read: the kernel pages them in as they are used, and may drop them
    again); None when the entry is gone or unreadable."""
    try:
        with open(cache / f"{key}{_SUFFIX}", "rb") as f:
            mapped = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
    except (OSError, ValueError):
        return None
    view = memoryview(mapped)
    try:
        magic, count = _HEAD.unpack_from(view)
        if magic != _MAGIC or not 0 <= part < count:
            return None
        at = _HEAD.size
        sizes: list[list[int]] = []  # per part: its pickle's length, then its buffers'
        for _ in range(count):
            length, buffers = _PART.unpack_from(view, at)
            at += _PART.size
            lengths = [_LENGTH.unpack_from(view, at + i * _LENGTH.size)[0] for i in range(buffers)]
            at += buffers * _LENGTH.size
            sizes.append([length, *lengths])
        for before in sizes[:part]:
            for size in before:
                at += -at % _ALIGN + size
        sections = []
        for size in sizes[part]:
            at += -at % _ALIGN
            sections.append(view[at : at + size])
            at += size
        return pickle.loads(sections[0], buffers=sections[1:])
    except (struct.error, pickle.UnpicklingError, EOFError, ValueError):
        return None


@contextlib.contextmanager
def scratch(cache: Path) -> Iterator[Path | None]:
    """A directory of the cache's filesystem for what one segment's read writes before its
    entry is stored (its columns), removed afterwards; None when none can be made."""
    try:
        cache.mkdir(parents=True, exist_ok=True)
        directory = Path(tempfile.mkdtemp(prefix=".scratch-", dir=cache))
    except OSError:
        yield None
        return
    try:
        yield directory
    finally:
        shutil.rmtree(directory, ignore_errors=True)


def prune(cache: Path, used: Iterable[str]) -> int:
    """Remove the entries this run did not use (their segments are gone or replaced)."""
    keep = {f"{key}{_SUFFIX}" for key in used}
    removed = 0
    if not cache.is_dir():
        return 0
    for entry in cache.iterdir():
        if entry.name.startswith(".scratch-"):  # left by a read that was killed
            shutil.rmtree(entry, ignore_errors=True)
        elif entry.name not in keep:
            with contextlib.suppress(OSError):
                entry.unlink()
                removed += 1
    return removed


def dumps(value: Any) -> bytes:
    return pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)


def loads(payload: bytes) -> Any:
    return pickle.loads(payload)
