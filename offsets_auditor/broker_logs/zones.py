"""The clock of a broker's log lines: log4j's ``[%d]`` is the JVM's local time with no zone
(``config/log4j.properties``, 0.9.0.1 to 3.9: ``ConversionPattern=[%d] %p %m (%c)%n``;
``%d`` is ISO8601 in ``TimeZone.getDefault()``). Turning a line's time into an instant
needs the zone the broker ran in: the operator says it (``--log-timezone``), UTC unless told.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta, timezone, tzinfo
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

_OFFSET = re.compile(r"^(?:UTC|GMT)?(?P<sign>[+-])(?P<h>\d{1,2})(?::?(?P<m>\d{2}))?$")


@dataclass(frozen=True, slots=True)
class LogZone:
    """A zone by ``name`` (as given: ``UTC``, ``Europe/Paris``, ``+02:00``)."""

    name: str

    @classmethod
    def utc(cls) -> LogZone:
        return cls("UTC")

    @property
    def tz(self) -> tzinfo:
        return _tz(self.name)

    def epoch_ms(self, at: datetime) -> int:
        """The instant of a log line's time, in epoch milliseconds."""
        return round(at.replace(tzinfo=self.tz).timestamp() * 1000)


def parse_zone(text: str) -> LogZone:
    """``UTC``, an IANA zone name or a fixed offset (``+02:00``, ``-0530``, ``UTC+1``);
    ``ValueError`` for anything else."""
    name = text.strip()
    _tz(name)
    return LogZone(name)


def _tz(name: str) -> tzinfo:
    if name.upper() in ("UTC", "Z", "GMT"):
        return UTC
    offset = _OFFSET.match(name)
    if offset is not None:
        hours, minutes = int(offset["h"]), int(offset["m"] or 0)
        if hours > 18 or minutes > 59:
            raise ValueError(f"{name!r}: an offset is at most 18:00")
        delta = timedelta(hours=hours, minutes=minutes)
        return timezone(-delta if offset["sign"] == "-" else delta)
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError) as error:
        raise ValueError(
            f"{name!r} is not a time zone (give UTC, an IANA name such as Europe/Paris, or an"
            " offset such as +02:00)"
        ) from error
