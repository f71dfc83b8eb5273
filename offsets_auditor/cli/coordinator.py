"""``offsets-auditor coordinator``: the __consumer_offsets partition that coordinates a group."""

from __future__ import annotations

import argparse
import json
from typing import Any

from offsets_auditor.coordinator import coordinator_partition


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "coordinator",
        help="which __consumer_offsets partition coordinates each group",
        description=(
            "Print the __consumer_offsets partition whose leader is the coordinator of each"
            " GROUP: abs(hashCode(group)) %% N with Java's String.hashCode and Kafka's"
            " Utils.abs, as every broker from 0.8.2 to 4.x computes it."
        ),
    )
    parser.add_argument("groups", nargs="+", metavar="GROUP", help="consumer group id")
    parser.add_argument(
        "--partitions",
        type=int,
        default=50,
        metavar="N",
        help="partition count of __consumer_offsets (the topic's real count; the broker"
        " default offsets.topic.num.partitions is 50)",
    )
    parser.add_argument("--json", action="store_true", help="one JSON object per group")
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    if args.partitions <= 0:
        print(f"offsets-auditor coordinator: --partitions must be positive, not {args.partitions}")
        return 2
    for group in args.groups:
        partition = coordinator_partition(group, args.partitions)
        if args.json:
            print(
                json.dumps({"group": group, "partition": partition, "partitions": args.partitions})
            )
        else:
            print(f"{group}\t__consumer_offsets-{partition}")
    return 0
