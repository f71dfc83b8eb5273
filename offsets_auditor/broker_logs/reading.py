"""A broker's cleaner history from its log files: the one call that touches the disk.

``--cleaner-log FILE`` names the live log (its rotated files beside it are read too, oldest
first); several FILEs are read as given, ordered as rotated files are when their names say
so. ``server.log`` is read as well when given: 3.5-3.9 print the cleaner threads' "Starting",
"Stopped" and "Error due to" there (:mod:`.cleaner_lines`).
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
    rotation_key,
)
from offsets_auditor.broker_logs.history import CleanerHistory, fold, merged
from offsets_auditor.broker_logs.records import records


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
