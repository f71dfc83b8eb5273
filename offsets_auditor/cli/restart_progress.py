"""``offsets-auditor restart-progress``: how far a restarting broker has got, from its server.log.

    offsets-auditor restart-progress --server-log /var/log/kafka/server.log [LOGDIR ...]
                                     [--follow [--interval S]] [--json] [--kafka-version V]

Reads the broker's own lines for the LAST startup in the file: log loading (partitions loaded,
segments recovered, index files rebuilt, "Logs loading complete"), then the group coordinator's
loading of ``__consumer_offsets`` partitions with the milliseconds the broker printed, and an
ETA for what remains with its basis. LOGDIR (the broker's ``log.dirs``, read-only) gives the
totals while the logs load: partition directories, segments from each recovery point on,
``__consumer_offsets`` sizes. Without it, totals are what the log announces (3.x), else
unknown. Once log loading is over, what the broker logged is the total (the dirs as read now
describe a later state). The phase is as of the last line; with LOGDIR, a broker whose log
just ends but which no longer rewrites replication-offset-checkpoint reads ``not-running``
(killed with SIGKILL, OOM-killed), and one whose dirs hold the clean-shutdown marker again
``stopped``.

``--follow`` keeps reading as the file grows, across rotation and truncation, and prints the
progress again after each growth (``--json``: one JSON object per line per update); Ctrl-C or
SIGTERM stops it (exit status 0).
Exit status: 0 progress printed (or --follow stopped by a signal), 1 the log holds no line in
the broker's log format (a warning says so: is it the broker's server.log?), 3 usage or input
errors (the server log cannot be read, or is not text), 4 internal error, 130 interrupted.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, TextIO

from offsets_auditor.cli.commands import summary
from offsets_auditor.cli.exit_status import USAGE, WARNINGS
from offsets_auditor.logdir import fs
from offsets_auditor.restart.fold import ProgressFold
from offsets_auditor.restart.follow import (
    Clock,
    LineFeeder,
    LineFollower,
    SystemClock,
    Update,
    follow_progress,
)
from offsets_auditor.restart.log_dir_totals import read_log_dir_totals
from offsets_auditor.restart.log_lines import patterns_for, patterns_for_range
from offsets_auditor.restart.progress import RestartProgress, snapshot
from offsets_auditor.version_detection import Detection, detect_version
from offsets_auditor.versions import KafkaVersion

NAME = "restart-progress"


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        NAME,
        help=summary("restart-progress"),
        description=__doc__.split("\n\n", 1)[1] if __doc__ else None,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "--server-log", required=True, type=Path, metavar="FILE", help="the broker's server.log"
    )
    parser.add_argument(
        "log_dirs",
        nargs="*",
        type=Path,
        metavar="LOGDIR",
        help="the broker's log dir(s), for totals (read-only)",
    )
    parser.add_argument("--follow", action="store_true", help="keep reading as the file grows")
    parser.add_argument(
        "--interval",
        type=float,
        default=2.0,
        metavar="SECONDS",
        help="with --follow: seconds between polls (default 2)",
    )
    parser.add_argument("--json", action="store_true", help="one JSON object per update")
    parser.add_argument(
        "--kafka-version",
        metavar="V",
        help="the broker's Kafka version (e.g. 0.9.0.1, 2.3.0, 3.9); default: detected from the"
        " server log's version line and LOGDIR, and the wordings of every version they allow",
    )
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    return run_with(args, out=sys.stdout, err=sys.stderr, clock=SystemClock())


def run_with(
    args: argparse.Namespace,
    *,
    out: TextIO,
    err: TextIO,
    clock: Clock,
    should_stop: Callable[[Update | None], bool] | None = None,
) -> int:
    """:func:`run` with its streams and clock given (for tests: a fake clock whose ``sleep``
    appends to the file, and a ``should_stop``)."""
    try:
        version = None if args.kafka_version is None else KafkaVersion.parse(args.kafka_version)
    except ValueError as e:
        print(f"{NAME}: {e}", file=err)
        return USAGE
    if args.follow and not args.interval > 0:
        print(f"{NAME}: --interval must be a positive number of seconds", file=err)
        return USAGE
    problem = _not_text(args.server_log, must_exist=not args.follow)
    if problem is not None:
        print(f"{NAME}: {problem}", file=err)
        return USAGE
    detection = detect_version(args.log_dirs, args.server_log, version)
    now_ms = int(time.time() * 1000)
    totals = read_log_dir_totals(args.log_dirs, detection.used, now_ms) if args.log_dirs else None
    if version is not None:
        fold = ProgressFold(str(version), totals, patterns_for(version))
    else:
        label = f"{detection.range} (detected)" if detection.evidence else None
        patterns = patterns_for_range(detection.range.since, detection.range.until)
        fold = ProgressFold(label, totals, patterns)
    feeder = LineFeeder(fold)
    server_log: Path = args.server_log
    show: Callable[[Update], None] = (
        (lambda u: _print_json(u, server_log, out, detection))
        if args.json
        else (lambda u: _print_text(u, server_log, out, detection))
    )
    with LineFollower(server_log) as follower:
        if not args.follow:
            # the log's age, with the log dirs', tells a broker killed without a line (one read
            # only: when following, the listing ages while the log grows)
            fold.log_mtime_ms = fs.file_info(server_log).mtime_ms
            for raw in follower.poll():
                feeder.feed(raw)
            for raw in follower.flush():
                feeder.feed(raw)
            show(Update(1, snapshot(fold), feeder.lines, 0.0))
            if fold.last_timestamped_line is None:
                print(
                    f"{NAME}: warning: {server_log}: none of its {feeder.lines:,} line(s) is in"
                    " the broker's log format ('[2019-07-01 12:00:00,123] INFO ...'): is it the"
                    " broker's server.log (or kafkaServer.out)?",
                    file=err,
                )
                return WARNINGS
            return 0
        # Ctrl-C or SIGTERM is how --follow is meant to stop: a clean stop, status 0
        with contextlib.suppress(KeyboardInterrupt), _sigterm_interrupts():
            follow_progress(
                follower,
                feeder,
                clock=clock,
                interval=args.interval,
                on_update=show,
                should_stop=should_stop or (lambda _update: False),
            )
    return 0


#: How much of the server log is looked at to tell text from binary.
TEXT_SNIFF_BYTES = 64 * 1024


def _not_text(path: Path, *, must_exist: bool) -> str | None:
    """Why ``path`` cannot be read as a server log (not there, unreadable, or binary: a NUL
    byte in its first :data:`TEXT_SNIFF_BYTES`), or None. A file that is not there yet is fine
    when following (``must_exist`` False): the broker may create it."""
    try:
        with fs.ReadOnlyFile(path) as f:
            head = f.read_at(0, TEXT_SNIFF_BYTES)
    except FileNotFoundError as e:
        return f"cannot read {path}: {e.strerror or e}" if must_exist else None
    except OSError as e:
        return f"cannot read {path}: {e.strerror or e}"
    nul = head.find(b"\0")
    if nul >= 0:
        return (
            f"{path} is not a text file (a NUL byte at position {nul:,}): give the broker's"
            " server.log (or kafkaServer.out)"
        )
    return None


@contextlib.contextmanager
def _sigterm_interrupts() -> Iterator[None]:
    """SIGTERM raises ``KeyboardInterrupt`` while following, as Ctrl-C does (from the main
    thread only, where Python runs signal handlers)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def interrupt(_signum: int, _frame: object) -> None:
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGTERM, interrupt)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def _print_json(update: Update, server_log: Path, out: TextIO, detection: Detection) -> None:
    data: dict[str, object] = {"server_log": str(server_log), "update": update.number}
    data.update(update.progress.to_dict())
    data["kafka_version_detection"] = {
        **detection.to_json(),
        "findings": [f.to_dict() for f in detection.findings()],
    }
    data["lines_read"] = update.lines_read
    data["idle_seconds"] = update.idle_seconds
    out.write(json.dumps(data, sort_keys=False) + "\n")
    out.flush()


def _print_text(update: Update, server_log: Path, out: TextIO, detection: Detection) -> None:
    if update.number > 1:
        out.write("\n")
    out.write(render_text(update.progress, server_log, update) + "\n")
    for finding in detection.findings():
        out.write(f"note: {finding.kind}: {finding.detail}\n")
    out.flush()


def _time(progress: RestartProgress, attr: str) -> str:
    value = getattr(progress, attr)
    return "-" if value is None else value.isoformat(sep=" ", timespec="milliseconds")


def _of(done: int, total: int | None, source: str | None) -> str:
    if total is None:
        return f"{done} of unknown total"
    return f"{done} of {total} ({source})"


def _duration(seconds: float | None) -> str:
    if seconds is None:
        return "unknown"
    if seconds < 120:
        return f"{seconds:.1f} s"
    minutes, secs = divmod(round(seconds), 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours}h{minutes:02d}m{secs:02d}s" if hours else f"{minutes}m{secs:02d}s"


def render_text(progress: RestartProgress, server_log: Path, update: Update | None = None) -> str:
    """The human report of one :class:`RestartProgress`."""
    p = progress
    took = []
    if p.loading_duration_ms is not None:
        took.append(f"broker: {p.loading_duration_ms} ms")
    if p.loading_elapsed_ms is not None:
        took.append(f"{p.loading_elapsed_ms} ms by timestamps")
    partitions = _of(p.partitions_loaded, p.partitions_total, p.partitions_total_source)
    if p.partitions_failed:
        partitions += f", {p.partitions_failed} failed"
    segments = _of(p.segments_recovered, p.segments_to_recover, p.segments_to_recover_source)
    lines = [
        f"restart-progress {server_log}"
        + (f" (update {update.number}, {update.lines_read} lines read)" if update else ""),
        f"  startups in log: {p.startups_seen}; last began {_time(p, 'startup_at')}; "
        f"as of {_time(p, 'as_of')} (last line)",
        f"  phase: {p.phase}"
        + (f"; broker started {_time(p, 'broker_started_at')}" if p.broker_started_at else "")
        + (f"; shutting down {_time(p, 'shutting_down_at')}" if p.shutting_down_at else ""),
        f"  kafka version: {p.kafka_version or 'any (all wordings)'}"
        + (f"; log says {p.kafka_version_seen}" if p.kafka_version_seen else ""),
        "log loading:",
        f"  'Loading logs': {_time(p, 'loading_started_at')}; complete: "
        f"{_time(p, 'loading_completed_at')}" + (f" ({'; '.join(took)})" if took else ""),
        f"  partitions loaded: {partitions}",
        f"  segments recovered (recovery begun): {segments}",
        f"  index files rebuilt: {p.index_files_rebuilt}",
    ]
    for rebuild in p.index_rebuilds:
        lines.append(f"    {rebuild.partition}: {rebuild.reason} index ({rebuild.file})")
    loads = p.coordinator_loads
    lines.append("group coordinator (__consumer_offsets):")
    lines.append(
        f"  partitions loaded: {p.coordinator_partitions_loaded} of "
        f"{p.coordinator_partitions_started} started"
        + (
            f", {p.coordinator_partitions_total} on disk"
            if p.coordinator_partitions_total is not None
            else ""
        )
        + (f"; in progress: {list(p.coordinator_in_progress)}" if p.coordinator_in_progress else "")
    )
    for load in loads:
        if load.done:
            state = "failed" if load.failed else f"{load.load_ms} ms"
            if load.scheduler_ms:
                state += f" ({load.scheduler_ms} ms in the scheduler)"
        else:
            state = "loading" if load.start_is_schedule is False else "scheduled"
        size = f", {load.bytes} bytes ({load.bytes_source})" if load.bytes is not None else ""
        lines.append(f"    __consumer_offsets-{load.partition}: {state}{size}")
    lines.append("estimates:")
    if not p.estimates:
        lines.append(
            "  nothing left to estimate"
            if p.phase in ("started", "shutting-down", "stopped", "not-running")
            else "  none yet"
        )
    for estimate in p.estimates:
        lines.append(
            f"  {estimate.phase}: {_duration(estimate.seconds)} for {estimate.remaining:g} "
            f"{estimate.unit} left (as of the last line)"
        )
        lines.append(f"    basis: {estimate.basis}")
    for note in p.notes:
        lines.append(f"note: {note}")
    return "\n".join(lines)
