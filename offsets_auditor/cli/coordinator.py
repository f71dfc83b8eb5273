"""``offsets-auditor coordinator``: the __consumer_offsets partition that coordinates a group."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from offsets_auditor.cli.commands import summary
from offsets_auditor.cli.exit_status import USAGE
from offsets_auditor.coordinator import coordinator_partition
from offsets_auditor.logdir import fs

EPILOG = """\
Group ids from a file (--from-file F, or - for stdin): one id per line, in UTF-8. A line
is the id exactly as written, without its line break (LF or CRLF): spaces inside or around
it are part of the id (a group id may hold them), and a warning on stderr names each line
with leading or trailing whitespace. Empty and whitespace-only lines are skipped. Ids given
as arguments come first, then the file's, in order; each is printed once per occurrence.

--partitions is required: the coordinator depends on the topic's real partition count, and a
guessed count names the wrong partition for most groups. Read it from the cluster
(kafka-topics.sh --describe --topic __consumer_offsets: PartitionCount), from a broker's log
dir (its __consumer_offsets-N directories), or, for a topic created with the broker's
defaults, offsets.topic.num.partitions (Kafka's default is 50).

Ids that start with '-' go after '--', which ends the options:
  offsets-auditor coordinator --partitions 50 -- -legacy-consumers
  cut -f1 groups.tsv | offsets-auditor coordinator --partitions 50 --from-file -

Exit status: 0 answered, 3 usage or input errors (no --partitions, no group id, a file that
cannot be read or is not UTF-8), 4 internal error, 130 interrupted.
"""

#: How to find the count, for the message when --partitions is missing.
PARTITIONS_MISSING = (
    "give --partitions N, the partition count of __consumer_offsets: PartitionCount in"
    " `kafka-topics.sh --describe --topic __consumer_offsets`, or the __consumer_offsets-N"
    " dirs across the brokers' log dirs (a topic created with the broker's defaults has"
    " offsets.topic.num.partitions, 50 unless set). It is not guessed: another count names"
    " another partition for most groups"
)


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "coordinator",
        help=summary("coordinator"),
        description=(
            "Print the __consumer_offsets partition whose leader is the coordinator of each"
            " GROUP: abs(hashCode(group)) % N with Java's String.hashCode and Kafka's"
            " Utils.abs, as every broker from 0.8.2 to 4.x computes it."
        ),
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("groups", nargs="*", metavar="GROUP", help="consumer group id")
    parser.add_argument(
        "--from-file",
        metavar="FILE",
        help="read group ids from FILE, one per line ('-' for stdin); see below",
    )
    parser.add_argument(
        "--partitions",
        type=int,
        default=None,
        metavar="N",
        help="partition count of __consumer_offsets, required (the topic's real count; Kafka's"
        " default offsets.topic.num.partitions is 50, but a cluster may have set another)",
    )
    parser.add_argument("--json", action="store_true", help="one JSON object per group")
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    err = sys.stderr
    if args.partitions is None:
        print(f"offsets-auditor coordinator: {PARTITIONS_MISSING}", file=err)
        return USAGE
    if args.partitions <= 0:
        print(
            f"offsets-auditor coordinator: --partitions must be positive, not {args.partitions}",
            file=err,
        )
        return USAGE
    groups = list(args.groups)
    if args.from_file is not None:
        try:
            data = (
                sys.stdin.buffer.read()
                if args.from_file == "-"
                else fs.read_small_file(Path(args.from_file))
            )
        except (OSError, ValueError) as error:
            print(f"offsets-auditor coordinator: cannot read {args.from_file}: {error}", file=err)
            return USAGE
        try:
            for number, group in group_lines(data):
                if group != group.strip():
                    print(
                        f"offsets-auditor coordinator: {args.from_file} line {number}: group id"
                        f" {group!r} has leading or trailing whitespace; kept as part of the id",
                        file=err,
                    )
                groups.append(group)
        except ValueError as error:
            print(f"offsets-auditor coordinator: {args.from_file}: {error}", file=err)
            return USAGE
    if not groups:
        print("offsets-auditor coordinator: give GROUP ids, --from-file FILE, or both", file=err)
        return USAGE
    for group in groups:
        partition = coordinator_partition(group, args.partitions)
        if args.json:
            print(
                json.dumps({"group": group, "partition": partition, "partitions": args.partitions})
            )
        else:
            print(f"{group}\t__consumer_offsets-{partition}")
    return 0


def group_lines(data: bytes) -> Iterator[tuple[int, str]]:
    """``(line number, group id)`` per non-blank line of ``data`` (UTF-8; a line ends at LF,
    a CR before it is dropped). Raises ``ValueError`` for a line that is not UTF-8: a guessed
    decoding would give another id, and so another partition."""
    for number, raw in enumerate(data.split(b"\n"), start=1):
        line = raw[:-1] if raw.endswith(b"\r") else raw
        try:
            text = line.decode("utf-8")
        except UnicodeDecodeError as error:
            raise ValueError(f"line {number} is not UTF-8 ({error.reason})") from None
        if text.strip():
            yield number, text
