"""Reading rolled segments leaves the page cache as it was (``fs.ReadOnlyFile.read_once``): the
pages an audit brings in are dropped again, the pages that were there stay. Checked on a copy
of a real broker's log dir, with the kernel's own answer (a read that does not wait for the
disk would not tell it: it starts a readahead), ``mincore``; skipped where the file system keeps
every page (tmpfs).

The page cache is the whole machine's: on some kernels a monitor reclaims idle pages on its own
(DAMON: ``kdamond``) or holds a page while it samples it, so a page may leave before the check
or stay after a drop. Each check therefore runs from a fresh start up to ``ATTEMPTS`` times and
passes on its first undisturbed attempt; what the auditor does is the same every time, so a
broken drop (or a drop of what was cached before) fails every attempt."""

from __future__ import annotations

import ctypes
import mmap
import os
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from offsets_auditor.audit.parallel import audit_log_dir_on
from offsets_auditor.audit.plan import AuditSettings, plan_audit
from offsets_auditor.logdir import fs, page_cache

LOG_DIR = Path(__file__).parent.parent / "fixtures/kafka-2.3.0/multi-pass/kafka-logs"
PARTITION = "__consumer_offsets-1"
NOW_MS = 1_790_000_000_000
#: Tries of a check before its failure counts (see the module docstring).
ATTEMPTS = 5


def cached_pages(path: Path) -> list[bool]:
    """For each page of the file, whether it is in the page cache (``mincore`` of a private
    mapping of the copy, which reads nothing: a probing read would start a readahead)."""
    page = mmap.PAGESIZE
    size = path.stat().st_size
    with path.open("rb") as f, mmap.mmap(f.fileno(), size, access=mmap.ACCESS_COPY) as mapped:
        anchor = ctypes.c_char.from_buffer(mapped)
        vector = (ctypes.c_ubyte * ((size + page - 1) // page))()
        failed = _LIBC.mincore(ctypes.c_void_p(ctypes.addressof(anchor)), size, vector)
        del anchor
    assert failed == 0, os.strerror(ctypes.get_errno())
    return [bool(v & 1) for v in vector]


_LIBC = ctypes.CDLL(None, use_errno=True)
_LIBC.mincore.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.POINTER(ctypes.c_ubyte)]


def evict(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
    finally:
        os.close(fd)


@pytest.fixture
def log_dir(tmp_path: Path) -> Path:
    """A copy of the log dir, every segment of the partition out of the page cache."""
    copy = tmp_path / "kafka-logs"
    shutil.copytree(LOG_DIR, copy)
    for segment in (copy / PARTITION).glob("*.log"):
        evict(segment)
        if any(cached_pages(segment)):
            pytest.skip("this file system keeps its pages in memory (tmpfs?)")
    return copy


def segments(log_dir: Path) -> list[Path]:
    found = sorted((log_dir / PARTITION).glob("*.log"))
    assert len(found) >= 3, "rolled segments and the active one"
    return found


def audit(log_dir: Path, jobs: int = 1) -> None:
    plan = plan_audit([log_dir], AuditSettings(), NOW_MS)
    audited = audit_log_dir_on(log_dir, plan, jobs=jobs)
    assert any(p.name == PARTITION and p.scan.records for p in audited.partitions)


def undisturbed(check: Callable[[], None]) -> None:
    """``check`` (which starts by evicting what it reads) until an attempt passes, at most
    ``ATTEMPTS`` times; the last attempt's failure is the test's."""
    for attempt in range(ATTEMPTS):
        try:
            check()
            return
        except AssertionError:
            if attempt == ATTEMPTS - 1:
                raise


def evict_all(files: list[Path]) -> None:
    for file in files:
        evict(file)


@pytest.mark.parametrize("jobs", [1, 2])
def test_an_audit_drops_the_pages_it_brought_in(log_dir: Path, jobs: int) -> None:
    """One segment of the rolled ones may keep pages; without ``read_once`` every one of them
    keeps them all."""
    *rolled, active = segments(log_dir)

    def check() -> None:
        evict_all([*rolled, active])
        audit(log_dir, jobs)
        kept = [segment.name for segment in rolled if any(cached_pages(segment))]
        assert len(kept) <= 1, kept
        # the active segment is read as any file (the broker may be writing to it)
        assert all(cached_pages(active))

    undisturbed(check)


def test_pages_in_the_cache_before_stay(log_dir: Path) -> None:
    first, *rest = segments(log_dir)

    def check() -> None:
        evict_all([first, *rest])
        first.read_bytes()
        assert all(cached_pages(first))
        audit(log_dir)
        assert all(cached_pages(first))
        assert sum(any(cached_pages(segment)) for segment in rest[:-1]) <= 1

    undisturbed(check)


def test_a_file_read_without_read_once_stays_cached(log_dir: Path) -> None:
    """What the tests above tell apart: a plain read leaves its pages in the cache."""
    segment = segments(log_dir)[0]

    def check() -> None:
        evict(segment)
        with fs.ReadOnlyFile(segment) as source:
            assert len(source.read_at(0, source.size)) == source.size
        assert all(cached_pages(segment))
        evict(segment)
        with fs.ReadOnlyFile(segment) as source:
            source.read_once()
            assert len(source.read_at(0, source.size)) == source.size
        assert not any(cached_pages(segment))

    undisturbed(check)


def test_cachestat_counts_every_page_of_a_range(log_dir: Path) -> None:
    """The probe ``read_once`` decides by: exact, and it brings nothing in (a read that does
    not wait for the disk passed evicted pages off as cached under load: issue 23's flaky CI)."""
    segment = segments(log_dir)[0]
    page = mmap.PAGESIZE

    def check() -> None:
        evict(segment)
        fd = os.open(segment, os.O_RDONLY)
        try:
            size = os.fstat(fd).st_size
            counted = page_cache.cached_pages(fd, 0, size)
            if counted is None:
                pytest.skip("this kernel has no cachestat (Linux 6.5+)")
            assert counted == (0, len(cached_pages(segment)))
            assert not any(cached_pages(segment))
            os.pread(fd, page, page)
            assert page_cache.cached_pages(fd, page, page) == (1, 1)
            assert page_cache.cached_pages(fd, page + 1, page - 1) == (1, 1)
            first = int(cached_pages(segment)[0])
            assert page_cache.cached_pages(fd, 0, 2 * page) == (1 + first, 2)
        finally:
            os.close(fd)
        evict(segment)
        assert not any(cached_pages(segment))

    undisturbed(check)


@pytest.fixture
def four_blocks(tmp_path: Path) -> Path:
    """A file of four of ``read_once``'s blocks, out of the page cache."""
    data = tmp_path / "segment"
    data.write_bytes(os.urandom(4 * fs.READ_ONCE_BLOCK))
    evict(data)
    if any(cached_pages(data)):
        pytest.skip("this file system keeps its pages in memory (tmpfs?)")
    return data


def read_once_in_windows(path: Path) -> None:
    """Read ``path`` once, in windows astride the blocks, as the reader's are."""
    with fs.ReadOnlyFile(path) as source:
        source.read_once()
        position = 0
        while position < source.size:
            position += len(source.read_at(position, fs.READ_ONCE_BLOCK - 3 * mmap.PAGESIZE))


def test_a_page_reclaimed_amid_cached_ones_drops_nothing_else(four_blocks: Path) -> None:
    """The kernel reclaims a cached page here and there on its own (seen here: 1-16 pages of a
    100 MiB segment in a minute, the machine idle); the read that meets such a hole must not
    take the cached pages after it along (issue 23: every `audit --jobs 2` of a cached 4 GiB
    partition dropped 50-100k of its pages)."""
    page = mmap.PAGESIZE
    hole = fs.READ_ONCE_BLOCK + 5 * page

    def check() -> None:
        four_blocks.read_bytes()
        fd = os.open(four_blocks, os.O_RDONLY)
        try:
            os.posix_fadvise(fd, hole, page, os.POSIX_FADV_DONTNEED)
        finally:
            os.close(fd)
        before = cached_pages(four_blocks)
        assert before.count(False) == 1 and not before[hole // page]
        read_once_in_windows(four_blocks)
        assert all(cached_pages(four_blocks))

    undisturbed(check)


def test_blocks_mostly_out_of_the_cache_are_dropped_the_others_stay(four_blocks: Path) -> None:
    block = fs.READ_ONCE_BLOCK
    pages_per_block = block // mmap.PAGESIZE

    def check() -> None:
        evict(four_blocks)
        fd = os.open(four_blocks, os.O_RDONLY)
        try:
            os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_RANDOM)  # no readahead past these reads
            os.pread(fd, block, 0)  # block 0 cached whole
            os.pread(fd, block // 4, 2 * block)  # block 2: a quarter of it
        finally:
            os.close(fd)
        before = cached_pages(four_blocks)
        read_once_in_windows(four_blocks)
        after = cached_pages(four_blocks)
        blocks = [after[i * pages_per_block : (i + 1) * pages_per_block] for i in range(4)]
        assert sum(before[:pages_per_block]) == pages_per_block
        assert sum(before[2 * pages_per_block : 3 * pages_per_block]) == pages_per_block // 4
        assert all(blocks[0])
        assert not any(blocks[1]) and not any(blocks[2]) and not any(blocks[3])

    undisturbed(check)
