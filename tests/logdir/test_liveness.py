"""Whether a broker runs on a log dir, from a real lock held on its ``.lock``.

The lock is taken as the JVM's ``FileChannel.tryLock()`` takes it on Linux (``fcntl(F_SETLK)``,
a write lock over the whole file; Python's ``fcntl.lockf(LOCK_EX)`` is the same call) by another
process, and the probe must see it without taking one: the three states, and the rules of
``logdir.liveness`` on every kind of evidence.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from offsets_auditor.logdir import fs
from offsets_auditor.logdir.liveness import BrokerState, judge
from offsets_auditor.logdir.model import read_log_dir

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="fcntl(F_GETLK) is read on Linux")

#: takes the lock as the JVM does, says so, and holds it until its stdin closes
_HOLDER = """
import fcntl, sys
f = open(sys.argv[1], "r+")
fcntl.lockf(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
print("locked", flush=True)
sys.stdin.read()
"""


@contextmanager
def held(path: Path) -> Iterator[subprocess.Popen[str]]:
    """Another process holding a POSIX write lock on ``path`` while the block runs."""
    child = subprocess.Popen(
        [sys.executable, "-c", _HOLDER, str(path)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert child.stdout is not None and child.stdout.readline() == "locked\n"
        yield child
    finally:
        assert child.stdin is not None
        child.stdin.close()
        child.wait(timeout=10)


def can_lock(path: Path) -> bool:
    """Whether a fresh process can take the write lock now (nobody holds it)."""
    probe = "import fcntl,sys; fcntl.lockf(open(sys.argv[1],'r+'), fcntl.LOCK_EX|fcntl.LOCK_NB)"
    return subprocess.run([sys.executable, "-c", probe, str(path)], check=False).returncode == 0


def test_no_lock_file_is_unknown(tmp_path: Path) -> None:
    liveness = judge(fs.probe_lock(tmp_path / ".lock"))
    assert liveness.state is BrokerState.UNKNOWN
    assert "no .lock" in liveness.evidence


def test_an_unlocked_lock_file_is_a_stopped_broker(tmp_path: Path) -> None:
    (tmp_path / ".lock").touch()
    probe = fs.probe_lock(tmp_path / ".lock")
    assert probe.getlk is None and probe.getlk_error is None
    liveness = judge(probe)
    assert liveness.state is BrokerState.STOPPED, liveness
    assert "no process holds a lock on .lock" in liveness.evidence


def test_a_held_lock_is_a_running_broker_with_its_pid(tmp_path: Path) -> None:
    lock = tmp_path / ".lock"
    lock.touch()
    with held(lock) as holder:
        probe = fs.probe_lock(lock)
        assert probe.getlk is not None
        assert (probe.getlk.pid, probe.getlk.write) == (holder.pid, True)
        assert probe.proc_locks is not None
        assert [x.pid for x in probe.proc_locks] == [holder.pid]
        liveness = judge(probe)
        assert liveness.state is BrokerState.RUNNING
        assert f"process {holder.pid} holds a write lock on .lock" in liveness.evidence
        # probing takes nothing and releases nothing: the holder still holds it
        assert not can_lock(lock)
        assert judge(fs.probe_lock(lock)).state is BrokerState.RUNNING
    assert judge(fs.probe_lock(lock)).state is BrokerState.STOPPED
    assert can_lock(lock)  # and nothing of ours is left on it


def test_probing_changes_nothing(tmp_path: Path) -> None:
    lock = tmp_path / ".lock"
    lock.write_bytes(b"")
    os.utime(lock, ns=(1_000_000_000, 2_000_000_000))
    before = os.stat(lock)
    with held(lock):
        fs.probe_lock(lock)
    fs.probe_lock(lock)
    after = os.stat(lock)
    assert (after.st_size, after.st_mtime_ns, after.st_ino) == (
        before.st_size,
        before.st_mtime_ns,
        before.st_ino,
    )
    assert not (tmp_path / "missing").exists()
    fs.probe_lock(tmp_path / "missing" / ".lock")
    assert sorted(p.name for p in tmp_path.iterdir()) == [".lock"]  # nothing created


def test_a_fifo_named_lock_is_not_opened(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / ".lock")  # opening a FIFO O_RDONLY would block
    liveness = judge(fs.probe_lock(tmp_path / ".lock"))
    assert liveness.state is BrokerState.UNKNOWN
    assert "not a regular file" in liveness.evidence


def _probe(**fields: object) -> fs.LockProbe:
    base: dict[str, object] = {
        "path": Path("/data/kafka-logs/.lock"),
        "identity": (1, 2),
        "proc_locks": (),
        "filesystem": "ext4",
    }
    return fs.LockProbe(**{**base, **fields})  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("rule", "probe", "state", "says"),
    [
        # 1. a lock held: running, whoever saw it
        (1, _probe(getlk=fs.HeldLock(42, True, "fcntl(F_GETLK)")), "running", "process 42"),
        (1, _probe(getlk=fs.HeldLock(0, True, "fcntl(F_GETLK)")), "running", "outside this PID"),
        (1, _probe(getlk_error="x", proc_locks=(fs.HeldLock(7, True, "/proc/locks"),)), "running",
         "process 7"),
        (1, _probe(getlk=fs.HeldLock(5, True, "fcntl(F_GETLK)"), filesystem="nfs4"), "running",
         "on nfs4"),
        # 2. asked and none held, on a local filesystem: stopped
        (2, _probe(), "stopped", "no process holds"),
        (2, _probe(filesystem="xfs"), "stopped", "on xfs"),
        # 3. not asked, or none seen where another host may hold it: unknown
        (3, _probe(identity=None), "unknown", "no .lock"),
        (3, _probe(getlk_error="fcntl(F_GETLK) is not asked on darwin (64-bit)"), "unknown",
         "darwin"),
        (3, _probe(getlk_error="fcntl(F_GETLK) failed: Permission denied", proc_locks=None),
         "unknown", "Permission denied"),
        (3, _probe(filesystem="nfs4"), "unknown", "another host"),
        (3, _probe(filesystem="fuse.sshfs"), "unknown", "another host"),
        (3, _probe(filesystem=None), "unknown", "unknown type"),
    ],
)  # fmt: skip
def test_rules(rule: int, probe: fs.LockProbe, state: str, says: str) -> None:
    liveness = judge(probe)
    assert liveness.state.value == state
    assert says in liveness.evidence


def test_the_log_dir_model_carries_it(tmp_path: Path) -> None:
    (tmp_path / "meta.properties").write_text("version=0\nbroker.id=0\n")
    assert read_log_dir(tmp_path).liveness.state is BrokerState.UNKNOWN
    (tmp_path / ".lock").touch()
    assert read_log_dir(tmp_path).liveness.state is BrokerState.STOPPED
    with held(tmp_path / ".lock"):
        assert read_log_dir(tmp_path).liveness.state is BrokerState.RUNNING


def test_filesystem_type_of_a_path() -> None:
    assert fs.filesystem_type(Path("/proc/self")) == "proc"
    with open("/proc/self/mountinfo") as mounts:
        root = next(line for line in mounts if line.split(" ")[4] == "/")
    assert fs.filesystem_type(Path("/")) == root.split(" - ", 1)[1].split(" ")[0]
