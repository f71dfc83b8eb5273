"""What the auditor's user may not read is the auditor's problem, not the broker's: one
``permission-denied`` finding saying what and what to do, never a crash, never a broker failure,
and everything else audited. On copies of real broker log dirs (the 2.3.0 cluster's brokers 0
and 1, four offsets partitions each, all with commits), run where permissions apply
(``tests.support.unprivileged``: root bypasses them).

Before: ``audit``/``groups``/``scan`` exited 4 ("internal error: PermissionError") on a
partition dir it could not list; an unreadable segment was reported three times, twice as "the
broker fails to start".
"""

from __future__ import annotations

import json
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from offsets_auditor.coordinator import coordinator_partition
from tests.support.unprivileged import Unprivileged, unprivileged

CLUSTER = Path(__file__).parent.parent / "fixtures" / "kafka-2.3.0" / "cluster"
ROOT = Path(__file__).resolve().parent.parent.parent
#: broker 0 holds __consumer_offsets-0, 1, 4, 5; broker 1 holds 1, 2, 3, 5
HELD = {0: [0, 1, 4, 5], 1: [1, 2, 3, 5]}


def _copy(tmp: Path, broker: int) -> Path:
    """A copy of the broker's log dir, readable by anyone but what the test takes away."""
    copy = tmp / f"broker-{broker}" / "kafka-logs"
    shutil.copytree(CLUSTER / f"broker-{broker}" / "kafka-logs", copy)
    for path in [tmp, copy.parent, *copy.rglob("*"), copy]:
        path.chmod(0o755 if path.is_dir() else 0o644)
    return copy


@pytest.fixture
def user() -> Unprivileged:
    return unprivileged()


@pytest.fixture
def tmp() -> Iterator[Path]:
    """A dir of its own under /tmp, not pytest's ``tmp_path``: every pytest session that
    starts (another engineer's, a parallel run) sets ``/tmp/pytest-of-<user>`` back to 0700, so
    the unprivileged user could lose its way to a ``tmp_path`` in the middle of a test."""
    made = Path(tempfile.mkdtemp(prefix="offsets-auditor-permissions-"))
    made.chmod(0o755)
    try:
        yield made
    finally:
        for path in made.rglob("*"):  # the test took some permissions away
            if not path.is_symlink():
                path.chmod(0o755)
        shutil.rmtree(made)


def _groups_of(partitions: list[int]) -> set[str]:
    """The recorded group ids whose coordinator partition is one of ``partitions``."""
    truth = json.loads((CLUSTER / "truth.json").read_text())
    return {g["group_id"] for g in truth["groups"] if g["partition"] in partitions}


def _only_denied(findings: list[dict], expected_file: str) -> dict:
    """The one permission-denied finding; nothing about the file says the broker fails."""
    denied = [f for f in findings if f["kind"] == "permission-denied"]
    assert len(denied) == 1, denied
    (finding,) = denied
    assert finding["file"] == expected_file and finding["severity"] == "warning"
    assert "member of the broker's group" in finding["detail"]
    assert "read-only bind mount" in finding["detail"]
    about = [f for f in findings if f is not finding and expected_file in (f["file"] or "")]
    assert about == [], about
    assert not any("fails to start" in f["detail"] for f in findings)
    assert not any(f["kind"] == "unreadable-file" for f in findings)
    return finding


@pytest.mark.parametrize("command", ["audit", "groups"])
def test_an_unreadable_partition_dir(user: Unprivileged, tmp: Path, command: str) -> None:
    log_dir = _copy(tmp, 0)
    (log_dir / "__consumer_offsets-1").chmod(0)
    done = user.run([command, str(log_dir), "--json"], cwd=ROOT)
    assert done.returncode in (0, 1, 2), (user.who, done.stderr)
    assert "internal error" not in done.stderr
    report = json.loads(done.stdout)
    finding = _only_denied(report["findings"], "__consumer_offsets-1")
    assert "__consumer_offsets-1 is not audited" in finding["detail"]
    assert "mode 0000" in finding["detail"]
    groups = {g["group"] for g in report["groups"]}
    assert groups == _groups_of([0, 4, 5]) and groups  # every other partition's groups
    if command == "audit":
        assert [p["partition"] for p in report["partitions"]] == [0, 4, 5]
        assert all(p["cleaner"]["outcome"] for p in report["partitions"])


@pytest.mark.parametrize("command", ["audit", "groups"])
def test_an_unreadable_segment(user: Unprivileged, tmp: Path, command: str) -> None:
    log_dir = _copy(tmp, 0)
    segment = "__consumer_offsets-4/00000000000000000000.log"
    (log_dir / segment).chmod(0)
    done = user.run([command, str(log_dir), "--json"], cwd=ROOT)
    assert done.returncode in (0, 1, 2), (user.who, done.stderr)
    report = json.loads(done.stdout)
    finding = _only_denied(report["findings"], segment)
    assert "__consumer_offsets-4 is not audited" in finding["detail"]
    assert {g["group"] for g in report["groups"]} == _groups_of([0, 1, 5])
    if command == "audit":  # set aside whole, never audited from part of its log
        assert [p["partition"] for p in report["partitions"]] == [0, 1, 5]


def test_an_unreadable_index_file_leaves_the_records_audited(user: Unprivileged, tmp: Path) -> None:
    log_dir = _copy(tmp, 0)
    index = "__consumer_offsets-5/00000000000000000000.index"
    (log_dir / index).chmod(0)
    done = user.run(["audit", str(log_dir), "--json", "--kafka-version", "2.0.0"], cwd=ROOT)
    assert done.returncode in (0, 1, 2), (user.who, done.stderr)
    report = json.loads(done.stdout)
    finding = _only_denied(report["findings"], index)
    assert "start-up check is skipped" in finding["detail"]
    assert [p["partition"] for p in report["partitions"]] == HELD[0]
    (verdict,) = [x for x in report["indexes"] if x["file"] == index]
    assert verdict["verdict"] == "not-checked"  # 2.0 checks indexes at load; not this one
    assert {g["group"] for g in report["groups"]} == _groups_of(HELD[0])


@pytest.mark.slow
def test_the_scan_audits_the_rest(user: Unprivileged, tmp: Path) -> None:
    """One scan of two brokers' log dirs: broker 0 with a partition dir it may not list,
    broker 1 with a segment it may not open. Each is one finding; every other partition is
    published with its groups."""
    first, second = _copy(tmp, 0), _copy(tmp, 1)
    (first / "__consumer_offsets-0").chmod(0)
    (second / "__consumer_offsets-3/00000000000000000000.log").chmod(0)
    results = tmp / "results"
    results.mkdir()
    user.give(results)
    done = user.run(
        ["scan", str(first), str(second), "--out", str(results), "--publisher", "p"], cwd=ROOT
    )
    assert done.returncode in (0, 1, 2), (user.who, done.stderr[:6000])
    import pyarrow.parquet as pq

    (run,) = (results / "publishers" / "p" / "runs").iterdir()
    findings = pq.read_table(run / "findings.parquet").to_pylist()
    by_dir = {str(first): [], str(second): []}
    for f in findings:
        by_dir[f["log_dir"]].append(f)
    _only_denied(by_dir[str(first)], "__consumer_offsets-0")
    _only_denied(by_dir[str(second)], "__consumer_offsets-3/00000000000000000000.log")
    partitions = pq.read_table(run / "partitions.parquet").to_pylist()
    assert sorted((p["broker_id"], p["partition"]) for p in partitions) == [
        (0, 1),
        (0, 4),
        (0, 5),
        (1, 1),
        (1, 2),
        (1, 5),
    ]
    groups = pq.read_table(run / "groups.parquet", columns=["broker_id", "group"]).to_pylist()
    for broker, kept in ((0, [1, 4, 5]), (1, [1, 2, 5])):
        found = {g["group"] for g in groups if g["broker_id"] == broker}
        assert found == _groups_of(kept)
        assert all(coordinator_partition(g, 6) in kept for g in found)
