"""Whether a broker is running on a log dir, told from its ``.lock`` without touching it.

A running broker holds an exclusive lock on ``LOGDIR/.lock`` from its start to its shutdown:
``LogManager.lockLogDirs`` makes a ``FileLock(new File(dir, ".lock"))`` per log dir and fails
to start ("Failed to acquire lock on file .lock in ...") unless ``tryLock()`` gets it; the lock
is released by ``FileLock.destroy`` at shutdown (``LogManager.shutdown``), or when the log dir
goes offline after a disk error, and by the kernel when the process dies (0.9.0.1 and 2.3.0
``core/src/main/scala/kafka/utils/FileLock.scala`` and ``log/LogManager.scala``; 3.9.0-rc3
``server-common/.../server/util/FileLock.java``). ``FileChannel.tryLock()`` is
``tryLock(0, Long.MAX_VALUE, false)``, which on Linux the JDK implements as
``fcntl(fd, F_SETLK64, {F_WRLCK, SEEK_SET, 0, 0})``: a POSIX record write lock over the whole
file, owned by the broker's process (OpenJDK ``src/java.base/unix/native/libnio/ch/
FileDispatcherImpl.c``, ``lock0``). The file stays after a shutdown up to 3.7 and is deleted
by ``FileLock.destroy`` from 3.8.0 (KAFKA-16391).

So :func:`offsets_auditor.logdir.fs.probe_lock` asks the kernel, with ``fcntl(F_GETLK)`` on a
read-only descriptor, whether a read lock on ``.lock`` would conflict: it reports the broker's
write lock (and its pid) if one is held, and takes nothing. ``/proc/locks``, matched on the
file's device and inode, names the holder too when it is visible in this PID namespace.

Three states, each with its evidence:

1. ``running``: a lock is held (whoever asked it: F_GETLK or ``/proc/locks``). A holder in
   another PID namespace (a broker in another container on the same host) is still seen,
   with pid 0.
2. ``stopped``: F_GETLK was asked and found no lock, on a local filesystem (the kernel that
   answered is the one any local broker would lock through). A copy of a log dir that kept
   its ``.lock`` also reads so: no process holds *that* file.
3. ``unknown``: no ``.lock`` (a copy without it; 3.8+ after a clean shutdown; a dir no broker
   ever locked), F_GETLK could not be asked (not Linux, an unreadable ``.lock``), or no lock
   was seen on a filesystem shared with other hosts (NFS, CIFS, FUSE, ...), where a broker on
   another host may hold a lock this host does not see.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from offsets_auditor.logdir.fs import HeldLock, LockProbe
from offsets_auditor.logdir.layout import LOCK_FILE

#: Filesystems whose locks are all kept by this host's kernel: there, a lock F_GETLK does not
#: see is not held. Anything else (nfs, nfs4, cifs, smb3, fuse.*, ceph, 9p, virtiofs, ...) may
#: be shared with another host.
LOCAL_FILESYSTEMS = frozenset(
    {"ext2", "ext3", "ext4", "xfs", "btrfs", "zfs", "f2fs", "tmpfs", "ramfs", "overlay",
     "reiserfs", "jfs", "bcachefs"}
)  # fmt: skip


class BrokerState(StrEnum):
    RUNNING = "running"
    STOPPED = "stopped"
    UNKNOWN = "unknown"


@dataclass(frozen=True, slots=True)
class Liveness:
    """Whether a broker runs on the log dir, and the evidence, in words."""

    state: BrokerState
    evidence: str

    @property
    def running(self) -> bool:
        return self.state is BrokerState.RUNNING

    def to_json(self) -> dict[str, str]:
        return {"state": self.state.value, "evidence": self.evidence}


#: What a model built without looking (a test's, a plan's) says.
NOT_TESTED = Liveness(BrokerState.UNKNOWN, "not tested")


def judge(probe: LockProbe) -> Liveness:
    """The state the probe of ``LOGDIR/.lock`` shows (the module docstring's rules 1-3)."""
    on = f" on {probe.filesystem}" if probe.filesystem else ""
    if probe.identity is None:
        return Liveness(
            BrokerState.UNKNOWN,
            f"no {LOCK_FILE} in the log dir: a copy without it, a broker (3.8+) that shut down"
            " cleanly, or a dir no broker locked; whether a broker runs on it cannot be told",
        )
    held = [probe.getlk] if probe.getlk is not None else []
    held += [x for x in probe.proc_locks or () if not held or x.pid != held[0].pid]
    if held:
        return Liveness(
            BrokerState.RUNNING,
            f"{_holder(held[0])} holds a {'write' if held[0].write else 'read'} lock on"
            f" {LOCK_FILE} ({' and '.join(sorted({x.seen_by for x in held}))}{on}): the broker"
            " is running",
        )
    if probe.getlk_error is not None:
        return Liveness(
            BrokerState.UNKNOWN,
            f"cannot tell whether a process holds {LOCK_FILE}: {probe.getlk_error}"
            + ("" if probe.proc_locks is None else " (/proc/locks lists none, but it shows only"
               " holders in this PID namespace)"),
        )  # fmt: skip
    if probe.filesystem not in LOCAL_FILESYSTEMS:
        where = probe.filesystem or "a filesystem of unknown type"
        return Liveness(
            BrokerState.UNKNOWN,
            f"no lock on {LOCK_FILE} seen from this host (fcntl(F_GETLK)), but it is on {where},"
            " where a broker on another host may hold one this host does not see",
        )
    return Liveness(
        BrokerState.STOPPED,
        f"no process holds a lock on {LOCK_FILE} (fcntl(F_GETLK){on}): no broker is running on"
        " this log dir (or it is a copy)",
    )


def _holder(lock: HeldLock) -> str:
    if lock.pid > 0:
        return f"process {lock.pid}"
    if lock.pid == 0:
        return "a process outside this PID namespace"
    return "an open file description"
