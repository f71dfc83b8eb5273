"""``offsets-auditor dump``: Kafka's ``kafka-dump-log --offsets-decoder`` for people and scripts."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any, TextIO

from offsets_auditor.cli.commands import summary
from offsets_auditor.cli.exit_status import USAGE, statuses
from offsets_auditor.cli.options import add_reader_option
from offsets_auditor.errors import DecodeError, UnreadableFileError
from offsets_auditor.logdir import fs
from offsets_auditor.reader.decode import DecodedRecord, decode_segment
from offsets_auditor.reader.options import DEFAULT_LIMITS, Limits
from offsets_auditor.reader.render import (
    error_to_json,
    error_to_text,
    record_to_json_line,
    segment_text,
)
from offsets_auditor.reader.summary import SegmentTotals, summarize_segment


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "dump",
        help=summary("dump"),
        description=(
            "Decode every record of the given __consumer_offsets segments (any message format"
            " v0/v1/v2, any codec) with its key and value. Problems (truncated tails, corrupt"
            " CRCs, undecodable keys) go to stderr with file, byte position and field, and"
            " decoding goes on. A directory stands for the .log files in it (a partition dir;"
            " a broker's log dir holds its segments one level down). "
            + statuses(
                "0 every file decoded without a problem, 1 problems were reported (on stderr);"
                " a path that is not there, or a directory without .log files, is an input error"
            )
        ),
    )
    parser.add_argument("files", nargs="+", type=Path, metavar="SEGMENT.log")
    output = parser.add_mutually_exclusive_group()
    output.add_argument("--json", action="store_true", help="one JSON object per record per line")
    output.add_argument(
        "--summary",
        action="store_true",
        help="decode everything but print only totals per file and overall, as one JSON object",
    )
    parser.add_argument(
        "--max-batch-bytes",
        type=int,
        default=DEFAULT_LIMITS.max_batch_bytes,
        metavar="BYTES",
        help="largest entry decoded; larger ones are reported and skipped (default %(default)s)",
    )
    parser.add_argument(
        "--decompress-limit",
        type=int,
        default=DEFAULT_LIMITS.decompress_limit,
        metavar="BYTES",
        help="largest decompressed size of one compressed entry (default %(default)s)",
    )
    add_reader_option(parser)
    parser.set_defaults(handler=run)


class InputError(Exception):
    """A path given that cannot be dumped (exit status 3), in words."""


def segment_files(paths: list[Path]) -> list[Path]:
    """The segment files ``paths`` stand for: a file as itself, a directory (a partition dir)
    as the ``.log`` files in it. Raises :class:`InputError` for a path that is not there and a
    directory without ``.log`` files (naming the partition dirs when it is a broker's log
    dir)."""
    files: list[Path] = []
    for path in paths:
        if path.is_dir():
            logs = sorted(p for p in path.iterdir() if p.suffix == ".log" and not p.is_dir())
            if not logs:
                raise InputError(_no_segments(path))
            files.extend(logs)
        elif path.exists():
            files.append(path)
        else:
            raise InputError(f"{path}: no such file or directory")
    return files


def _no_segments(path: Path) -> str:
    partitions = sorted(
        p.name for p in path.iterdir() if p.is_dir() and p.name.startswith("__consumer_offsets-")
    )
    if partitions:
        return (
            f"{path} holds no .log files: it looks like a broker log dir, whose segments are in"
            f" its partition dirs ({len(partitions)}: {partitions[0]}, ...): give one, e.g."
            f" {path / partitions[0]}"
        )
    return f"{path} holds no .log files (give segment files or a partition dir)"


def run(args: argparse.Namespace) -> int:
    out: TextIO = sys.stdout
    err: TextIO = sys.stderr
    problems = 0
    totals = SegmentTotals()
    per_file: list[dict[str, Any]] = []
    limits = Limits(max_batch_bytes=args.max_batch_bytes, decompress_limit=args.decompress_limit)
    reading = {"backend": args.reader, "limits": limits}
    try:
        files = segment_files(args.files)
    except InputError as error:
        print(f"offsets-auditor dump: {error}", file=err)
        return USAGE
    for index, path in enumerate(files):
        name = str(path)
        if args.summary and err.isatty():
            print(f"[{index + 1}/{len(files)}] {name}", file=err, flush=True)
        try:
            source = fs.ReadOnlyFile(path)
        except OSError as error:
            problems += 1
            unreadable = UnreadableFileError(
                f"cannot open: {error.strerror}", field="file", file=name
            )
            _report(err, args, unreadable)
            continue
        with source:
            if source.size == 0 and not args.summary:
                _note_empty(err, args, name)
                continue
            if args.summary:
                for entry in summarize_segment(source, file=name, **reading):
                    if isinstance(entry, DecodeError):
                        problems += 1
                        _report(err, args, entry)
                    else:
                        per_file.append({"file": name, **entry.to_json()})
                        totals.merge(entry)
                continue
            lines: list[str] = []
            items: Iterator[str | DecodedRecord | DecodeError] = (
                decode_segment(source, file=name, **reading)
                if args.json
                else segment_text(source, file=name, **reading)
            )
            for item in items:
                if isinstance(item, DecodeError):
                    problems += 1
                    _flush(out, lines)  # keep records and problems in order on a terminal
                    _report(err, args, item)
                    continue
                line = item if isinstance(item, str) else record_to_json_line(item)
                lines.append(line)
                if len(lines) >= _LINES_PER_WRITE:
                    _flush(out, lines)
            _flush(out, lines)
    if args.summary:
        total = totals.to_json()
        total.pop("first_offset")
        total.pop("last_offset")
        json.dump({"files": per_file, "total": {"files": len(files), **total}}, out, indent=2)
        out.write("\n")
    return 1 if problems else 0


#: Records are rendered into lines and written this many at a time.
_LINES_PER_WRITE = 512


def _flush(out: TextIO, lines: list[str]) -> None:
    if lines:
        lines.append("")
        out.write("\n".join(lines))
        lines.clear()


def _note_empty(err: TextIO, args: argparse.Namespace, name: str) -> None:
    """An empty segment is no problem (a broker rolls to an empty active segment), but printing
    nothing at all for it reads as a failure: say it on stderr."""
    if args.json:
        err.write(json.dumps({"note": "empty", "file": name, "records": 0}) + "\n")
    else:
        err.write(f"{name}: empty (0 bytes): no records\n")


def _report(err: TextIO, args: argparse.Namespace, error: DecodeError) -> None:
    if args.json or args.summary:
        err.write(json.dumps(error_to_json(error), ensure_ascii=False) + "\n")
    else:
        err.write(error_to_text(error) + "\n")
