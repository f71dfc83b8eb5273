"""``offsets-auditor audit``: what the log cleaner will do to each __consumer_offsets partition."""

from __future__ import annotations

import argparse
import json
import sys
import time
from dataclasses import replace
from pathlib import Path
from typing import Any, TextIO

from offsets_auditor.audit.allocator import keep_freed_memory
from offsets_auditor.audit.collector import cyclic_gc_paused
from offsets_auditor.audit.parallel import audit_log_dir_on, default_jobs, forked_each
from offsets_auditor.audit.plan import AuditSettings, PlanError, plan_audit
from offsets_auditor.audit.report import DEFAULT_LOAD_BYTES_PER_SECOND, report_json
from offsets_auditor.broker_logs.reading import cleaner_log_exists
from offsets_auditor.cli.commands import summary
from offsets_auditor.cli.exit_status import USAGE, statuses
from offsets_auditor.cli.options import add_reader_option, positive_int
from offsets_auditor.findings import broker_label
from offsets_auditor.logdir import fs
from offsets_auditor.logdir.meta_properties import parse_java_properties
from offsets_auditor.logdir.shape import looks_like_log_dir, not_a_log_dir_message
from offsets_auditor.reader.reading import ReadOptions
from offsets_auditor.versions import KafkaVersion


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "audit",
        help=summary("audit"),
        description=(
            "Read broker log dirs (or copies; nothing is written) and emulate Kafka's log cleaner"
            " for the broker's version and config on every __consumer_offsets partition: thread"
            " deaths with Kafka's own message, passes of the offset map, dirty ratios, what"
            " compaction would retain, and the dedupe buffer that would fix it."
            " "
            + statuses(
                "0 healthy, 1 warnings, 2 critical findings (a config the broker would refuse,"
                " or a LOGDIR that does not look like a broker log dir, is an input error)"
            )
        ),
    )
    parser.add_argument("log_dirs", nargs="+", type=Path, metavar="LOGDIR")
    parser.add_argument(
        "--broker-config", type=Path, metavar="FILE", help="the broker's server.properties"
    )
    parser.add_argument(
        "--kafka-version",
        default=None,
        metavar="VERSION",
        help="the broker's Kafka version, e.g. 0.9.0.1 or 2.3.0 (default: detected from the log"
        " dirs and --server-log; the lowest version they allow, and the verdicts of the rest of"
        " that range where they differ)",
    )
    parser.add_argument(
        "--dedupe-buffer-size", metavar="BYTES", help="log.cleaner.dedupe.buffer.size"
    )
    parser.add_argument("--cleaner-threads", metavar="N", help="log.cleaner.threads")
    parser.add_argument("--load-factor", metavar="F", help="log.cleaner.io.buffer.load.factor")
    parser.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="any other broker or __consumer_offsets topic property (repeatable), e.g."
        " --set min.cleanable.dirty.ratio=0.1",
    )
    parser.add_argument(
        "--now",
        type=int,
        default=None,
        metavar="EPOCH_MS",
        help="the time the emulation assumes, in epoch milliseconds (default: now)",
    )
    parser.add_argument(
        "--load-rate",
        type=float,
        default=DEFAULT_LOAD_BYTES_PER_SECOND / 1048576,
        metavar="MIB_PER_S",
        help="coordinator load throughput assumed for load-time estimates (default %(default)s)",
    )
    parser.add_argument(
        "--server-log",
        type=Path,
        metavar="FILE",
        help="the broker's server.log (or kafkaServer.out): its version line pins the Kafka"
        " version, its starts and load order tell the cleaner's history and order, its"
        " coordinator load times calibrate the load estimates (default: a server.log or"
        " kafkaServer.out beside the log dir or in logs/ there)",
    )
    parser.add_argument(
        "--cleaner-log",
        action="extend",
        nargs="+",
        type=Path,
        default=[],
        metavar="FILE",
        help="the broker's log-cleaner.log: what its cleaner did, set beside the emulation (one"
        " FILE: the live log, its rotated files beside it read too; several: those files)."
        " Default: a log-cleaner.log beside the server log, or beside the log dir or in logs/"
        " there",
    )
    parser.add_argument(
        "--log-timezone",
        default="UTC",
        metavar="ZONE",
        help="the time zone the broker's logs are written in (log4j prints local time without"
        " one): UTC, an IANA name such as Europe/Paris, or +HH:MM (default %(default)s)",
    )
    parser.add_argument(
        "--no-groups",
        action="store_true",
        help="skip recovering every group's committed offsets (faster on huge partitions)",
    )
    parser.add_argument("--json", action="store_true", help="print the report as one JSON document")
    parser.add_argument(
        "--jobs",
        type=positive_int,
        default=default_jobs(),
        help="processes that read segments, every segment of every partition in parallel, and"
        " that summarize each offsets partition's newest segments for version detection"
        f" (default: the cores this process may use, here {default_jobs()}); 1 reads them in"
        " this process. With more than 1, segments' columns go to a scratch directory under"
        " TMPDIR (about 40 bytes per record of the partitions in flight)",
    )
    add_reader_option(parser)
    parser.set_defaults(handler=run)


@cyclic_gc_paused()  # the whole command: its audits, then the report over what they built
def run(args: argparse.Namespace) -> int:
    keep_freed_memory()  # for the next chunk's blocks (audit.allocator)
    overrides: dict[str, str] = {}
    for flag, key in (
        ("dedupe_buffer_size", "log.cleaner.dedupe.buffer.size"),
        ("cleaner_threads", "log.cleaner.threads"),
        ("load_factor", "log.cleaner.io.buffer.load.factor"),
    ):
        if getattr(args, flag) is not None:
            overrides[key] = getattr(args, flag)
    for item in args.set:
        key, sep, value = item.partition("=")
        if not sep:
            print(f"offsets-auditor audit: --set takes KEY=VALUE, not {item!r}", file=sys.stderr)
            return USAGE
        overrides[key.strip()] = value
    properties: list[tuple[str, str]] = []
    if args.broker_config is not None:
        try:
            text = fs.read_small_file(args.broker_config).decode("utf-8", "replace")
        except OSError as error:
            print(
                f"offsets-auditor audit: cannot read {args.broker_config}: {error.strerror}",
                file=sys.stderr,
            )
            return USAGE
        properties = parse_java_properties(text)
    for log_dir in args.log_dirs:
        if not log_dir.is_dir():
            print(
                f"offsets-auditor audit: {log_dir} is not a directory (give a broker log dir)",
                file=sys.stderr,
            )
            return USAGE
        if not looks_like_log_dir(log_dir):
            print(f"offsets-auditor audit: {not_a_log_dir_message(log_dir)}", file=sys.stderr)
            return USAGE
    if args.server_log is not None and not args.server_log.is_file():  # as scan checks it
        print(
            f"offsets-auditor audit: --server-log {args.server_log}: no such file", file=sys.stderr
        )
        return USAGE
    for log in args.cleaner_log:
        if not cleaner_log_exists(log):
            print(f"offsets-auditor audit: --cleaner-log {log}: no such file", file=sys.stderr)
            return USAGE
    try:
        given = None if args.kafka_version is None else KafkaVersion.parse(args.kafka_version)
    except ValueError as error:
        print(f"offsets-auditor audit: {error}", file=sys.stderr)
        return USAGE
    settings = AuditSettings(
        properties=tuple(properties),
        overrides=tuple(overrides.items()),
        kafka_version=given,
        server_log=args.server_log,
        cleaner_logs=tuple(args.cleaner_log),
        log_timezone=args.log_timezone,
        with_groups=not args.no_groups,
        groups_listed=args.json,  # the text report does not list them
    )
    now_ms = args.now if args.now is not None else int(time.time() * 1000)
    try:
        audit_plan = plan_audit(args.log_dirs, settings, now_ms, each=forked_each(args.jobs))
    except PlanError as error:
        print(f"offsets-auditor audit: {error}", file=sys.stderr)
        return USAGE
    audits = []
    for log_dir in args.log_dirs:
        if sys.stderr.isatty():
            print(f"auditing {log_dir} ...", file=sys.stderr, flush=True)
        read = ReadOptions(backend=args.reader)
        audits.append(audit_log_dir_on(log_dir, audit_plan, read, args.jobs))
    detection = audit_plan.detection
    if audits and detection.findings():
        first = audits[0]
        audits[0] = replace(first, findings=(*detection.findings(), *first.findings))
    load_rate = args.load_rate * 1048576
    report = report_json(
        audits,
        load_rate,
        None,
        detection,
        audit_plan.emulated_versions,
        with_groups=settings.groups_listed,
    )
    if args.json:
        write_json(report, sys.stdout)
    else:
        print_text(report)
    status: int = report["exit_status"]
    return status


def write_json(report: dict[str, Any], out: TextIO) -> None:
    """The report as JSON indented by two, except that each of its groups (a broker may hold
    millions, with their committed offsets) is one line. Only ``json.dumps`` without indent
    runs json's C encoder; indenting the groups too took three times as long as the audit
    of a 1.1 GB log dir (200,000 groups, 1.3 million committed offsets)."""
    items = list(report.items())
    out.write("{\n")
    for i, (key, value) in enumerate(items):
        comma = "," if i < len(items) - 1 else ""
        if key == "groups" and value:
            out.write(f"  {json.dumps(key)}: [\n")
            last = len(value) - 1
            out.writelines(
                f"    {json.dumps(group)}{',' if j < last else ''}\n"
                for j, group in enumerate(value)
            )
            out.write(f"  ]{comma}\n")
        else:
            text = json.dumps(value, indent=2).replace("\n", "\n  ")
            out.write(f"  {json.dumps(key)}: {text}{comma}\n")
    out.write("}\n")


def print_text(report: dict[str, Any]) -> None:
    out = sys.stdout
    print_version(report["kafka_version"], out)
    for broker in report["brokers"]:
        c = broker["cleaner"]
        out.write(
            f"{broker_label(broker['broker_id'], broker['log_dir'])}, Kafka"
            f" {report['kafka_version']['used']}: cleaner"
            f" {'enabled' if c['enabled'] else 'DISABLED'}, {c['threads']} thread(s),"
            f" offset map capacity {c['capacity']:,} keys per thread\n"
        )
        print_cleaner_log(broker, out)
    out.write(
        f"\n{'partition':<24} {'size':>12} {'segs':>5} {'checkpoint':>11} {'ratio':>7}"
        f" {'outcome':<17} {'passes':>6} {'retained':>9}\n"
    )
    for p in report["partitions"]:
        cleaner = p["cleaner"]
        checkpoint = "-" if p["cleaner_checkpoint"] is None else str(p["cleaner_checkpoint"])
        retained = (
            "-" if cleaner["retained_records"] is None else f"{cleaner['retained_records']:,}"
        )
        out.write(
            f"{p['name']:<24} {p['size_bytes']:>12,} {p['segment_count']:>5} {checkpoint:>11}"
            f" {p['dirty_ratio']:>7.3f} {cleaner['outcome']:<17} {cleaner['passes']:>6}"
            f" {retained:>9}\n"
        )
        if cleaner["outcome"] not in ("single-pass", "nothing-to-clean"):
            out.write(f"    {cleaner['reason']}\n")
        used = KafkaVersion.parse(report["kafka_version"]["used"])
        for alternative in cleaner["alternatives"]:
            first, last = alternative["kafka_versions"]
            if KafkaVersion.parse(first) <= used <= KafkaVersion.parse(last):
                continue  # the verdict above
            versions = first if first == last else f"{first} to {last}"
            out.write(
                f"    but Kafka {versions} would give: {alternative['outcome']},"
                f" {alternative['passes']} pass(es): {alternative['reason']}\n"
            )
        if p["recommendation"]:
            out.write(f"    fix: {p['recommendation']['arithmetic']}\n")
        print_last_cleaning(p.get("cleaner_log"), out)
    for broker in report["brokers"]:
        if broker["recommendation"]:
            r = broker["recommendation"]
            out.write(
                f"\nrecommendation for {broker_label(broker['broker_id'], broker['log_dir'])}:"
                f" log.cleaner.dedupe.buffer.size={r['log.cleaner.dedupe.buffer.size']}"
                f" at least ({r['arithmetic']})\n"
            )
            h = r.get("with_headroom")
            if h:
                out.write(
                    f"  with room for a day's growth: log.cleaner.dedupe.buffer.size="
                    f"{h['log.cleaner.dedupe.buffer.size']}, {h['heap_bytes']:,} B of broker heap"
                    f" ({h['arithmetic']})\n"
                )
    if report["findings"]:
        out.write("\nfindings:\n")
        for f in report["findings"]:
            where = " ".join(
                str(x)
                for x in (f.get("partition"), f.get("file"), f.get("position"))
                if x is not None
            )
            out.write(
                f"  [{f['severity']}] {f['kind']}: {where + ': ' if where else ''}{f['detail']}\n"
            )


def print_cleaner_log(broker: dict[str, Any], out: Any) -> None:
    """The broker's own cleaner log, in a few lines: which files, its threads, its pace."""
    log = broker.get("cleaner_log")
    if log is None:
        return
    files = log["files"]
    shown = files[0] if len(files) == 1 else f"{files[0]} ... {files[-1]} ({len(files)} files)"
    out.write(f"  cleaner log: {shown} ({log['how']}; times in {log['timezone']})\n")
    dead = [t for t in log["threads"] if t["state"] == "dead"]
    out.write(
        f"  cleaner threads in its last run: {log['threads_alive']} alive,"
        f" {log['threads_dead']} dead"
        + "".join(f"; thread {t['thread']} died at {t['died_at']}: {t['exception']}" for t in dead)
        + "\n"
    )
    if log["keeping_up"] is not None:
        out.write(f"  {log['keeping_up']}\n")
    loads = broker.get("coordinator_loads")
    if loads is not None and loads["model"] is not None:
        out.write(f"  coordinator loads: {loads['model']['describe']}\n")


def print_last_cleaning(log: dict[str, Any] | None, out: Any) -> None:
    """A partition's last real cleaning beside the emulation's."""
    if log is None:
        return
    last = log["last_cleaning"]
    if last is not None:
        start, end = last["dirty_section"]
        upper = last["passes"][-1]["upper_bound"]
        section = (
            f"dirty section [{start:,}, {end:,})"
            if start is not None and end is not None
            else f"offset map over [{start}, {upper})"
        )
        out.write(
            f"    broker's last cleaning: {last['began_at']}, {section},"
            f" {len(last['passes'])} pass(es), {last['end']}\n"
        )
    prediction = log["prediction"]
    if prediction["agreement"] != "not-comparable" or last is not None:
        out.write(f"    beside the emulation: {prediction['agreement']}: {prediction['detail']}\n")
    if log["uncleanable_since"] is not None:
        out.write(
            f"    marked uncleanable since {log['uncleanable_since']}:"
            f" {log['uncleanable_exception']}\n"
        )


def print_version(version: dict[str, Any], out: Any) -> None:
    """Which Kafka version the audit used, and the evidence for it."""
    low, high = version["range"]
    detected = low if low == high else f"{low} to {high}"
    if version["given"] is not None:
        out.write(f"Kafka {version['used']} (--kafka-version); the files say {detected}\n")
    else:
        out.write(f"Kafka {version['used']}: {version['basis']}\n")
    if len(version["emulated"]) > 1:
        out.write(f"  cleaner emulated at {', '.join(version['emulated'])} (where it changes)\n")
    for fact in version.get("not_emulated", ()):
        out.write(f"  not emulated, from {fact['since']}: {fact['why']}\n")
    for e in version["evidence"]:
        where = f" ({e['file']})" if e["file"] else ""
        out.write(f"  {e['implies']:<22} {e['seen']}{where}\n")
    for e in version["set_aside"]:
        out.write(f"  set aside: {e['implies']} {e['seen']}\n")
    if version.get("server_log"):
        log = version["server_log"]
        out.write(f"  server log read: {log['file']} ({log['how']})\n")
    out.write("\n")
