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
from collections.abc import Sequence

#: Subcommand modules, in the order ``--help`` lists them.
SUBCOMMANDS = ("dump", "coordinator", "audit", "restart_progress", "groups")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="offsets-auditor",
        description="Audit Kafka's __consumer_offsets straight from broker log directories.",
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
    return status


if __name__ == "__main__":
    sys.exit(main())
