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
import os
import pickle
import shutil
import tempfile
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any, Final

import xxhash

import offsets_auditor
from offsets_auditor import mapped_pickle
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


_SUFFIX: Final = ".res"


def exists(cache: Path, key: str) -> bool:
    return (cache / f"{key}{_SUFFIX}").is_file()


def store(cache: Path, key: str, *parts: Any) -> bool:
    """Keep ``parts`` under ``key`` (``mapped_pickle``: each part pickled apart, so that
    :func:`load` takes one without the others, its numpy arrays written as they are, so that
    :func:`load` maps them instead of copying); False when the cache cannot be written."""
    target = cache / f"{key}{_SUFFIX}"
    tmp = cache / f".{key}.{os.getpid()}.tmp"
    try:
        cache.mkdir(parents=True, exist_ok=True)
        mapped_pickle.write(tmp, *parts)
        os.replace(tmp, target)
        return True
    except OSError:
        with contextlib.suppress(OSError):
            tmp.unlink()
        return False


def load(cache: Path, key: str, part: int = 0) -> Any | None:
    """Part ``part`` of what is kept under ``key``, its arrays read-only views of the entry's
    pages (mapped, not read: the kernel pages them in as they are used, and may drop them
    again); None when the entry is gone or unreadable."""
    try:
        return mapped_pickle.read(cache / f"{key}{_SUFFIX}", part)
    except (OSError, ValueError):
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
