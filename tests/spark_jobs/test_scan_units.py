"""The scan's pure parts: arguments, packing, progress, and the findings across log dirs."""

from __future__ import annotations

import gc
import io
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from offsets_auditor.audit.replicas import Holder, replica_findings
from offsets_auditor.versions import KafkaVersion
from spark_jobs import tasks
from spark_jobs.cli import cleaner_logs, kafka_versions, local_path, server_logs
from spark_jobs.progress import Progress
from spark_jobs.work import SegmentTask, emulation_cores, pack


def test_log_dirs_are_local_paths_or_file_uris() -> None:
    assert local_path("/data/kafka-logs") == Path("/data/kafka-logs")
    assert local_path("file:///data/kafka%20logs") == Path("/data/kafka logs")
    assert local_path("relative/dir") == Path("relative/dir")
    assert local_path("hdfs://nn/kafka-logs") is None
    assert local_path("s3a://bucket/kafka-logs") is None


def test_a_version_for_every_log_dir_or_for_one(tmp_path: Path) -> None:
    a, b = tmp_path / "a", tmp_path / "b"
    a.mkdir(), b.mkdir()
    got = kafka_versions(["2.3.0", f"file://{b}=0.9.0.1"], [a.resolve(), b.resolve()])
    assert got == {
        a.resolve(): KafkaVersion.parse("2.3.0"),
        b.resolve(): KafkaVersion.parse("0.9.0.1"),
    }
    assert kafka_versions([], [a.resolve()]) == {a.resolve(): None}
    with pytest.raises(ValueError, match="not one of the LOGDIRs"):
        kafka_versions([f"{tmp_path}/c=2.3.0"], [a.resolve()])


def test_a_server_log_for_every_log_dir_or_for_one(tmp_path: Path) -> None:
    a, b = tmp_path / "a", tmp_path / "b"
    a.mkdir(), b.mkdir()
    dirs = [a.resolve(), b.resolve()]
    got = server_logs(["/logs/all.log", f"file://{b}=/logs/b=1.log"], dirs)
    assert got == {a.resolve(): Path("/logs/all.log"), b.resolve(): Path("/logs/b=1.log")}
    assert server_logs([], dirs) == {a.resolve(): None, b.resolve(): None}
    # an "=" that names no LOGDIR is part of the file name
    assert server_logs([f"{tmp_path}/c=x.log"], [a.resolve()]) == {
        a.resolve(): Path(f"{tmp_path}/c=x.log")
    }


def test_cleaner_logs_for_every_log_dir_or_for_one(tmp_path: Path) -> None:
    """``--cleaner-log`` as ``--server-log``, but repeatable per log dir: several FILEs of one
    LOGDIR are read together, as ``audit --cleaner-log F1 F2`` reads them."""
    a, b = tmp_path / "a", tmp_path / "b"
    a.mkdir(), b.mkdir()
    dirs = [a.resolve(), b.resolve()]
    got = cleaner_logs(
        ["/logs/log-cleaner.log", f"{b}=/b/log-cleaner.log.1", f"file://{b}=/b/log-cleaner.log"],
        dirs,
    )
    assert got == {
        a.resolve(): (Path("/logs/log-cleaner.log"),),
        b.resolve(): (Path("/b/log-cleaner.log.1"), Path("/b/log-cleaner.log")),
    }
    assert cleaner_logs([], dirs) == {a.resolve(): (), b.resolve(): ()}


def test_another_filesystem_is_refused_with_what_to_do() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "offsets_auditor.cli.main", "scan", "hdfs://nn/logs", "--out", "x"],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 3
    assert "only local paths and file:// URIs" in done.stderr
    assert "Other filesystems" in done.stderr


def task(size: int, n: int) -> SegmentTask:
    return SegmentTask(0, "p", n, Path(f"{n}.log"), size, 0, (0, n), False, "")


def test_one_huge_partition_spreads_over_every_slot() -> None:
    """A partition of 40 segments of 1 GiB and a few small ones: 8 slots of 5 GiB each."""
    tasks = [task(1 << 30, n) for n in range(40)] + [task(100, 40 + n) for n in range(4)]
    slots = pack(tasks, 8)
    assert len(slots) == 8
    sizes = sorted(sum(t.size for t in slot) for slot in slots)
    assert sizes[-1] - sizes[0] <= 200
    assert sorted(t.position for slot in slots for t in slot) == list(range(44))


def test_an_emulation_runs_on_the_cores_the_other_tasks_leave() -> None:
    """Local mode: every core, shared among the emulations that run at once; a cluster: at
    most an executor's cores (``spark.executor.cores``, unset: 1)."""
    assert emulation_cores("local[2]", 2, None, tasks=1) == 2
    assert emulation_cores("local[*]", 8, None, tasks=3) == 2
    assert emulation_cores("local[2]", 2, None, tasks=5) == 1
    assert emulation_cores("spark://m:7077", 16, "4", tasks=1) == 4
    assert emulation_cores("spark://m:7077", 16, "4", tasks=8) == 2
    assert emulation_cores("yarn", 16, None, tasks=1) == 1
    assert emulation_cores("yarn", 16, "many", tasks=1) == 1


def test_a_task_runs_with_the_cyclic_collector_off_and_its_context_frozen(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """While a segment is read the collector is off (as in ``audit``), and on again after the
    task; the broadcast context (and what lived with it) is frozen, so that the full collection
    pyspark's daemon runs after every task of a reused worker does not walk it."""
    collector_on: list[bool] = []

    def read_task(ctx: Any, task: Any) -> dict[str, Any]:
        collector_on.append(gc.isenabled())
        return {"input": 0, "partition": "p-0", "position": 0, "status": "ok", "size": 1}

    monkeypatch.setattr(tasks, "read_task", read_task)
    segment = SimpleNamespace(input=0, partition="p-0", size=1)
    context: Any = SimpleNamespace(slots={0: [segment]}, split=set(), payload=[[1], [2]])
    was_enabled = gc.isenabled()
    gc.enable()
    try:
        rows = list(tasks.read_slots(lambda: context, lambda segments, size: None)(iter([0])))
        assert collector_on == [False]
        assert gc.isenabled()
        assert [row["role"] for row in rows] == [tasks.WHOLE]
        assert not any(o is context.payload for o in gc.get_objects())
    finally:
        gc.unfreeze()
        if not was_enabled:
            gc.disable()


def test_progress_line() -> None:
    progress = Progress(counters=None, out=io.StringIO(), enabled=False)
    progress.set_total(10, 100 * 1048576)
    assert progress.line(4, 40 * 1048576, 2.0) == (
        "segments 4/10, 40.0/100.0 MiB, 20.0 MiB/s, ETA 3 s"
    )
    assert progress.line(0, 0, 0.0).endswith("ETA ?")


def report(
    log_dir: str, broker: int | None, cluster: str | None, commits: list[Any], end: int
) -> tuple[Holder, Any]:
    """A log dir holding partition 7, and the commits its coordinator loads from it."""
    return (
        Holder(broker, cluster, log_dir, ((7, end),)),
        {(group, "t", 0): (offset, at) for group, offset, at in commits},
    )


def replicas(reports: list[tuple[Holder, Any]]) -> list[tuple[int, Any]]:
    def commits(index: int, partition: int) -> Any:
        assert partition == 7
        return reports[index][1]

    return replica_findings([holder for holder, _ in reports], commits)


def test_replicas_that_agree_below_both_ends() -> None:
    """A follower behind the leader: the leader's newer commit lies beyond the follower's end."""
    leader = report("/a", 1, "c", [("g", 50, 900), ("h", 7, 10)], 1000)
    follower = report("/b", 2, "c", [("g", 40, 400), ("h", 7, 10)], 500)
    assert replicas([leader, follower]) == []


def test_replicas_that_diverged() -> None:
    left = report("/a", 1, "c", [("g", 50, 300)], 1000)
    right = report("/b", 2, "c", [("g", 60, 310)], 1000)
    [(index, finding)] = replicas([left, right])
    assert index == 0 and finding.kind == "replica-divergence" and finding.group == "g"
    assert "below offset 1000" in finding.detail


def test_other_clusters_are_not_replicas() -> None:
    left = report("/a", 1, "c1", [("g", 50, 300)], 1000)
    right = report("/b", 2, "c2", [("g", 60, 310)], 1000)
    assert replicas([left, right]) == []


def test_two_log_dirs_claiming_one_broker_id() -> None:
    found = replicas([report("/a", 3, "c", [], 0), report("/b", 3, "c", [], 0)])
    assert [(i, f.kind) for i, f in found] == [
        (0, "duplicate-broker-id"),
        (1, "duplicate-broker-id"),
    ]
    assert "/a, /b" in found[0][1].detail


def test_replicas_are_printed_side_by_side() -> None:
    from spark_jobs.cli import print_replicas

    def one(index: int, broker: int, checkpoint: int | None, size: int, outcome: str) -> Any:
        return (
            {"input": index, "broker_id": broker, "cluster_id": "c1", "log_dir": f"/b{broker}"},
            {
                "input": index,
                "partition": 3,
                "size_bytes": size,
                "cleaner_checkpoint": checkpoint,
                "outcome": outcome,
            },
        )

    def printed(*inputs: Any) -> str:
        out = io.StringIO()
        print_replicas([b for b, _ in inputs], [p for _, p in inputs], out)
        return out.getvalue()

    assert printed(
        one(0, 1, None, 100, "thread-death"), one(1, 2, 50, 2000, "single-pass")
    ).splitlines()[-1] == (
        "  __consumer_offsets-3 (cluster c1): broker 1: 100 B, checkpoint -, thread-death  |"
        "  broker 2: 2,000 B, checkpoint 50, single-pass"
    )
    # copies of one broker
    assert printed(one(0, 1, None, 100, "x"), one(1, 1, None, 100, "x")) == ""
