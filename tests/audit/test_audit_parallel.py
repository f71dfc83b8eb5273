"""``audit --jobs N``, and a big partition's audit in scratch files: the same report as one
process in memory on every real broker's log dir, a segment replaced after it was listed read
through the snapshot instead, and the scratch files gone."""

from __future__ import annotations

import json
import os
import shutil
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from offsets_auditor import mapped_pickle
from offsets_auditor.audit import parallel as audit_parallel
from offsets_auditor.audit import stages as audit_stages
from offsets_auditor.audit.parallel import _read_segment, audit_log_dir_on
from offsets_auditor.audit.plan import AuditSettings, plan_audit
from offsets_auditor.audit.report import report_json
from offsets_auditor.audit.stages import log_dir_work
from offsets_auditor.logdir.model import offsets_partitions, open_partition
from offsets_auditor.reader.reading import DEFAULT_READ

FIXTURES = Path(__file__).parent.parent / "fixtures"
LOG_DIRS = sorted(FIXTURES.glob("kafka-*/*/kafka-logs"))
NOW_MS = 1_790_000_000_000


def report(log_dir: Path, jobs: int) -> dict[str, Any]:
    plan = plan_audit([log_dir], AuditSettings(), NOW_MS)
    audit = audit_log_dir_on(log_dir, plan, DEFAULT_READ, jobs)
    return json.loads(json.dumps(report_json([audit], emulated=plan.emulated_versions)))


@pytest.mark.parametrize(
    "log_dir", LOG_DIRS, ids=lambda p: f"{p.parent.parent.name}/{p.parent.name}"
)
def test_jobs_give_the_report_of_one_process(
    log_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    one = report(log_dir, 1)
    assert one["partitions"], "a log dir with offsets partitions"
    assert report(log_dir, 3) == one
    # every partition's configs emulated in forked processes, however small
    monkeypatch.setattr(audit_parallel, "EMULATIONS_APART_RECORDS", 0)
    assert report(log_dir, 2) == one
    # every partition's columns and state in scratch files, as a big one's are
    monkeypatch.setattr(audit_stages, "SPILL_BYTES", 0)
    spilled: list[Path] = []
    original = audit_stages.SpilledColumns

    def spilling(directory: Path) -> Any:
        spilled.append(directory)
        return original(directory)

    monkeypatch.setattr(audit_stages, "SpilledColumns", spilling)
    assert report(log_dir, 1) == one
    assert spilled and not any(d.exists() for d in spilled)


def test_several_configs_are_emulated_in_forked_processes(monkeypatch: pytest.MonkeyPatch) -> None:
    log_dir = FIXTURES / "kafka-0.9.0.1/cleaner-died/kafka-logs"
    plan = plan_audit([log_dir], AuditSettings(), NOW_MS)
    assert len(plan.configs) > 1, "a version range whose cleaners differ"
    forked: list[int] = []
    original = audit_parallel._forked_map

    def counting(function: Any, items: Any, jobs: int) -> Any:
        forked.append(len(items))
        return original(function, items, jobs)

    monkeypatch.setattr(audit_parallel, "EMULATIONS_APART_RECORDS", 0)
    monkeypatch.setattr(audit_parallel, "_forked_map", counting)
    assert report(log_dir, 2) == report(log_dir, 1)
    assert forked and all(n == len(plan.configs) for n in forked)


def test_a_workers_result_crosses_in_a_file_with_its_arrays_mapped(tmp_path: Path) -> None:
    log_dir = FIXTURES / "kafka-2.3.0/multi-pass/kafka-logs"
    plan = plan_audit([log_dir], AuditSettings(), NOW_MS)
    work = log_dir_work(log_dir, plan)
    listed = max(offsets_partitions(work.model), key=lambda p: len(p.segments))
    with open_partition(work.model, listed, plan.config.kafka_version) as snapshot:
        partition = snapshot.partition
        segment = partition.segments[0]
        expected = audit_stages.read_segment_result(partition, segment, work.groups_plan)
        one = replace(partition, segments=(segment,))
        spill = tmp_path / "spill"
        assert _read_segment(one, work.groups_plan, DEFAULT_READ, spill, True)
    result = mapped_pickle.read(spill / "result")
    assert expected.delta is not None and len(expected.delta.commits) > 100
    commits, expected_commits = result.delta.commits, expected.delta.commits
    assert commits.names == expected_commits.names
    for name in ("group", "topic", "partition", "tombstone", "metadata"):
        assert np.array_equal(getattr(commits, name), getattr(expected_commits, name)), name
    assert commits.values.keys() == expected_commits.values.keys()
    for name, column in commits.values.items():
        assert np.array_equal(column, expected_commits.values[name]), name
    assert replace(result.delta, commits=None) == replace(expected.delta, commits=None)
    assert result.facts.writers == expected.facts.writers
    assert result.facts.stats == expected.facts.stats
    assert result.facts.key_digests.tobytes() == expected.facts.key_digests.tobytes()
    offsets = result.delta.commits.log_offset
    assert not offsets.flags.writeable and not offsets.flags.owndata  # a view of the file


def test_a_segment_replaced_after_listing_is_read_through_the_snapshot(tmp_path: Path) -> None:
    source = FIXTURES / "kafka-2.3.0/multi-pass/kafka-logs"
    log_dir = tmp_path / "kafka-logs"
    shutil.copytree(source, log_dir)
    plan = plan_audit([log_dir], AuditSettings(), NOW_MS)
    expected = report(log_dir, 1)
    work = log_dir_work(log_dir, plan)
    listed = max(offsets_partitions(work.model), key=lambda p: len(p.segments))
    with open_partition(work.model, listed, plan.config.kafka_version) as snapshot:
        partition = snapshot.partition
        segment = partition.segments[0]
        path = partition.path / segment.log.name
        # the cleaner swaps in a new file under the same name: another inode
        data = path.read_bytes()
        path.unlink()
        path.write_bytes(data[: len(data) // 2])
        one = replace(partition, segments=(segment,))
        spill = tmp_path / "spill"
        assert not _read_segment(one, work.groups_plan, DEFAULT_READ, spill, True)
        assert not spill.exists() or not any(spill.iterdir()), "nothing written"
        path.unlink()
        path.write_bytes(data)  # the snapshot still reads the listed file

    class Replacing:
        """Replaces every listed segment's file with half of it once its partition's snapshot
        is open: the audit still reads what was listed."""

        def __init__(self) -> None:
            self.original = audit_parallel.open_partition

        def __call__(self, *args: Any, **kwargs: Any) -> Any:
            context = self.original(*args, **kwargs)
            snapshot = context.__enter__()
            for s in snapshot.partition.segments:
                file = snapshot.partition.path / s.log.name
                data = file.read_bytes()
                file.unlink()
                file.write_bytes(data[: len(data) // 2])  # another file: not the one listed
            return _Entered(context, snapshot)

    original = audit_parallel.open_partition
    audit_parallel.open_partition = Replacing()  # type: ignore[assignment]
    try:
        assert report(log_dir, 2) == expected
    finally:
        audit_parallel.open_partition = original


class _Entered:
    def __init__(self, context: Any, value: Any) -> None:
        self.context, self.value = context, value

    def __enter__(self) -> Any:
        return self.value

    def __exit__(self, *exc: object) -> Any:
        return self.context.__exit__(*exc)


def test_scratch_files_are_removed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    import tempfile

    monkeypatch.setattr(tempfile, "tempdir", None)
    report(FIXTURES / "kafka-0.9.0.1/cleaner-died/kafka-logs", 2)
    assert os.listdir(tmp_path) == []


def test_the_next_fork_starts_as_soon_as_one_ends(tmp_path: Path) -> None:
    """Two at a time: the third item starts once the second ends, while the first still runs
    (the first waits for the third's mark); the results come back in the items' order."""
    import time

    def work(item: int) -> str:
        if item == 0:
            deadline = time.monotonic() + 20
            while not (tmp_path / "2").exists() and time.monotonic() < deadline:
                time.sleep(0.01)
            return "saw 2" if (tmp_path / "2").exists() else "alone"
        (tmp_path / str(item)).touch()
        return f"did {item}"

    assert audit_parallel._forked_map(work, [0, 1, 2], 2) == ["saw 2", "did 1", "did 2"]


def test_a_failing_fork_is_raised_and_the_others_are_stopped() -> None:
    def work(item: int) -> int:
        if item == 1:
            raise ValueError("no config")
        return item

    with pytest.raises(RuntimeError, match="ValueError: no config"):
        audit_parallel._forked_map(work, [0, 1, 2, 3], 2)


def test_work_aside_runs_while_this_process_goes_on(tmp_path: Path) -> None:
    """``ForkedCores.aside``: the work runs in another process while this one goes on (it
    waits for this one's mark), its result or its error coming back when asked for."""
    import time

    def waits_for_mark() -> tuple[bool, int]:
        deadline = time.monotonic() + 20
        while not (tmp_path / "mark").exists() and time.monotonic() < deadline:
            time.sleep(0.01)
        return (tmp_path / "mark").exists(), os.getpid()

    result = audit_parallel.ForkedCores(2).aside(waits_for_mark)
    (tmp_path / "mark").touch()
    saw_mark, pid = result()
    assert saw_mark and pid != os.getpid()


def test_a_failing_aside_is_raised() -> None:
    def work() -> int:
        raise ValueError("no map")

    with pytest.raises(RuntimeError, match="ValueError: no map"):
        audit_parallel.ForkedCores(2).aside(work)()


def test_scratch_is_removed_by_several_threads(tmp_path: Path) -> None:
    scratch = tmp_path / "scratch"
    for segment in range(5):
        (scratch / str(segment)).mkdir(parents=True)
        for column in ("offset", "key", "batch"):
            (scratch / str(segment) / column).write_bytes(b"\0" * 4096)
    audit_parallel.remove_scratch(scratch, 2)
    assert not scratch.exists()
    audit_parallel.remove_scratch(scratch, 2)  # gone already: nothing to do
