"""Lines of a broker log into log4j records: a timestamped line and the lines that follow it.

Kafka's layout is ``[%d] %p %m (%c)%n`` (``config/log4j.properties`` 0.9.0.1 to 3.9,
``config/log4j2.yaml`` 4.x). A message with newlines in it (the cleaner's statistics banner)
spans several lines and its ``(%c)`` ends the last of them; a logged exception's stack trace
follows the line, one frame per line. So a record is a line that opens with a timestamp
(:func:`offsets_auditor.restart.log_lines.parse_header`) and every line after it up to the
next such line.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from datetime import datetime

from offsets_auditor.broker_logs.files import SourcedLine
from offsets_auditor.restart.log_lines import LogLine, looks_timestamped, parse_header

#: Continuation lines kept per record (a stack trace is cut here; the rest is counted).
MAX_CONTINUATION_LINES = 400

_TRAILING_LOGGER = re.compile(r"^\s*\((?P<logger>[\w.$]+)\)\s*$")


@dataclass(frozen=True, slots=True)
class Place:
    """Where a record starts: the file as named, its 1-based line and byte position."""

    file: str
    line: int
    position: int


@dataclass(frozen=True, slots=True)
class Record:
    """One log4j record: ``message`` is the first line's message; ``continuation`` the lines
    after it (banner lines, or the exception and its stack trace); ``logger`` the ``%c`` from
    the first line or, for a multi-line message, from the last one (``None`` if absent)."""

    at: datetime
    level: str
    message: str
    logger: str | None
    continuation: tuple[str, ...]
    place: Place
    dropped_lines: int = 0

    @property
    def short_logger(self) -> str | None:
        """The logger's last name: ``kafka.log.LogCleaner$CleanerThread`` -> ``CleanerThread``."""
        if self.logger is None:
            return None
        return re.split(r"[.$]", self.logger)[-1]


def records(lines: Iterable[SourcedLine]) -> Iterator[Record]:
    """The records of ``lines``; lines before the first timestamped one are skipped."""
    head: SourcedLine | None = None
    parsed: LogLine | None = None
    rest: list[str] = []
    dropped = 0
    for line in lines:
        header = parse_header(line.text) if looks_timestamped(line.text) else None
        if header is None:
            if head is not None:
                if len(rest) < MAX_CONTINUATION_LINES:
                    rest.append(line.text)
                else:
                    dropped += 1
            continue
        if head is not None and parsed is not None:
            yield _record(head, parsed, rest, dropped)
        head, parsed, rest, dropped = line, header, [], 0
    if head is not None and parsed is not None:
        yield _record(head, parsed, rest, dropped)


def _record(head: SourcedLine, header: LogLine, rest: list[str], dropped: int) -> Record:
    logger = header.logger
    continuation = tuple(rest)
    if logger is None and continuation:
        trailing = _TRAILING_LOGGER.match(continuation[-1])
        if trailing is not None:
            logger = trailing["logger"]
            continuation = continuation[:-1]
    return Record(
        at=header.timestamp,
        level=header.level,
        message=header.message,
        logger=logger,
        continuation=continuation,
        place=Place(head.file, head.line, head.position),
        dropped_lines=dropped,
    )
