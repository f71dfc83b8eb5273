"""``audit --jobs N`` detects the version with each offsets partition's newest segments
summarized on a pool of forked processes (``audit.parallel.forked_each``): the same detection,
the same evidence in the same order, as in one process, on every real log dir."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from offsets_auditor.audit.parallel import forked_each
from offsets_auditor.version_detection import detect_version
from offsets_auditor.version_detection.collect import in_turn, observe_log_dir

FIXTURES = Path(__file__).parent.parent / "fixtures"
LOG_DIRS = sorted(FIXTURES.glob("kafka-*/*/kafka-logs"))


@pytest.mark.parametrize(
    "log_dir", LOG_DIRS, ids=lambda p: f"{p.parent.parent.name}/{p.parent.name}"
)
def test_forked_detection_is_the_detection_of_one_process(log_dir: Path) -> None:
    assert detect_version([log_dir], each=forked_each(2)) == detect_version([log_dir])


def pid_of(_: int) -> int:
    return os.getpid()


def test_the_items_are_taken_by_other_processes() -> None:
    pids = forked_each(2)(pid_of, list(range(8)))
    assert len(pids) == 8 and os.getpid() not in pids


def test_each_partition_comes_back_in_order() -> None:
    log_dir = FIXTURES / "kafka-2.3.0/corrupt-segments/kafka-logs"
    alone = observe_log_dir(log_dir, in_turn)
    assert len({r.file for r in alone.records}) == 5  # five partitions with records
    assert observe_log_dir(log_dir, forked_each(3)) == alone


def test_one_job_forks_nothing() -> None:
    assert forked_each(1) is in_turn
