"""What the cleaner's reading needs from the broker's ``server.log``: when the broker started
(uncleanable marks last until then) and the order it loaded its logs in (the log pool's order
among keys sharing a bin, ``offsets_auditor.cleaner.pool_order``).

The lines are the restart's (``offsets_auditor.restart.log_lines``, each wording with its
source): ``KafkaServer`` "starting" and the ``Log`` constructor's "Completed load of log ...",
printed just before ``LogManager`` puts the log in its pool (0.9.0.1 ``LogManager.loadLogs``
and ``createLog``), for the logs loaded at start and those created later alike.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime

from offsets_auditor.restart.log_lines import BrokerStarting, LogLoaded, parse_line


@dataclass(frozen=True, slots=True)
class BrokerStarts:
    """The broker's starts in the log, and the topic-partitions of the last one in the order
    they were loaded (``(topic, partition)``; a failed load is left out)."""

    starts: tuple[datetime, ...]
    load_order: tuple[tuple[str, int], ...]


def broker_starts(lines: Iterable[str]) -> BrokerStarts:
    starts: list[datetime] = []
    order: list[tuple[str, int]] = []
    for text in lines:
        event = parse_line(text)
        if isinstance(event, BrokerStarting):
            starts.append(event.at)
            order = []
        elif isinstance(event, LogLoaded) and not event.failed:
            topic, _, number = event.partition.rpartition("-")
            if topic and number.isdigit():
                order.append((topic, int(number)))
    return BrokerStarts(tuple(starts), tuple(dict.fromkeys(order)))
