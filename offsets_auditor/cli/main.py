"""The ``offsets-auditor`` command line.

Each subcommand lives in its own module under ``offsets_auditor.cli`` and exposes
``register(subparsers)``, which adds its parser and sets ``handler`` to a function
``(argparse.Namespace) -> int`` returning the exit status. Commands built on the core (``scan``
in ``spark_jobs``, ``serve`` in ``api``) register the same way through the entry point group
``offsets_auditor.commands`` (module with ``register`` and ``SUMMARY``), so the core never
imports them.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
import traceback
from collections.abc import Sequence

from offsets_auditor.cli.commands import COMMANDS
from offsets_auditor.cli.exit_status import BROKEN_PIPE, INTERRUPTED, USAGE, ArgumentParser
from offsets_auditor.cli.internal_error import INTERNAL_ERROR, one_line


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The whole command line; with ``only``, that subcommand's module alone is imported and
    registered (the others are listed by name and summary, enough for ``--help``)."""
    parser = ArgumentParser(
        prog="offsets-auditor",
        description="Audit Kafka's __consumer_offsets straight from broker log directories.",
        epilog="Exit status, for every command: 0-2 are verdicts (0 healthy, 1 warnings, 2"
        " critical findings; each command's --help says what they mean for it), 3 usage or input"
        " errors, 4 an internal error (a bug in offsets-auditor, never a verdict about your data:"
        " one line on stderr, or the whole traceback with --traceback), 5 the Spark JVM died"
        " (scan), 130 interrupted by Ctrl-C; a command that runs until stopped (serve,"
        " restart-progress --follow) exits 0 on SIGINT or SIGTERM.",
    )
    parser.add_argument(
        "--version", action="version", version=f"offsets-auditor {package_version()}"
    )
    parser.add_argument(
        "--traceback",
        action="store_true",
        help="on an internal error, print the whole Python traceback (for a bug report)",
    )
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    for command, (module, summary) in COMMANDS.items():
        if only is None or command == only:
            importlib.import_module(f"offsets_auditor.cli.{module}").register(subparsers)
        else:
            subparsers.add_parser(command, help=summary, add_help=False)
    for command, module_name in (extension_commands() if only not in COMMANDS else {}).items():
        extension = importlib.import_module(module_name)
        if only is None or command == only:
            extension.register(subparsers)
        else:
            subparsers.add_parser(command, help=extension.SUMMARY, add_help=False)
    return parser


def package_version() -> str:
    """The installed package's version (``pyproject.toml``'s ``version``)."""
    import importlib.metadata

    return importlib.metadata.version("offsets-auditor")


#: The entry point group of the commands other packages of this project add.
EXTENSION_GROUP = "offsets_auditor.commands"


def extension_commands() -> dict[str, str]:
    """command -> module, from the installed entry points (``scan``, ``serve``)."""
    import importlib.metadata

    found = importlib.metadata.entry_points(group=EXTENSION_GROUP)
    return {e.name: e.value for e in sorted(found, key=lambda e: e.name) if e.name not in COMMANDS}


def _command_in(argv: Sequence[str]) -> str | None:
    """The subcommand ``argv`` names (the first word that is one), if any."""
    core = next((word for word in argv if word in COMMANDS), None)
    if core is not None:  # the entry points (importlib.metadata) only when needed
        return core
    extensions = extension_commands()
    return next((word for word in argv if word in extensions), None)


def main(argv: Sequence[str] | None = None) -> int:
    words = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser(only=_command_in(words))
    args = parser.parse_args(words)
    if args.command is None:
        parser.print_help(sys.stderr)
        return USAGE
    try:
        status: int = args.handler(args)
    except BrokenPipeError:  # e.g. piped into `head`: stop quietly, like other Unix tools
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return BROKEN_PIPE
    except KeyboardInterrupt:
        print("offsets-auditor: interrupted", file=sys.stderr)
        return INTERRUPTED
    except Exception as error:  # a bug: one line, its own exit status
        if args.traceback:
            traceback.print_exc()
        print(
            f"offsets-auditor {args.command}: internal error: {one_line(error)}. This is a bug in"
            " offsets-auditor, not a finding about your data: please report it with the command"
            " line (--traceback shows the traceback).",
            file=sys.stderr,
        )
        return INTERNAL_ERROR
    return status


if __name__ == "__main__":
    sys.exit(main())
