"""A partition's cleaner and log-start checkpoint lines are read with its snapshot
(``logdir.open_partition``), not only with the log dir: on a running broker the cleaner swaps
cleaned segments in and then moves its checkpoint, often between the two reads."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from offsets_auditor.findings import FindingKind
from offsets_auditor.logdir import model as logdir_model
from offsets_auditor.logdir.model import (
    CHECKPOINT_ATTEMPTS,
    open_partition,
    read_log_dir,
)
from tests.conftest import FIXTURES

SOURCE = FIXTURES / "kafka-2.3.0/multi-pass/kafka-logs"
PARTITION = "__consumer_offsets-1"


@pytest.fixture
def log_dir(tmp_path: Path) -> Path:
    """The root files and one offsets partition of multi-pass (no cleaner checkpoint yet)."""
    copy = tmp_path / "kafka-logs"
    copy.mkdir()
    for path in SOURCE.iterdir():
        if path.is_file():
            shutil.copy2(path, copy / path.name)
    shutil.copytree(SOURCE / PARTITION, copy / PARTITION)
    return copy


def write_checkpoint(log_dir: Path, offset: int, name: str = "cleaner-offset-checkpoint") -> None:
    """As the broker does: a whole new file renamed over the old one."""
    tmp = log_dir / f"{name}.tmp"
    tmp.write_text(f"0\n1\n__consumer_offsets 1 {offset}\n")
    tmp.replace(log_dir / name)


def moved_findings(findings: list[Any]) -> list[str]:
    return [
        f.detail
        for f in findings
        if f.kind is FindingKind.CHANGED_WHILE_READ and "checkpoints" in f.detail
    ]


def test_the_log_dirs_lines_are_the_partitions(log_dir: Path) -> None:
    write_checkpoint(log_dir, 58950)
    write_checkpoint(log_dir, 19650, "log-start-offset-checkpoint")
    (listed,) = read_log_dir(log_dir).partitions
    assert (listed.cleaner_checkpoint, listed.log_start_checkpoint) == (58950, 19650)


def test_a_clean_finished_after_the_log_dir_was_read_is_read_with_its_checkpoint(
    log_dir: Path,
) -> None:
    model = read_log_dir(log_dir)
    (listed,) = model.partitions
    assert listed.cleaner_checkpoint is None  # never cleaned when the log dir was read
    write_checkpoint(log_dir, 117600)  # the cleaner's checkpoint after its clean
    with open_partition(model, listed) as snapshot:
        assert snapshot.partition.cleaner_checkpoint == 117600
        assert snapshot.partition.log_start_checkpoint == listed.log_start_checkpoint
        assert moved_findings(snapshot.findings) == []  # still across the partition's read


def listing_moves(monkeypatch: pytest.MonkeyPatch, log_dir: Path, offsets: list[int]) -> list[int]:
    """Each listing of the partition writes the next of ``offsets`` as the cleaner checkpoint
    (a clean finishing while the partition is listed); returns the offsets not yet written."""
    pending = list(offsets)
    snapshot_dir: Callable[..., Any] = logdir_model.fs.snapshot_dir

    def moving(*args: Any, **kwargs: Any) -> Any:
        snapshot = snapshot_dir(*args, **kwargs)
        if pending:
            write_checkpoint(log_dir, pending.pop(0))
        return snapshot

    monkeypatch.setattr(logdir_model.fs, "snapshot_dir", moving)
    return pending


def test_a_checkpoint_moved_during_the_listing_lists_again(
    log_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    model = read_log_dir(log_dir)
    (listed,) = model.partitions
    pending = listing_moves(monkeypatch, log_dir, [117600])
    with open_partition(model, listed) as snapshot:
        assert pending == []
        assert snapshot.partition.cleaner_checkpoint == 117600
        (detail,) = moved_findings(snapshot.findings)
    assert "cleaner checkpoint line from None to 117600" in detail
    assert "held still (2 listings)" in detail


def test_a_checkpoint_that_keeps_moving_keeps_the_last_listing(
    log_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    model = read_log_dir(log_dir)
    (listed,) = model.partitions
    offsets = [19650 * (i + 1) for i in range(CHECKPOINT_ATTEMPTS + 1)]
    pending = listing_moves(monkeypatch, log_dir, offsets)
    with open_partition(model, listed) as snapshot:
        assert pending == offsets[CHECKPOINT_ATTEMPTS:]  # listed no more than that
        last = offsets[CHECKPOINT_ATTEMPTS - 1]
        assert snapshot.partition.cleaner_checkpoint == last  # read just after the last listing
        (detail,) = moved_findings(snapshot.findings)
    assert f"still moving after {CHECKPOINT_ATTEMPTS} listings" in detail
