"""The names in a broker log dir, as the broker reads them: one home for every reader of a log
dir here (the log dir's model, the restart totals, the log dir's shape, version detection).

Sources: 0.9.0.1, 2.3.0 and 3.9.0-rc3 ``Log.scala``/``LocalLog.scala`` (``LogFileSuffix``,
``offsetFromFileName``: the name up to its first ``.``, parsed with ``toLong``, so a base offset
of any number of digits), ``LogManager.scala`` (``CleanShutdownFile``, ``LockFile``,
``RecoveryPointCheckpointFile`` ...; ``loadLogs``), ``Log.parseTopicPartitionName``.
"""

from __future__ import annotations

import re
from enum import StrEnum
from typing import Final

#: ``meta.properties``: the broker (and cluster) the log dir belongs to
META_PROPERTIES: Final = "meta.properties"
#: ``LogManager.CleanShutdownFile``: written at a clean shutdown, deleted when the logs load
CLEAN_SHUTDOWN_FILE: Final = ".kafka_cleanshutdown"
#: ``LogManager.LockFile``: the running broker's exclusive lock on the log dir
LOCK_FILE: Final = ".lock"
#: the per-partition files that are neither segments nor indexes
LEADER_EPOCH_CHECKPOINT: Final = "leader-epoch-checkpoint"
PARTITION_METADATA: Final = "partition.metadata"


class CheckpointFileName(StrEnum):
    """The checkpoint files at the root of a log dir (docs/kafka-internals.md §4.8)."""

    CLEANER = "cleaner-offset-checkpoint"
    RECOVERY_POINT = "recovery-point-offset-checkpoint"
    REPLICATION = "replication-offset-checkpoint"
    LOG_START = "log-start-offset-checkpoint"


#: The files the broker writes at the root of a log dir.
ROOT_FILES: Final = frozenset(
    {META_PROPERTIES, CLEAN_SHUTDOWN_FILE, LOCK_FILE, *(name.value for name in CheckpointFileName)}
)
#: Root dirs that are not partitions: 3.9.0-rc3 ``LogManager.loadLogs`` skips
#: ``RemoteIndexCache.DIR_NAME``.
NOT_PARTITIONS: Final = frozenset({"remote-log-index-cache"})
#: Partition dirs ``LogManager.loadLogs`` does not load (nor recover): 3.x's KRaft metadata log
#: (``KafkaRaftServer.MetadataTopic``), which the raft layer loads itself.
NOT_LOADED_BY_LOG_MANAGER: Final = NOT_PARTITIONS | {"__cluster_metadata-0"}

#: ``<base offset>.<suffix>``: a segment's log, its indexes and its producer snapshot.
SEGMENT_FILE: Final = re.compile(r"^(\d+)\.(log|index|timeindex|txnindex|snapshot)$", re.ASCII)
#: The suffixes that make a file part of a segment.
SEGMENT_SUFFIXES: Final = (".log", ".index", ".timeindex", ".txnindex")
#: ``.deleted`` (async deletion), ``.cleaned`` (cleaner output), ``.swap`` (a swap under way).
LEFTOVER: Final = re.compile(r"\.(deleted|cleaned|swap)$")
#: ``topic-partition.uniqueId-delete`` / ``-future`` / ``-stray``.
SUFFIXED_DIR: Final = re.compile(r"^(\S+)-(\S+)\.(\S+)-(delete|future|stray)$")
#: The largest base offset (``Long.MaxValue``).
MAX_LONG: Final = 2**63 - 1


class DirState(StrEnum):
    """What a partition directory's name says about it."""

    LIVE = "live"
    DELETE = "delete"  # topic-partition.uniqueId-delete: deletion in progress
    FUTURE = "future"  # topic-partition.uniqueId-future: replica moving between log dirs
    STRAY = "stray"  # topic-partition.uniqueId-stray (3.x KRaft)


def parse_partition_dir_name(name: str) -> tuple[str, int, DirState] | None:
    """``Log.parseTopicPartitionName`` (2.3.0 ``Log.scala``; 3.9.0-rc3 ``LocalLog.scala``):
    ``None`` where the broker throws "... is not in the form of topic-partition ..."."""
    state = DirState.LIVE
    base = name
    for candidate in (DirState.DELETE, DirState.FUTURE, DirState.STRAY):
        if name.endswith("-" + candidate.value):
            if SUFFIXED_DIR.match(name) is None:
                return None
            state = candidate
            base = name[: name.rindex(".")]
            break
    if "-" not in base:
        return None
    topic, _, number = base.rpartition("-")
    if not topic or re.fullmatch(r"[+-]?\d+", number) is None:
        return None
    partition = int(number)
    if not -(2**31) <= partition < 2**31:
        return None
    return topic, partition, state


def segment_file(name: str) -> tuple[int, str] | None:
    """``(base offset, suffix)`` of a segment's file (``log``, ``index``, ``timeindex``,
    ``txnindex``, ``snapshot``), or None for any other name."""
    match = SEGMENT_FILE.match(name)
    if match is None or int(match.group(1)) > MAX_LONG:
        return None
    return int(match.group(1)), match.group(2)


def segment_name(base_offset: int, suffix: str) -> str:
    """The name the broker gives a segment's file: the base offset in 20 digits
    (``Log.filenamePrefixFromOffset``) and the suffix (``log``, ``index`` ...)."""
    return f"{base_offset:020d}.{suffix}"
