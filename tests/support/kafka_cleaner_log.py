"""Parse a broker's ``log-cleaner.log``: what the real cleaner did, run by run.

The expected values of the cleaner tests come from here, from the broker's own words, never
from numbers typed into a test.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

_BEGIN = re.compile(r"Cleaner (\d+): Beginning cleaning of log (\S+)\.")
_BUILD = re.compile(
    r"Cleaner (\d+): Building offset map for log (\S+) for (\d+) segments"
    r" in offset range \[(\d+), (\d+)\)\."
)
_BANNER = re.compile(
    r"Log cleaner thread (\d+) cleaned log (\S+) \(dirty section = \[(\d+), (\d+)\]\)"
)
_UTIL = re.compile(r"Buffer utilization: ([\d.]+)%")
_START = re.compile(r"Start size: ([\d.,]+) MB \(([\d,]+) messages\)")
_END = re.compile(r"End size: ([\d.,]+) MB \(([\d,]+) messages\)")
_ERROR = re.compile(r"\[kafka-log-cleaner-thread-(\d+)\],? Error due to")
_CAUSE = re.compile(r"^\S+(?:Exception|Error): (.*)$")


@dataclass
class CleanerRun:
    """One ``Cleaner.clean`` of one partition by one thread."""

    thread: int
    partition: str
    segments: int | None = None
    range_start: int | None = None
    range_end: int | None = None
    utilization: float | None = None
    start_messages: int | None = None
    end_messages: int | None = None
    error: str | None = None


@dataclass
class CleanerLog:
    runs: list[CleanerRun] = field(default_factory=list)

    def for_partition(self, partition: str) -> list[CleanerRun]:
        return [r for r in self.runs if r.partition == partition]

    def deaths(self) -> list[CleanerRun]:
        return [r for r in self.runs if r.error is not None]


def read_cleaner_log(path: Path) -> CleanerLog:
    log = CleanerLog()
    current: dict[int, CleanerRun] = {}
    dying: int | None = None
    for line in path.read_text(errors="replace").splitlines():
        if m := _BEGIN.search(line):
            run = CleanerRun(int(m.group(1)), m.group(2))
            current[run.thread] = run
            log.runs.append(run)
        elif m := _BUILD.search(line):
            run = current[int(m.group(1))]
            run.segments, run.range_start, run.range_end = (int(g) for g in m.group(3, 4, 5))
        elif m := _BANNER.search(line):
            banner_thread = int(m.group(1))
        elif m := _UTIL.search(line):
            current[banner_thread].utilization = float(m.group(1))
        elif m := _START.search(line):
            current[banner_thread].start_messages = int(m.group(2).replace(",", ""))
        elif m := _END.search(line):
            current[banner_thread].end_messages = int(m.group(2).replace(",", ""))
        elif m := _ERROR.search(line):
            dying = int(m.group(1))
        elif dying is not None and (m := _CAUSE.match(line)):
            current[dying].error = m.group(1)
            dying = None
    return log
