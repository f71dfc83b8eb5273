"""What a broker's log dirs say a restart has to do: the denominators of restart progress.

Read before (or while) the broker loads them, with a directory listing and two small reads per
log dir, all through :mod:`offsets_auditor.logdir.fs` (read-only):

- partitions: every sub-directory of a log dir, which is what ``LogManager.loadLogs`` loads (it
  lists ``dir.listFiles`` and keeps directories; 3.x skips ``remote-log-index-cache`` and the KRaft
  ``__cluster_metadata`` log, which the raft layer loads instead);
- segments to recover: without the clean-shutdown marker ``.kafka_cleanshutdown``, ``recoverLog``
  recovers ``logSegments(recoveryPoint, Long.MaxValue)``: the segment holding the partition's
  recovery point (``floorKey``) and every later one, or all segments when none starts at or
  below it (0.9 ``Log.scala``, 2.3 ``Log.scala``, 3.9 ``LogLoader.scala`` + ``LogSegments.java``).
  A partition missing from ``recovery-point-offset-checkpoint`` recovers from offset 0, and so
  does every partition of a log dir whose checkpoint the broker cannot read (it is parsed with
  the broker's reader, :mod:`offsets_auditor.logdir.checkpoints`).
- ``__consumer_offsets`` partitions and their bytes: what the group coordinator would read.

This module does not depend on the log-dir reader (``offsets_auditor.logdir.model``): it needs only
names, sizes and the recovery-point checkpoint.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from offsets_auditor.constants import OFFSETS_TOPIC
from offsets_auditor.logdir import fs
from offsets_auditor.logdir.checkpoints import parse_offset_checkpoint
from offsets_auditor.logdir.layout import (
    CLEAN_SHUTDOWN_FILE,
    NOT_LOADED_BY_LOG_MANAGER,
    CheckpointFileName,
    DirState,
    parse_partition_dir_name,
    segment_file,
)
from offsets_auditor.versions import DEFAULT_KAFKA_VERSION, KafkaVersion

RECOVERY_POINT_CHECKPOINT = CheckpointFileName.RECOVERY_POINT.value
#: rewritten every few seconds by a running broker (``ReplicaManager.HighWatermarkFilename``)
REPLICATION_CHECKPOINT = CheckpointFileName.REPLICATION.value


@dataclass(frozen=True, slots=True)
class PartitionDir:
    """One partition directory: its name, segment base offsets, bytes of its ``.log`` files and
    how many segments the broker recovers after an unclean shutdown."""

    name: str
    segment_bases: tuple[int, ...]
    log_bytes: int
    recovery_point: int
    segments_to_recover: int
    #: the log dir it is in, and the segments from its recovery point on whatever the marker
    #: says (what an unclean start recovers)
    log_dir: str = ""
    segments_from_recovery_point: int = 0


@dataclass(frozen=True, slots=True)
class LogDirTotals:
    """The totals of one or more log dirs. ``clean_shutdown`` is per log dir.

    ``read_at_ms`` is when the dirs were listed (epoch ms, the caller's clock) and
    ``checkpoint_written_ms`` the modification time of each dir's
    ``replication-offset-checkpoint``, which a running broker rewrites every
    ``replica.high.watermark.checkpoint.interval.ms`` (5000 by default) for every dir holding a
    partition (0.9.0.1, 2.3.0, 3.9.0-rc3 ``ReplicaManager.checkpointHighWatermarks``, scheduled
    as "highwatermark-checkpoint")."""

    log_dirs: tuple[str, ...]
    partitions: tuple[PartitionDir, ...]
    clean_shutdown: dict[str, bool] = field(default_factory=dict)
    problems: tuple[str, ...] = ()
    read_at_ms: int | None = None
    checkpoint_written_ms: dict[str, int | None] = field(default_factory=dict)

    def segments_from_recovery_points(self, log_dirs: set[str] | None = None) -> int:
        """Segments an unclean start recovers in ``log_dirs`` (all when ``None``), whatever the
        clean-shutdown marker says now."""
        return sum(
            p.segments_from_recovery_point
            for p in self.partitions
            if log_dirs is None or p.log_dir in log_dirs
        )

    def partition_dirs_in(self, log_dir: str) -> int:
        return sum(1 for p in self.partitions if p.log_dir == log_dir)

    @property
    def partition_count(self) -> int:
        return len(self.partitions)

    @property
    def segment_count(self) -> int:
        return sum(len(p.segment_bases) for p in self.partitions)

    @property
    def segments_to_recover(self) -> int:
        return sum(p.segments_to_recover for p in self.partitions)

    def offsets_partition_bytes(self) -> dict[int, int]:
        """``__consumer_offsets`` partition number -> bytes of its ``.log`` segments."""
        sizes: dict[int, int] = {}
        for p in self.partitions:
            parsed = parse_partition_dir_name(p.name)
            if parsed is not None and parsed[0] == OFFSETS_TOPIC and parsed[2] is DirState.LIVE:
                sizes[parsed[1]] = sizes.get(parsed[1], 0) + p.log_bytes
        return sizes


@dataclass(frozen=True, slots=True)
class RecoveryPoints:
    """A log dir's recovery points as the broker reads them: ``points`` maps
    ``"topic-partition"`` to the offset; ``problem`` is the broker's exception text when it
    cannot read the file, in which case every partition of the dir recovers from 0."""

    points: dict[str, int]
    problem: str | None = None


def parse_recovery_points(
    text: str, *, version: KafkaVersion | None = None, location: str = RECOVERY_POINT_CHECKPOINT
) -> RecoveryPoints:
    """``recovery-point-offset-checkpoint`` read with the broker's own reader
    (:func:`offsets_auditor.logdir.checkpoints.parse_offset_checkpoint`). A file the broker cannot
    read (a malformed line, a wrong count or version: a torn write) makes ``LogManager.loadLogs``
    warn "Resetting the recovery checkpoint to 0" and recover every partition of the dir from
    offset 0 (0.9.0.1 and 2.3.0 ``LogManager.scala``; 3.9.0-rc3 "resetting the recovery
    checkpoint to 0"), so no entry of it counts. ``version`` picks the broker's wording."""
    checkpoint = parse_offset_checkpoint(
        text,
        version=version or KafkaVersion.parse(DEFAULT_KAFKA_VERSION),
        location=location,
        file=RECOVERY_POINT_CHECKPOINT,
    )
    if not checkpoint.readable_by_broker:
        problem = "; ".join(f.detail for f in checkpoint.findings)
        return RecoveryPoints({}, f"{problem}: the broker recovers every partition from 0")
    return RecoveryPoints({f"{t}-{p}": offset for (t, p), offset in checkpoint.offsets().items()})


def segments_to_recover(bases: Sequence[int], recovery_point: int) -> int:
    """How many of ``bases`` (sorted segment base offsets) ``recoverLog`` visits: the segment
    holding ``recovery_point`` (``floorKey``) and all later ones; all if none is at or below."""
    floor = None
    for base in bases:
        if base <= recovery_point:
            floor = base
    if floor is None:
        return len(bases)
    return sum(1 for base in bases if base >= floor)


def read_log_dir_totals(
    log_dirs: Sequence[Path], version: KafkaVersion | None = None, read_at_ms: int | None = None
) -> LogDirTotals:
    """List each log dir (read-only). Unreadable entries become ``problems``, not exceptions.
    ``version`` picks the broker's wording for a checkpoint it cannot read; ``read_at_ms`` is
    the time of the listing (the caller's clock), for telling a broker that no longer writes
    its checkpoints."""
    partitions: list[PartitionDir] = []
    clean: dict[str, bool] = {}
    problems: list[str] = []
    written: dict[str, int | None] = {}
    for log_dir in log_dirs:
        try:
            entries = fs.list_dir(log_dir)
        except OSError as e:
            problems.append(f"{log_dir}: cannot list: {e.strerror or e}")
            continue
        names = {e.name for e in entries}
        is_clean = CLEAN_SHUTDOWN_FILE in names
        clean[str(log_dir)] = is_clean
        written[str(log_dir)] = next(
            (e.mtime_ms for e in entries if e.name == REPLICATION_CHECKPOINT), None
        )
        points: dict[str, int] = {}
        if RECOVERY_POINT_CHECKPOINT in names:
            try:
                path = log_dir / RECOVERY_POINT_CHECKPOINT
                raw = fs.read_small_file(path, limit=1 << 24)
                read = parse_recovery_points(
                    raw.decode("utf-8", errors="replace"), version=version, location=str(path)
                )
                points = read.points
                if read.problem is not None:
                    problems.append(f"{path}: {read.problem}")
            except (OSError, ValueError) as e:
                problems.append(f"{log_dir / RECOVERY_POINT_CHECKPOINT}: {e}")
        for entry in entries:
            if not entry.is_dir or entry.name in NOT_LOADED_BY_LOG_MANAGER:
                continue
            try:
                files = fs.list_dir(entry.path)
            except OSError as e:
                problems.append(f"{entry.path}: cannot list: {e.strerror or e}")
                files = []
            segments = sorted(
                (found[0], f.size)
                for f in files
                if not f.is_dir
                and (found := segment_file(f.name)) is not None
                and found[1] == "log"
            )
            bases = tuple(base for base, _ in segments)
            point = points.get(entry.name, 0)
            unflushed = segments_to_recover(bases, point)
            partitions.append(
                PartitionDir(
                    name=entry.name,
                    segment_bases=bases,
                    log_bytes=sum(size for _, size in segments),
                    recovery_point=point,
                    segments_to_recover=0 if is_clean else unflushed,
                    log_dir=str(log_dir),
                    segments_from_recovery_point=unflushed,
                )
            )
    return LogDirTotals(
        log_dirs=tuple(str(d) for d in log_dirs),
        partitions=tuple(partitions),
        clean_shutdown=clean,
        problems=tuple(problems),
        read_at_ms=read_at_ms,
        checkpoint_written_ms=written,
    )
