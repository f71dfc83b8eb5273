"""``offsets-auditor audit --jobs N``: the stages of ``audit.stages`` over a pool of N processes.

Stage A is order-free (``cleaner.segment_facts``, ``groups.delta``): every segment of every
partition is read by whichever worker is free, so one huge partition spreads over every core as
much as many small ones do. A worker opens its segment by name, checks that it is the file the
partition's snapshot listed and reads it up to its listed size (``fs.open_as_listed``, as the
scan's executors do); a segment renamed or replaced since is read by the parent through the
snapshot's own descriptor instead. The worker sends its cleaner columns to files in a scratch
directory as it reads (``cleaner.spilled_columns``), then the rest of its result to one more
file (``mapped_pickle``); the parent maps both back, so a segment's result (some 15 MB of
arrays for 100 MB of commits) crosses between processes without being copied or pickled
whole, and the parent's memory does not grow with it.

Stage B runs in the parent, partition after partition in offset order, while the workers read
the partitions that follow (up to ``LOOKAHEAD`` partitions ahead); its per-record state lives in
files of the scratch directory too (``cleaner.arrays.FileArrays``). A big partition emulated at
several configs (the versions of a detected range whose cleaners differ) has each config's
emulation in a process forked for it once the partition is folded; a big partition emulated
once spreads that emulation's independent parts over forked processes instead
(``cleaner.cores``: the map size it needs beside the passes, a pass's retention filter by
segments). Stage C is the same.

The scratch directory (``tempfile``'s: ``TMPDIR``) takes about 40 bytes per record of the
partitions being read and folded, and is removed as each partition is done.
"""

from __future__ import annotations

import gc
import multiprocessing
import os
import shutil
import signal
import tempfile
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack, suppress
from dataclasses import dataclass, replace
from functools import partial
from multiprocessing.connection import Connection, wait
from multiprocessing.pool import AsyncResult
from multiprocessing.process import BaseProcess
from pathlib import Path
from typing import Any, TypeVar, cast

from offsets_auditor import mapped_pickle
from offsets_auditor.audit.collector import cyclic_gc_paused
from offsets_auditor.audit.group_recovery import GroupsPlan
from offsets_auditor.audit.partition import BrokerAudit, Emulated
from offsets_auditor.audit.plan import AuditPlan
from offsets_auditor.audit.shared_emulations import config_groups, emulate_group, in_config_order
from offsets_auditor.audit.stages import (
    EMULATIONS_APART_RECORDS,
    FoldedPartition,
    LogDirWork,
    PartitionOutcome,
    SegmentResult,
    audit_log_dir,
    audit_partition,
    conclude,
    emulate_each,
    emulate_folded,
    log_dir_work,
    read_segment_result,
)
from offsets_auditor.cleaner.arrays import Arrays, FileArrays
from offsets_auditor.cleaner.config import CleanerConfig
from offsets_auditor.cleaner.spilled_columns import SpilledColumns, empty_columns, mapped_columns
from offsets_auditor.findings import Finding
from offsets_auditor.logdir import fs
from offsets_auditor.logdir.model import (
    PartitionDir,
    PartitionSnapshot,
    offsets_partitions,
    open_partition,
)
from offsets_auditor.reader.reading import DEFAULT_READ, ReadOptions, segment_label
from offsets_auditor.version_detection.collect import Each, in_turn

_In = TypeVar("_In")
_Out = TypeVar("_Out")

#: Partitions whose segments are handed to the workers before the parent folds the first.
LOOKAHEAD = 4

#: The file of a segment's spill directory that holds its result without the columns.
_RESULT = "result"


def default_jobs() -> int:
    """The cores this process may run on (``sched_getaffinity``: a ``taskset`` is honoured)."""
    return len(os.sched_getaffinity(0))


@dataclass
class _Queued:
    """A partition whose segments are being read: its snapshot (held open by ``stack``), the
    workers' reads of its segments in offset order, its scratch directory."""

    stack: ExitStack
    snapshot: PartitionSnapshot
    #: taken from the left as folded; True: the worker wrote the segment's result
    reads: deque[AsyncResult[bool]]
    spill: Path


def audit_log_dir_on(
    path: Path, audit_plan: AuditPlan, read: ReadOptions = DEFAULT_READ, jobs: int = 1
) -> BrokerAudit:
    """``offsets-auditor audit`` of one log dir on ``jobs`` processes (1: this one,
    ``audit.stages.audit_log_dir``)."""
    if jobs <= 1:
        return audit_log_dir(path, audit_plan, read)
    return audit_log_dir_in_parallel(log_dir_work(path, audit_plan), audit_plan, read, jobs)


@cyclic_gc_paused()
def audit_log_dir_in_parallel(
    work: LogDirWork, audit_plan: AuditPlan, read: ReadOptions, jobs: int
) -> BrokerAudit:
    """``audit.stages.audit_log_dir`` with stage A on ``jobs`` processes (see the module)."""
    config = audit_plan.config
    outcomes: list[PartitionOutcome] = []
    read_findings: list[Finding] = []
    scratch = Path(tempfile.mkdtemp(prefix="offsets-auditor-"))
    queued: deque[_Queued] = deque()

    def fold_next() -> None:
        q = queued.popleft()
        with q.stack:
            partition = q.snapshot.partition
            outcomes.append(
                audit_partition(
                    work,
                    partition,
                    _results(q, work, read),
                    audit_plan.configs,
                    audit_plan.now_ms,
                    FileArrays(q.spill),
                    lambda *args: _emulate_in_parallel(*args, jobs=jobs),
                    listing=audit_plan.settings.listing,
                )
            )
        remove_scratch(q.spill, jobs)

    try:
        with multiprocessing.get_context("fork").Pool(jobs, _stage_worker) as pool:
            for index, listed in enumerate(offsets_partitions(work.model)):
                stack = ExitStack()  # the snapshot's files stay open until it is folded
                snapshot = stack.enter_context(
                    open_partition(work.model, listed, config.kafka_version)
                )
                read_findings.extend(snapshot.findings)
                spill = scratch / str(index)
                spill.mkdir()
                partition = snapshot.partition
                reads = deque(
                    pool.apply_async(
                        _read_segment,
                        (
                            replace(partition, segments=(segment,)),
                            work.groups_plan,
                            read,
                            spill / str(i),
                            i < len(partition.segments) - 1,
                        ),
                    )
                    for i, segment in enumerate(partition.segments)
                )
                queued.append(_Queued(stack, snapshot, reads, spill))
                while len(queued) > LOOKAHEAD:
                    fold_next()
            while queued:
                fold_next()
    finally:
        for q in queued:
            q.stack.close()
        shutil.rmtree(scratch, ignore_errors=True)
    return conclude(audit_plan, work, outcomes, read_findings)


def remove_scratch(directory: Path, jobs: int) -> None:
    """``directory`` and everything in it, its files unlinked by ``jobs`` threads at once: a
    file system mounted with ``discard`` trims a file's blocks as it is unlinked and waits for
    the disk (2.2 s for a 20 GiB partition's 7 GB of scratch on one thread)."""
    files = [Path(root) / name for root, _, names in os.walk(directory) for name in names]
    with ThreadPoolExecutor(max(jobs, 1)) as pool:
        pool.map(_unlink_if_there, files)
    shutil.rmtree(directory, ignore_errors=True)


def _unlink_if_there(path: Path) -> None:
    with suppress(OSError):  # what is left is rmtree's, which ignores errors
        path.unlink()


def _results(q: _Queued, work: LogDirWork, read: ReadOptions) -> Iterator[SegmentResult]:
    """The partition's segment results in offset order, as the workers finish them, mapped
    from the files the worker wrote; a segment the worker did not find as listed is read
    here, through the snapshot."""
    partition = q.snapshot.partition
    for i, segment in enumerate(partition.segments):
        spill = q.spill / str(i)
        if q.reads.popleft().get():
            result: SegmentResult = mapped_pickle.read(spill / _RESULT)
            # the map holds the file's pages until the fold is done with the result; unlinked
            # now, they are freed then (dirty ones unwritten), not with the partition's scratch
            (spill / _RESULT).unlink()
            yield replace(result, facts=replace(result.facts, columns=mapped_columns(spill)))
        else:
            shutil.rmtree(spill, ignore_errors=True)
            yield read_segment_result(
                partition,
                segment,
                work.groups_plan,
                read.from_snapshot(q.snapshot),
                SpilledColumns(spill),
            )


def _read_segment(
    partition: PartitionDir,
    groups_plan: GroupsPlan | None,
    read: ReadOptions,
    spill: Path,
    rolled: bool,
) -> bool:
    """Stage A of ``partition``'s one segment in a worker: its columns to files in ``spill``,
    the rest to ``spill/result`` (False: the file is not the one listed any more, nothing was
    written). A ``rolled`` segment is read once (``fs.ReadOnlyFile.read_once``)."""
    (segment,) = partition.segments
    listed = segment.log
    try:
        source = fs.open_as_listed(partition.path / listed.name, listed.identity, listed.size)
    except OSError:
        return False
    if rolled:
        source.read_once()
    label = segment_label(partition, segment)
    with source:
        result = read_segment_result(
            partition,
            segment,
            groups_plan,
            lambda _p, _s: read.source(source, label),
            SpilledColumns(spill),
        )
    rest = replace(result, facts=replace(result.facts, columns=empty_columns()))
    mapped_pickle.write(spill / _RESULT, rest)
    return True


def _emulate_in_parallel(
    work: LogDirWork,
    folded: FoldedPartition,
    configs: Sequence[CleanerConfig],
    now_ms: int,
    arrays: Arrays,
    *,
    jobs: int,
) -> list[Emulated | None]:
    """``audit.stages.emulate_folded`` at each group of configs (``audit.shared_emulations``:
    once for configs the partition cannot tell apart), each group in a process of its own (up to
    ``jobs`` at a time), forked once the partition is folded: they share its columns and key
    ids (mapped files, or pages the fork shares), each keeps its own survivor flags, and each
    sends back its passes and verdict facts, not the partition. A partition emulated once has
    that emulation's independent parts forked instead (``ForkedCores``)."""
    groups = config_groups(configs)
    if folded.scan.records < EMULATIONS_APART_RECORDS:
        return emulate_each(work, folded, configs, now_ms, arrays)
    if len(groups) < 2:  # one emulation: its independent parts apart
        return emulate_each(work, folded, configs, now_ms, arrays, ForkedCores(jobs))

    def emulate(config: CleanerConfig) -> Emulated | None:
        return emulate_folded(work, folded, config, now_ms, arrays)

    return in_config_order(
        groups, _forked_map(lambda g: emulate_group(emulate, configs, g), groups, jobs)
    )


def forked_each(jobs: int) -> Each:
    """``each(function, items)`` (``version_detection.collect.Each``) on a pool of ``jobs``
    processes forked from this one, an item at a time to whichever is free (in this one when
    ``jobs`` is 1, or for fewer than two items): version detection summarizes the offsets
    partitions' newest segments on every core. ``function`` goes to the pool pickled: a
    module-level function."""
    if jobs <= 1:
        return in_turn

    def each(function: Callable[[_In], _Out], items: Sequence[_In], /) -> list[_Out]:
        if len(items) < 2:
            return in_turn(function, items)
        context = multiprocessing.get_context("fork")
        with context.Pool(min(jobs, len(items)), _ignore_interrupts) as pool:
            return pool.map(function, items, chunksize=1)

    return each


@dataclass(frozen=True, slots=True)
class ForkedCores:
    """``cleaner.cores.Cores`` on ``count`` processes forked from this one: they share its
    mappings (the partition's columns, key ids and survivor flags) and send back only their
    results."""

    count: int

    def each(self, function: Callable[[_In], _Out], items: Sequence[_In], /) -> list[_Out]:
        return _forked_map(function, items, self.count)

    def aside(self, function: Callable[[], _Out], /) -> Callable[[], _Out]:
        receive, process = _fork(function)

        def result() -> _Out:
            value: _Out = _result_of(receive, process)
            return value

        return result


def _forked_map(function: Callable[[_In], _Out], items: Sequence[_In], jobs: int) -> list[_Out]:
    """``function`` of each item, each in a process forked from this one (so ``function`` may
    be a closure over anything here), ``jobs`` at a time: the next is forked as soon as one
    ends; results come back pickled, in the items' order."""
    results: dict[int, _Out] = {}
    running: dict[Connection, tuple[int, BaseProcess]] = {}
    pending = list(enumerate(items))[::-1]
    try:
        while pending or running:
            while pending and len(running) < max(jobs, 1):
                index, item = pending.pop()
                receive, process = _fork(partial(function, item))
                running[receive] = (index, process)
            for ready in wait(list(running)):
                done = cast(Connection, ready)
                index, ended = running.pop(done)
                results[index] = _result_of(done, ended)
    finally:
        for _, left in running.values():
            left.kill()
            left.join()
    return [results[i] for i in range(len(items))]


def _fork(function: Callable[[], _Out]) -> tuple[Connection, BaseProcess]:
    """``function`` started in a process forked from this one; its result (or its error)
    comes back pickled through the connection (:func:`_result_of`)."""
    context = multiprocessing.get_context("fork")
    receive, send = context.Pipe(duplex=False)

    def child() -> None:
        _ignore_interrupts()
        try:
            send.send((True, function()))
        except BaseException as error:  # the parent raises it
            send.send((False, f"{type(error).__name__}: {error}"))

    process = context.Process(target=child, daemon=True)
    process.start()
    send.close()
    return receive, process


def _result_of(receive: Connection, process: BaseProcess) -> Any:
    """What the forked ``process`` sent back, once it ended; raises its error."""
    try:
        ok, value = receive.recv()
    except EOFError:
        process.join()
        ok, value = False, f"the process died (exit {process.exitcode})"
    process.join()
    receive.close()
    if not ok:
        raise RuntimeError(f"emulation in a forked process failed: {value}")
    return value


def _stage_worker() -> None:
    """A pool process: it runs stage A only, with the cyclic collector off as the stages run
    (``audit.collector``), between them too (it lives for one audit)."""
    _ignore_interrupts()
    gc.disable()


def _ignore_interrupts() -> None:
    """Ctrl-C goes to the parent, which ends the pool."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
