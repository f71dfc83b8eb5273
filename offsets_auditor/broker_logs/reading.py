"""A broker's cleaner history from its log files: the one call that touches the disk.

``--cleaner-log FILE`` names the live log (its rotated files beside it are read too, oldest
first); several FILEs are read as given, ordered as rotated files are when their names say
so. ``server.log`` is read as well when given: 3.5-3.9 print the cleaner threads' "Starting",
"Stopped" and "Error due to" there (:mod:`.cleaner_lines`).

Where the log is when not given (:func:`find_cleaner_log`): Kafka's ``config/log4j.properties``
(0.9.0.1 to 3.9) writes ``log-cleaner.log`` into ``${kafka.logs.dir}``, the directory of
``server.log`` (``log4j.appender.cleanerAppender.File=${kafka.logs.dir}/log-cleaner.log``,
``log4j.appender.kafkaAppender.File=${kafka.logs.dir}/server.log``), so it is looked for beside
the server log, or, without one, where the server log is looked for beside the log dir
(``offsets_auditor.logdir.server_log``). Nothing is searched.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path

from offsets_auditor.broker_logs import events as ev
from offsets_auditor.broker_logs.cleaner_lines import events_of
from offsets_auditor.broker_logs.files import (
    LogRead,
    SourcedLine,
    read_lines,
    read_rotated,
    rotated_set,
    rotation_key,
)
from offsets_auditor.broker_logs.history import CleanerHistory, fold, merged
from offsets_auditor.broker_logs.records import records
from offsets_auditor.logdir import fs

#: The live cleaner log's name (``config/log4j.properties``, ``log4j2.yaml``).
CLEANER_LOG = "log-cleaner.log"
#: Where it is looked for, relative to the log dir's parent, in this order (as ``server.log``).
BESIDE = ("", "logs")


def cleaner_log_exists(path: Path) -> bool:
    """Whether ``path`` (a ``--cleaner-log``) is a file, or the live name of rotated files."""
    return fs.is_readable_file(path) or bool(rotated_set(path))


def find_cleaner_log(directory: Path, places: Sequence[str] = BESIDE) -> Path | None:
    """``log-cleaner.log`` in the first of ``places`` (relative to ``directory``) that holds it
    or a rotated file of it (the live file may be missing between a rename and the next
    write): that path, whose rotated set :func:`read_history` reads; or None."""
    for place in places:
        path = directory / place / CLEANER_LOG if place else directory / CLEANER_LOG
        if rotated_set(path):
            return path
    return None


def log_lines(paths: Sequence[Path], read: LogRead) -> Iterator[SourcedLine]:
    """One path: that log and its rotated files; several: those files, oldest first."""
    if len(paths) == 1:
        return read_rotated(paths[0], read)
    live = min((p.name for p in paths), key=len)
    keyed = sorted(
        enumerate(paths),
        key=lambda ip: (rotation_key(live, ip[1].name) or (0, ()), ip[0]),
    )
    return read_lines([p for _, p in keyed], read)


def cleaner_events(paths: Sequence[Path], read: LogRead) -> Iterator[ev.CleanerEvent]:
    return events_of(records(log_lines(paths, read)))


def read_history(
    cleaner_logs: Sequence[Path], server_logs: Sequence[Path] = ()
) -> tuple[CleanerHistory, LogRead]:
    """The cleaner's history from its logs; the :class:`LogRead` says what could not be read
    (findings with file and position) and what rotations were followed."""
    read = LogRead()
    streams = [cleaner_events(cleaner_logs, read)] if cleaner_logs else []
    if server_logs:
        streams.append(cleaner_events(server_logs, read))
    return fold(merged(*streams)), read
