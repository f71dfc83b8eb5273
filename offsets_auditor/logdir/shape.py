"""Whether a directory looks like a broker log dir (one ``log.dirs`` entry), and which of its
subdirectories do when it does not: the check the commands make before reading one.

A log dir holds, at its root, ``meta.properties``, the offset checkpoints, the clean-shutdown
marker, or partition directories (``<topic>-<partition>``, ``Log.parseTopicPartitionName``)
holding segments (docs/kafka-internals.md §4.8, §5.4). A directory with none of these is most
likely the parent of one (a fixture or backup directory, ``/var/lib/kafka`` instead of
``/var/lib/kafka/data``).
"""

from __future__ import annotations

from pathlib import Path

from offsets_auditor.logdir import fs
from offsets_auditor.logdir.layout import (
    CLEAN_SHUTDOWN_FILE,
    LEADER_EPOCH_CHECKPOINT,
    META_PROPERTIES,
    PARTITION_METADATA,
    CheckpointFileName,
    parse_partition_dir_name,
    segment_file,
)

_ROOT_MARKS = {META_PROPERTIES, CLEAN_SHUTDOWN_FILE, *(name.value for name in CheckpointFileName)}
#: how deep and how wide the search for log dirs below a wrong directory goes
_DEPTH = 2
_MAX_SUGGESTIONS = 10
_MAX_ENTRIES = 2000


def looks_like_log_dir(path: Path) -> bool:
    """True when ``path`` holds ``meta.properties``, a checkpoint file, the clean-shutdown
    marker, or a partition directory with a segment or a leader-epoch checkpoint in it. A
    directory that cannot be listed counts as one (the reader then reports why)."""
    try:
        entries = fs.list_dir(path)
    except OSError:
        return True
    if any(not e.is_dir and e.name in _ROOT_MARKS for e in entries):
        return True
    return any(e.is_dir and _is_partition_dir(e.path, e.name) for e in entries[:_MAX_ENTRIES])


def _is_partition_dir(path: Path, name: str) -> bool:
    if parse_partition_dir_name(name) is None:
        return False
    try:
        files = fs.list_dir(path)
    except OSError:
        return False
    return any(
        (segment_file(f.name) or (0, ""))[1] == "log"
        or f.name in (LEADER_EPOCH_CHECKPOINT, PARTITION_METADATA)
        for f in files
    )


def log_dirs_below(path: Path, depth: int = _DEPTH) -> list[Path]:
    """Subdirectories of ``path`` (down to ``depth`` levels, in name order) that look like log
    dirs; at most a few."""
    found: list[Path] = []
    level = [path]
    for _ in range(depth):
        below: list[Path] = []
        for directory in level:
            try:
                entries = fs.list_dir(directory)
            except OSError:
                continue
            for entry in entries[:_MAX_ENTRIES]:
                if not entry.is_dir:
                    continue
                if looks_like_log_dir(entry.path):
                    found.append(entry.path)
                    if len(found) >= _MAX_SUGGESTIONS:
                        return found
                else:
                    below.append(entry.path)
        level = below
    return found


def not_a_log_dir_message(path: Path) -> str:
    """The error for a ``path`` that does not look like a log dir, with the subdirectories that
    do."""
    message = (
        f"{path} does not look like a Kafka log dir (a `log.dirs` entry): it holds no partition"
        " directories, no checkpoint files and no meta.properties"
    )
    below = log_dirs_below(path)
    if below:
        more = " ..." if len(below) >= _MAX_SUGGESTIONS else ""
        message += "; these subdirectories do: " + " ".join(str(p) for p in below) + more
    return message
