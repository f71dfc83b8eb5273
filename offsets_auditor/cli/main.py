"""The ``offsets-auditor`` command line.

Each subcommand lives in its own module under ``offsets_auditor.cli`` and exposes
``register(subparsers)``, which adds its parser and sets ``handler`` to a function
``(argparse.Namespace) -> int`` returning the exit status.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
import traceback
from collections.abc import Sequence

#: Subcommand modules, in the order ``--help`` lists them.
SUBCOMMANDS = ("dump", "coordinator", "audit", "restart_progress", "groups")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="offsets-auditor",
        description="Audit Kafka's __consumer_offsets straight from broker log directories.",
        epilog="Each command's --help gives its exit statuses. Every command exits 4 on an"
        " unexpected internal error (a bug in offsets-auditor, never a verdict about your data),"
        " with one line on stderr; --traceback shows the whole traceback instead.",
    )
    parser.add_argument(
        "--traceback",
        action="store_true",
        help="on an internal error, print the whole Python traceback (for a bug report)",
    )
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in SUBCOMMANDS:
        importlib.import_module(f"offsets_auditor.cli.{name}").register(subparsers)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help()
        return 2
    try:
        status: int = args.handler(args)
    except BrokenPipeError:  # e.g. piped into `head`: stop quietly, like other Unix tools
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141
    except KeyboardInterrupt:
        print("offsets-auditor: interrupted", file=sys.stderr)
        return 130
    except Exception as error:  # a bug: one line, its own exit status
        if args.traceback:
            raise
        where = _last_frame(error)
        print(
            f"offsets-auditor {args.command}: internal error: {type(error).__name__}: {error}"
            f"{where}. This is a bug in offsets-auditor, not a finding about your data: please"
            " report it with the command line (--traceback shows the traceback).",
            file=sys.stderr,
        )
        return INTERNAL_ERROR
    return status


#: The exit status of an unexpected exception (0-2 are verdicts, 3 usage and input errors).
INTERNAL_ERROR = 4


def _last_frame(error: BaseException) -> str:
    frames = traceback.extract_tb(error.__traceback__)
    if not frames:
        return ""
    last = frames[-1]
    return f" (at {os.path.basename(last.filename)}:{last.lineno} in {last.name})"


if __name__ == "__main__":
    sys.exit(main())
