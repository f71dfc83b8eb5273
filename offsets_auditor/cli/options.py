"""Command-line options several subcommands share."""

from __future__ import annotations

import argparse

from offsets_auditor.reader.options import Backend


def add_reader_option(parser: argparse.ArgumentParser) -> None:
    """``--reader native|python``: which record reader decodes the segments."""
    parser.add_argument(
        "--reader",
        type=Backend,
        choices=list(Backend),
        default=Backend.NATIVE,
        metavar="{native,python}",
        help="record reader: the C parser (default) or the Python reference decoders, which"
        " give the same results, slower",
    )


def positive_int(text: str) -> int:
    """An argument that must be a whole number of at least 1."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"{value} is less than 1")
    return value
