"""The exit statuses of every ``offsets-auditor`` command: one contract, stated once here and
quoted by each command's ``--help`` and the README.

==========  ==============================================================================
0           done: healthy (audit, scan, groups), decoded cleanly (dump), answered
            (coordinator, restart-progress); and a clean stop on SIGINT or SIGTERM of a
            command that runs until stopped (``serve``, ``restart-progress --follow``)
1           warnings (audit, scan, groups), problems decoding (dump), the group is not there
            (groups show/export), no line of a broker's start-up in the log
            (restart-progress)
2           critical findings (audit, scan, groups)
3           usage and input errors: an unknown option or missing argument (argparse's own
            errors included), a file or log dir that is not there or is not what it should
            be, a config the broker itself would refuse
4           internal error: a bug in offsets-auditor, never a verdict about your data (with or
            without ``--traceback``)
5           the Spark JVM died (scan)
130, 143    a command that was doing a job (dump, audit, scan, ...) was interrupted by SIGINT
            (Ctrl-C) or SIGTERM before it finished: no verdict (128 + the signal, as shells
            report it)
141         stdout was closed early (piped into ``head``): SIGPIPE's status, quietly
==========  ==============================================================================

0-2 are verdicts, by severity; 3 and above are never a verdict (``status >= 3``: no verdict),
so a typo in a cron job's command line never reads as "critical findings".
"""

from __future__ import annotations

import argparse
import sys
from typing import Final, NoReturn

OK: Final = 0
WARNINGS: Final = 1
CRITICAL: Final = 2
USAGE: Final = 3
INTERNAL_ERROR: Final = 4
SPARK_DIED: Final = 5
INTERRUPTED: Final = 130
BROKEN_PIPE: Final = 141

#: What every command's ``--help`` ends with, after its own 0-2.
COMMON: Final = (
    "3 usage or input errors, 4 internal error (a bug, never a verdict), 130 interrupted"
    " (Ctrl-C); README, 'Exit status', has the whole contract"
)


def statuses(own: str) -> str:
    """``Exit status: {own}, {COMMON}.`` for one command's help."""
    return f"Exit status: {own}, {COMMON}."


class ArgumentParser(argparse.ArgumentParser):
    """argparse's parser with its usage errors on status 3 (argparse's own is 2, which is
    "critical findings" for audit, scan and groups)."""

    def error(self, message: str) -> NoReturn:
        self.print_usage(sys.stderr)
        self.exit(USAGE, f"{self.prog}: error: {message}\n")
