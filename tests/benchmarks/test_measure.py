"""``benchmarks.measure``: the disk columns count what a run really read from the disk."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from benchmarks import measure

MiB = 1 << 20


def _direct_read_supported(path: Path) -> bool:
    try:
        os.close(os.open(path, os.O_RDONLY | os.O_DIRECT))
    except OSError:
        return False
    return True


def test_a_read_past_the_page_cache_counts_as_disk_bytes(tmp_path: Path) -> None:
    data = tmp_path / "eight-mib"
    with data.open("wb") as out:
        out.write(os.urandom(8 * MiB))
        out.flush()
        os.fsync(out.fileno())
    if not measure._disks() or not _direct_read_supported(data):
        pytest.skip("no block device under the temporary directory to read past the cache")
    measured = measure.run(["dd", f"if={data}", "of=/dev/null", "bs=1M", "iflag=direct"])
    assert measured.returncode == 0, measured.stderr
    assert measured.disk_read_bytes >= 8 * MiB
    assert measured.iowait_seconds >= 0


def test_a_run_that_reads_nothing_from_disk_counts_little() -> None:
    measured = measure.run(["true"])
    assert measured.returncode == 0
    # machine-wide: another process may read a little meanwhile, never 8 MiB in a blink
    assert 0 <= measured.disk_read_bytes < 8 * MiB
