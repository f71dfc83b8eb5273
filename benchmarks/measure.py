"""Run a command and measure it from outside: wall time, CPU time and the peak memory of every
process it starts, by role (Linux ``/proc``).

Memory: every ``interval`` seconds the process tree under the command is listed
(``/proc/<pid>/stat`` parent ids) and each process's ``VmHWM`` (its peak resident set, kept by
the kernel, so growth between two polls is not missed; only what happens after a process's last
poll is) and ``VmRSS`` are read from ``/proc/<pid>/status``. Roles, for a Spark job in local
mode: ``driver`` (the command itself: the Python driver), ``jvm`` (the Spark JVM: driver and
executor in local mode), ``daemon`` (``pyspark.daemon`` or ``spark_jobs.worker_daemon``, which
forks the Python workers), ``worker`` (its forked children: they run the executors' Python,
``mapPartitions``), ``other``. A forked worker's ``VmHWM`` includes the pages it still shares
with the daemon.

CPU: the user + system seconds of every process of the tree (``/proc/<pid>/stat`` utime and
stime, as last seen by a poll: a process's last ``interval`` before it exits is missed), or the
command's own and its waited-for descendants' (``RUSAGE_CHILDREN``), whichever is larger.

Disk: the bytes the machine's disks read and wrote during the run (``/proc/diskstats``, whole
disks only: those of ``/sys/block`` backed by a device), and the seconds its CPUs sat idle
waiting for them (``iowait`` of ``/proc/stat``, over all CPUs). Machine-wide, so only
meaningful on an otherwise quiet machine; they tell a run the disk held back from one the CPU
did (data larger than the page cache is read from disk on every run).

A memory ceiling (``limit_bytes``) on the sum of the tree's anonymous resident memory protects
a shared machine: above it the tree is killed and the result says so.
"""

from __future__ import annotations

import os
import signal
import subprocess
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

_PROC = Path("/proc")


@dataclass
class Measured:
    returncode: int
    wall_seconds: float
    cpu_seconds: float
    stdout: str
    stderr: str
    #: pid -> (role, peak resident bytes)
    peaks: dict[int, tuple[str, int]] = field(default_factory=dict)
    #: pid -> (role, largest anonymous resident bytes seen at a poll): ``RssAnon``, memory the
    #: kernel cannot drop (the resident set also counts pages of mapped files, which it can)
    anon_peaks: dict[int, tuple[str, int]] = field(default_factory=dict)
    #: the largest sum of the workers' resident sets seen at one poll
    workers_together: int = 0
    #: the largest sum of the whole tree's resident sets seen at one poll
    tree_together: int = 0
    killed_at_limit: bool = False
    #: bytes the machine's disks read and wrote during the run (machine-wide)
    disk_read_bytes: int = 0
    disk_written_bytes: int = 0
    #: CPU seconds the machine spent idle waiting for its disks during the run (all CPUs)
    iowait_seconds: float = 0.0

    def peak(self, role: str) -> int:
        """The largest peak of one process of ``role`` (0 if none was seen)."""
        return max((hwm for r, hwm in self.peaks.values() if r == role), default=0)

    def peak_anon(self, role: str) -> int:
        """The largest anonymous resident set seen of one process of ``role`` (0 if none)."""
        return max((anon for r, anon in self.anon_peaks.values() if r == role), default=0)

    def count(self, role: str) -> int:
        return sum(1 for r, _ in self.peaks.values() if r == role)


_TICKS = os.sysconf("SC_CLK_TCK")


def _disks() -> list[str]:
    """The machine's whole disks: the entries of ``/sys/block`` backed by a device (no loop,
    ram or device-mapper devices, whose bytes a disk below them counts already)."""
    try:
        return sorted(d.name for d in Path("/sys/block").iterdir() if (d / "device").exists())
    except OSError:
        return []


def disk_bytes(disks: Sequence[str]) -> tuple[int, int]:
    """(read, written) bytes of ``disks`` since boot: ``/proc/diskstats`` counts 512-byte
    sectors (fields 6 and 10), whatever the device's own sector size."""
    read = written = 0
    try:
        lines = (_PROC / "diskstats").read_text().splitlines()
    except OSError:
        return 0, 0
    for line in lines:
        fields = line.split()
        if len(fields) > 9 and fields[2] in disks:
            read += int(fields[5]) * 512
            written += int(fields[9]) * 512
    return read, written


def iowait_seconds() -> float:
    """Seconds all CPUs have spent idle waiting for I/O since boot (``/proc/stat``)."""
    try:
        first = (_PROC / "stat").read_text().split("\n", 1)[0].split()
    except OSError:
        return 0.0
    return int(first[5]) / _TICKS


def _stat(pid: int) -> list[str] | None:
    """The fields of ``/proc/<pid>/stat`` after the command name (state is [0], ppid [1])."""
    try:
        stat = (_PROC / str(pid) / "stat").read_text()
    except OSError:
        return None
    return stat[stat.rindex(")") + 2 :].split()


def _parent(pid: int) -> int | None:
    fields = _stat(pid)
    return None if fields is None else int(fields[1])


def _cpu_seconds(pid: int) -> float | None:
    fields = _stat(pid)  # utime, stime are fields 14 and 15 of stat: [11], [12] here
    return None if fields is None else (int(fields[11]) + int(fields[12])) / _TICKS


def _status(pid: int) -> tuple[int, int, int] | None:
    """(VmHWM, VmRSS, RssAnon) in bytes."""
    try:
        text = (_PROC / str(pid) / "status").read_text()
    except OSError:
        return None
    values = {}
    for line in text.splitlines():
        if line.startswith(("VmHWM:", "VmRSS:", "RssAnon:")):
            name, amount, _unit = line.split()
            values[name] = int(amount) * 1024
    if "VmHWM:" not in values:
        return None  # a zombie
    return values["VmHWM:"], values["VmRSS:"], values.get("RssAnon:", 0)


def _cmdline(pid: int) -> list[str]:
    try:
        raw = (_PROC / str(pid) / "cmdline").read_bytes()
    except OSError:
        return []
    return [part.decode(errors="replace") for part in raw.split(b"\0") if part]


def _tree(root: int) -> dict[int, int]:
    """pid -> parent pid of ``root`` and its descendants."""
    parents: dict[int, int] = {}
    for entry in _PROC.iterdir():
        if entry.name.isdigit():
            parent = _parent(int(entry.name))
            if parent is not None:
                parents[int(entry.name)] = parent
    tree = {root: parents.get(root, 0)}
    frontier = [root]
    children: dict[int, list[int]] = {}
    for pid, parent in parents.items():
        children.setdefault(parent, []).append(pid)
    while frontier:
        pid = frontier.pop()
        for child in children.get(pid, ()):
            tree[child] = pid
            frontier.append(child)
    return tree


#: The modules a Python daemon of Spark's executors runs as (``spark_jobs.worker_daemon`` where
#: the scan starts the JVM itself)
_DAEMONS = ("pyspark.daemon", "spark_jobs.worker_daemon")


def _role(pid: int, root: int, parent_role: str | None, argv: Sequence[str]) -> str:
    if pid == root:
        return "driver"
    if argv and os.path.basename(argv[0]) == "java":
        return "jvm"
    if any(module in argv for module in _DAEMONS):
        return "worker" if parent_role == "daemon" else "daemon"
    if "pyspark.worker" in argv:
        return "worker"
    return "other"


def _wait_gone(pids: set[int], timeout: float = 60.0) -> None:
    """Wait until the command's descendants have exited too (a JVM may outlive the Python
    driver by a few seconds), so that the next run does not share the CPUs with them."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        alive = {pid for pid in pids if (status := _stat(pid)) is not None and status[0] != "Z"}
        if not alive:
            return
        time.sleep(0.1)


def run(
    command: Sequence[str],
    *,
    cpus: set[int] | None = None,
    env: dict[str, str] | None = None,
    limit_bytes: int | None = None,
    interval: float = 0.2,
) -> Measured:
    """Run ``command`` (pinned to ``cpus`` if given, with its descendants) and measure it."""

    def pin() -> None:
        if cpus is not None:
            os.sched_setaffinity(0, cpus)
        os.setpgrp()  # its own process group: killed as one at the limit

    import resource

    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    disks = _disks()
    disk_before, iowait_before = disk_bytes(disks), iowait_seconds()
    started = time.perf_counter()
    process = subprocess.Popen(
        list(command),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        preexec_fn=pin,
    )
    result = Measured(0, 0.0, 0.0, "", "")
    roles: dict[int, str] = {}
    cpu: dict[int, float] = {}
    done = threading.Event()

    def poll() -> None:
        tree: dict[int, int] = {}
        polls = 0
        while not done.is_set():
            if polls % 5 == 0:  # the tree changes rarely: list /proc once a second
                tree = _tree(process.pid)
            polls += 1
            workers = together = anonymous = 0
            for pid in sorted(tree, key=lambda p: (p != process.pid, p)):
                if pid not in roles:
                    roles[pid] = _role(pid, process.pid, roles.get(tree[pid]), _cmdline(pid))
                status = _status(pid)
                if status is None:
                    continue
                hwm, rss, anon = status
                seconds = _cpu_seconds(pid)
                if seconds is not None:
                    cpu[pid] = max(cpu.get(pid, 0.0), seconds)
                role = roles[pid]
                result.peaks[pid] = (role, max(hwm, result.peaks.get(pid, (role, 0))[1]))
                result.anon_peaks[pid] = (
                    role,
                    max(anon, result.anon_peaks.get(pid, (role, 0))[1]),
                )
                together += rss
                anonymous += anon
                if role == "worker":
                    workers += rss
            result.workers_together = max(result.workers_together, workers)
            result.tree_together = max(result.tree_together, together)
            # the ceiling counts what the kernel cannot drop: mapped file pages (the columns a
            # big partition keeps in scratch files, shared by forked processes and counted in
            # each one's resident set) are not the machine's memory
            if limit_bytes is not None and anonymous > limit_bytes and not result.killed_at_limit:
                result.killed_at_limit = True
                os.killpg(process.pid, signal.SIGKILL)
            done.wait(interval)

    poller = threading.Thread(target=poll, daemon=True)
    poller.start()
    out, err = process.communicate()
    done.set()
    poller.join()
    _wait_gone(set(roles) - {process.pid})
    result.wall_seconds = time.perf_counter() - started
    disk_after = disk_bytes(disks)
    result.disk_read_bytes = disk_after[0] - disk_before[0]
    result.disk_written_bytes = disk_after[1] - disk_before[1]
    result.iowait_seconds = iowait_seconds() - iowait_before
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    waited = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    result.cpu_seconds = max(waited, sum(cpu.values()))
    result.returncode = process.returncode
    result.stdout, result.stderr = out, err
    return result
