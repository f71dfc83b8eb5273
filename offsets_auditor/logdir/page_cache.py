"""Whether a range of an open file is in the page cache, as the kernel counts it: ``cachestat``
(Linux 6.5+), which reads nothing, maps nothing and starts no readahead.

A read that does not wait for the disk (``RWF_NOWAIT``) cannot tell it: on a miss it starts
the readahead, and where the disk answers fast (a virtual disk backed by the host's cache) the
read often finds its pages already read in and succeeds, as if they had been cached.
"""

from __future__ import annotations

import ctypes
import mmap
import sys
from collections.abc import Callable

#: ``cachestat``'s number in the generic syscall table (x86-64 and arm64 alike).
_CACHESTAT = 451


class _Range(ctypes.Structure):
    _fields_ = [("off", ctypes.c_uint64), ("len", ctypes.c_uint64)]


class _Stat(ctypes.Structure):
    _fields_ = [
        ("nr_cache", ctypes.c_uint64),
        ("nr_dirty", ctypes.c_uint64),
        ("nr_writeback", ctypes.c_uint64),
        ("nr_evicted", ctypes.c_uint64),
        ("nr_recently_evicted", ctypes.c_uint64),
    ]


def _syscall() -> Callable[..., int] | None:
    if sys.platform != "linux":
        return None
    try:
        call = ctypes.CDLL(None, use_errno=True).syscall
    except (OSError, AttributeError):
        return None
    call.restype = ctypes.c_long
    return call


_SYSCALL = _syscall()


def cached_pages(fd: int, position: int, length: int) -> tuple[int, int] | None:
    """``(cached, pages)``: how many of the pages of ``length`` bytes from ``position`` are in
    the page cache, of how many; None where the kernel cannot tell (before Linux 6.5, a file
    system without a page cache, a sandbox that forbids the call)."""
    if _SYSCALL is None or length <= 0:
        return None
    first = position // mmap.PAGESIZE
    pages = (position + length - 1) // mmap.PAGESIZE - first + 1
    stat = _Stat()
    asked = _Range(position, length)
    failed = _SYSCALL(
        ctypes.c_long(_CACHESTAT),
        ctypes.c_uint(fd),
        ctypes.byref(asked),
        ctypes.byref(stat),
        ctypes.c_uint(0),
    )
    if failed != 0:
        return None
    return min(int(stat.nr_cache), pages), pages


def mostly_uncached_blocks(fd: int, size: int, block: int) -> list[bool] | None:
    """For each ``block`` bytes of the file's first ``size`` (a last block may be shorter),
    whether fewer than half of its pages are in the page cache; None where the kernel cannot
    tell. ``block`` is a multiple of the page size."""
    if size <= 0:
        return []
    blocks = []
    for start in range(0, size, block):
        counted = cached_pages(fd, start, min(block, size - start))
        if counted is None:
            return None
        cached, pages = counted
        blocks.append(2 * cached < pages)
    return blocks
