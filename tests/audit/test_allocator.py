"""``audit.allocator.keep_freed_memory``: a block freed and allocated again is the same memory,
not new pages the kernel faults in and zeroes each time (what every chunk of the audit did)."""

from __future__ import annotations

import subprocess
import sys

import pytest

from offsets_auditor.audit.allocator import keep_freed_memory

#: a chunk's columns: 8 blocks of 4 MiB allocated and written, then all freed, 20 times over;
#: prints the minor page faults it took
CHURN = """
import resource, sys
import numpy as np
from offsets_auditor.audit.allocator import keep_freed_memory
if sys.argv[1] == "kept":
    assert keep_freed_memory()
def chunk():
    blocks = [np.ones(1 << 19) for _ in range(8)]  # 4 MiB each, written
    del blocks
chunk()  # once, so that the first fault-in is not counted
before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
for _ in range(20):
    chunk()
print(resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before)
"""


def faults(mode: str) -> int:
    out = subprocess.run(
        [sys.executable, "-c", CHURN, mode], capture_output=True, text=True, check=True
    )
    return int(out.stdout)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's malloc")
def test_freed_blocks_are_reused_not_faulted_in_again() -> None:
    pages = 20 * (32 << 20) // 4096
    assert faults("default") >= pages // 4  # new pages: mmap'd, or the heap grown again
    assert faults("kept") < pages // 20  # the same heap memory each time


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's malloc")
def test_it_takes_both_settings_on_glibc() -> None:
    assert keep_freed_memory() is True
