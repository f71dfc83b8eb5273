"""``offsets-auditor scan``: audit many brokers' log dirs on Spark and publish the results.

Registered as a subcommand through the ``offsets_auditor.commands`` entry point (the core does
not import Spark); ``spark-submit spark_jobs/scan.py`` runs the same ``main``.
"""

from __future__ import annotations

import argparse
import re
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

from offsets_auditor.audit.collector import cyclic_gc_paused
from offsets_auditor.cli.internal_error import INTERNAL_ERROR
from offsets_auditor.findings import broker_label

SUMMARY = "audit many brokers' log dirs on Spark (local[*] or a cluster) and publish the results"

EPILOG = """\
Each LOGDIR is one broker's log dir (a log.dirs entry) or a copy of it, as a local path or a
file:// URI that every executor can read. Results go to RESULTS/runs/<run id>/ (Parquet tables,
manifest.json, each log dir's audit report), published atomically; RESULTS/LATEST names the
newest. `offsets-auditor serve --results RESULTS` serves them.

Exit status: 0 healthy, 1 warnings, 2 critical findings, 3 usage or input errors, 4 internal
error (a bug, never a verdict), 5 the Spark JVM died (most often out of memory: raise
--driver-memory), 130 interrupted (Ctrl-C)."""


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "scan",
        help=SUMMARY,
        description=SUMMARY[0].upper() + SUMMARY[1:] + ".",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_arguments(parser)
    parser.set_defaults(handler=run)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from offsets_auditor.cli.options import add_reader_option

    parser.add_argument("log_dirs", nargs="+", metavar="LOGDIR")
    parser.add_argument(
        "--out", required=True, type=Path, metavar="RESULTS", help="the results dir (created)"
    )
    parser.add_argument(
        "--broker-config",
        type=Path,
        metavar="FILE",
        help="the brokers' server.properties (the same for every LOGDIR)",
    )
    parser.add_argument(
        "--kafka-version",
        action="append",
        default=[],
        metavar="[LOGDIR=]VERSION",
        help="the Kafka version of every LOGDIR, or of one (repeatable); default: detected from"
        " each log dir, as `audit` does",
    )
    parser.add_argument(
        "--server-log",
        action="append",
        default=[],
        metavar="[LOGDIR=]FILE",
        help="the broker's server.log (or kafkaServer.out) of every LOGDIR, or of one"
        " (repeatable): its version line pins the Kafka version, its starts, load order and"
        " coordinator load times are read as `audit` reads them; default: one found beside each"
        " log dir (server.log or kafkaServer.out there or in logs/ there)",
    )
    parser.add_argument(
        "--cleaner-log",
        action="append",
        default=[],
        metavar="[LOGDIR=]FILE",
        help="the broker's log-cleaner.log of every LOGDIR, or of one (repeatable: several"
        " FILEs for one LOGDIR are read together, as `audit --cleaner-log F1 F2` reads them; one"
        " FILE: the live log, its rotated files read too); default: one found beside the log"
        " dir's server log, or beside the log dir or in logs/ there",
    )
    parser.add_argument(
        "--log-timezone",
        default="UTC",
        metavar="ZONE",
        help="the time zone the brokers' logs are written in (default %(default)s), as for `audit`",
    )
    parser.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="a broker or __consumer_offsets topic property (repeatable)",
    )
    parser.add_argument(
        "--master",
        metavar="M",
        help="Spark master URL (default: local[*], or what spark-submit was given)",
    )
    parser.add_argument(
        "--driver-memory",
        default="2g",
        metavar="SIZE",
        help="the Spark driver's JVM heap, e.g. 6g (default %(default)s; in local mode the"
        " executors share it). Its need grows with the committed offsets scanned: about 2 GiB"
        " per million. Under spark-submit, give spark-submit's own --driver-memory instead",
    )
    parser.add_argument(
        "--publisher",
        metavar="NAME",
        help="who publishes this scan's runs: RESULTS/publishers/NAME/ (letters, digits, '.',"
        " '_', '-'). Default: broker-<id>.<cluster id> when every LOGDIR belongs to one broker"
        " (a scan on the broker's host), else scan-<digest of the LOGDIRs>. Give it for"
        " scheduled scans, so that a scan that cannot read its log dirs records its failure"
        " under the same name",
    )
    parser.add_argument(
        "--cluster-id",
        metavar="ID",
        help="the cluster every LOGDIR belongs to, for log dirs whose meta.properties has no"
        " cluster.id (ZooKeeper-mode brokers before Kafka 2.4): the service tells clusters apart"
        " by it. Give each broker's scan the same (the cluster id the brokers report, e.g."
        " zookeeper-shell.sh ... get /cluster/id, or any name); a LOGDIR whose meta.properties"
        " names another is refused. One that begins with '-': --cluster-id=ID",
    )
    parser.add_argument(
        "--keep",
        type=int,
        default=10,
        metavar="N",
        help="runs to keep in RESULTS (default %(default)s; older ones are removed after the new"
        " one is published)",
    )
    parser.add_argument(
        "--no-groups", action="store_true", help="skip recovering the groups' committed offsets"
    )
    parser.add_argument(
        "--load-rate",
        type=float,
        default=None,
        metavar="MIB_PER_S",
        help="coordinator load throughput assumed for load-time estimates (default: audit's)",
    )
    parser.add_argument(
        "--now",
        type=int,
        default=None,
        metavar="EPOCH_MS",
        help="the time the emulation assumes, in epoch milliseconds (default: now)",
    )
    add_reader_option(parser)


def run(args: argparse.Namespace) -> int:
    """The scan, and whatever stops it: one line on stderr, and (once the results dir is known)
    a failure record the service turns into ``OffsetsScanFailing``."""
    from offsets_auditor.audit.plan import PlanError
    from spark_jobs.job import ExecutorError

    failures = Failures(args)
    try:
        options = scan_options(args, failures)
        return scan(args.master, options, args.driver_memory)
    except UsageError as error:
        return failures.stop(3, str(error))
    except PlanError as error:
        return failures.stop(3, str(error))
    except ExecutorError as error:
        return failures.stop(INTERNAL_ERROR, f"internal error on an executor: {error}")
    except (ConnectionError, EOFError) as error:  # the py4j link to a JVM that died
        return failures.stop(
            5,
            f"the Spark JVM stopped answering ({type(error).__name__}): most often it ran out of"
            " memory (java.lang.OutOfMemoryError above). Run again with a larger --driver-memory"
            f" (now {args.driver_memory}), or on a cluster.",
        )
    except OSError as error:
        where = error.filename or args.out
        return failures.stop(
            3, f"cannot write {where}: {error.strerror or error} (is the results dir writable?)"
        )
    except Exception as error:
        if getattr(args, "traceback", False):
            import traceback

            traceback.print_exc()
        return failures.stop(INTERNAL_ERROR, f"internal error: {_py4j_line(error)}")


class UsageError(Exception):
    """What the command line or its inputs got wrong (exit 3), in words."""


def scan_options(args: argparse.Namespace, failures: Failures) -> Any:
    from offsets_auditor.broker_logs.reading import cleaner_log_exists
    from offsets_auditor.broker_logs.zones import parse_zone
    from offsets_auditor.logdir import fs
    from offsets_auditor.logdir.meta_properties import parse_java_properties
    from offsets_auditor.logdir.shape import looks_like_log_dir, not_a_log_dir_message
    from offsets_auditor.reader.reading import ReadOptions
    from spark_jobs.job import ScanOptions

    if args.keep < 1:
        raise UsageError("--keep must be at least 1")
    if args.publisher is not None and not published_name(args.publisher):
        raise UsageError(
            f"--publisher {args.publisher!r}: use letters, digits, '.', '_' and '-' (at most 100,"
            " starting with a letter or digit)"
        )
    log_dirs = []
    for text in args.log_dirs:
        path = local_path(text)
        if path is None:
            raise UsageError(
                f"{text}: only local paths and file:// URIs are read (mount other filesystems,"
                " or see docs/operators-guide.md, 'Other filesystems')"
            )
        log_dirs.append(path.resolve())
    if args.cluster_id is not None and not cluster_id_name(args.cluster_id):
        raise UsageError(
            f"--cluster-id {args.cluster_id!r}: use letters, digits, '.', '_' and '-', at most"
            " 100 (Kafka's cluster ids are URL-safe base64)"
        )
    failures.publisher = args.publisher or default_publisher(log_dirs, args.cluster_id)
    for text, path in zip(args.log_dirs, log_dirs, strict=True):
        if not path.is_dir():
            raise UsageError(f"{text} is not a directory (give a broker log dir)")
        if not looks_like_log_dir(path):
            raise UsageError(not_a_log_dir_message(path))
        said = meta_cluster_id(path)
        if args.cluster_id is not None and said is not None and said != args.cluster_id:
            raise UsageError(
                f"--cluster-id {args.cluster_id}: {text}/meta.properties says cluster.id={said}"
            )
    try:
        versions = kafka_versions(args.kafka_version, log_dirs)
        logs = server_logs(args.server_log, log_dirs)
    except ValueError as error:
        raise UsageError(str(error)) from error
    for log in set(logs.values()):
        if log is not None and not log.is_file():
            raise UsageError(f"--server-log {log}: no such file")
    cleaner = cleaner_logs(args.cleaner_log, log_dirs)
    for files in cleaner.values():
        for log in files:
            if not cleaner_log_exists(log):
                raise UsageError(f"--cleaner-log {log}: no such file")
    try:
        parse_zone(args.log_timezone)
    except ValueError as error:
        raise UsageError(f"--log-timezone: {error}") from error
    overrides = []
    for item in args.set:
        key, sep, value = item.partition("=")
        if not sep:
            raise UsageError(f"--set takes KEY=VALUE, not {item!r}")
        overrides.append((key.strip(), value))
    properties: list[tuple[str, str]] = []
    if args.broker_config is not None:
        try:
            text = fs.read_small_file(args.broker_config).decode("utf-8", "replace")
        except OSError as error:
            raise UsageError(f"cannot read {args.broker_config}: {error.strerror}") from error
        properties = parse_java_properties(text)
    options = ScanOptions(
        log_dirs=tuple(log_dirs),
        out=args.out.resolve(),
        publisher=failures.publisher,
        properties=tuple(properties),
        overrides=tuple(overrides),
        versions=versions,
        server_logs=logs,
        cleaner_logs=cleaner,
        log_timezone=args.log_timezone,
        with_groups=not args.no_groups,
        read=ReadOptions(backend=args.reader),
        keep=args.keep,
        now_ms=args.now,
        cluster_id=args.cluster_id,
        **({} if args.load_rate is None else {"load_rate": args.load_rate * 1048576}),
    )
    try:
        options.home.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise UsageError(f"cannot create {options.home}: {error.strerror}") from error
    return options


class Failures:
    """Where a failed scan says so: ``HOME/failures/`` of its publisher (``None`` until the
    publisher is known: a scan that stops before that only prints its line)."""

    def __init__(self, args: argparse.Namespace) -> None:
        self.args = args
        self.publisher: str | None = None

    def stop(self, status: int, reason: str) -> int:
        """Print ``reason`` as the command's one line, record it, return ``status``."""
        from offsets_auditor import published
        from spark_jobs.job import new_run_id
        from spark_jobs.publish import record_failure

        print(f"offsets-auditor scan: {reason}", file=sys.stderr)
        if self.publisher is None:
            return status
        now = time.time()
        record = {
            "run_id": new_run_id(now),
            "publisher": self.publisher,
            "failed_at": iso_time(now),
            "log_dirs": list(self.args.log_dirs),
            "exit_status": status,
            "reason": reason,
        }
        home = published.publisher_home(self.args.out.resolve(), self.publisher)
        try:
            record_failure(home, record, self.args.keep if self.args.keep >= 1 else 10)
        except OSError as error:
            print(
                f"offsets-auditor scan: and the failure could not be recorded in {home}:"
                f" {error.strerror or error} (the service sees the publisher go stale)",
                file=sys.stderr,
            )
        return status


def published_name(name: str) -> bool:
    from offsets_auditor import published

    return published.PUBLISHER_NAME.fullmatch(name) is not None


def cluster_id_name(name: str) -> bool:
    from offsets_auditor import published

    return published.CLUSTER_ID.fullmatch(name) is not None


def meta_cluster_id(log_dir: Path) -> str | None:
    """The ``cluster.id`` of the log dir's ``meta.properties`` (None: none, or unreadable)."""
    from offsets_auditor.logdir import fs
    from offsets_auditor.logdir.meta_properties import parse_meta_properties

    try:
        return parse_meta_properties(fs.read_small_file(log_dir / "meta.properties")).cluster_id
    except (OSError, ValueError):
        return None


def default_publisher(log_dirs: list[Path], cluster_id: str | None = None) -> str:
    """``broker-<id>`` (with ``.<cluster id>`` when known: ``meta.properties``', else
    ``cluster_id``) when every log dir's ``meta.properties`` names the same broker: a scan on
    one broker's host; else ``scan-<digest of the log dirs' paths>``, stable from one run to
    the next."""
    import xxhash

    from offsets_auditor.logdir import fs
    from offsets_auditor.logdir.meta_properties import parse_meta_properties

    owners: set[tuple[str | None, int] | None] = set()
    for path in log_dirs:
        try:
            meta = parse_meta_properties(fs.read_small_file(path / "meta.properties"))
        except (OSError, ValueError):
            owners.add(None)
            continue
        cluster = meta.cluster_id if meta.cluster_id is not None else cluster_id
        owners.add((cluster, meta.broker_id) if meta.broker_id is not None else None)
    (owner,) = owners if len(owners) == 1 else (None,)
    if owner is not None:
        cluster, broker = owner
        name = f"broker-{broker}" + (f".{cluster}" if cluster else "")
        if published_name(name):
            return name
    digest = xxhash.xxh64("\0".join(sorted(str(p) for p in log_dirs)).encode()).hexdigest()
    return f"scan-{digest[:12]}"


def _py4j_line(error: BaseException) -> str:
    """An exception as one line; for Spark's (a Python error on an executor wrapped in Java's
    text, thousands of lines), the Python exception's own last line."""
    text = str(error)
    if "Traceback (most recent call last)" in text:
        lines = [line.strip() for line in text.splitlines() if line.strip()]
        python = [line for line in lines if re.match(r"^[A-Za-z_.]+(Error|Exception)\b", line)]
        frames = [line for line in lines if line.startswith("File ")]
        if python:
            where = f" ({frames[-1]})" if frames else ""
            return f"{python[-1][:300]}{where}"
    from offsets_auditor.cli.internal_error import one_line

    return one_line(error)


def iso_time(seconds: float) -> str:
    return (
        time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(seconds))
        + f".{int(seconds % 1 * 1000):03d}Z"
    )


@cyclic_gc_paused()  # the whole command, as ``audit``'s: its objects hold no cycles
def scan(master: str | None, options: Any, driver_memory: str | None = None) -> int:
    from spark_jobs.job import Counters, plan_inputs, republish_unchanged, run_scan, start
    from spark_jobs.progress import Progress
    from spark_jobs.session import spark_context

    tty = sys.stderr.isatty()
    started = time.monotonic()
    begun = start(options)
    result = republish_unchanged(options, begun)  # nothing changed: no Spark to start
    if result is None:
        if tty:
            print("starting Spark ...", file=sys.stderr, flush=True)
        # the log dirs are planned (version detection, listing: the driver's own reading)
        # while the JVM starts, which mostly waits or uses another core
        with ThreadPoolExecutor(1, thread_name_prefix="plan") as planning:
            planned = planning.submit(plan_inputs, options, begun.now_ms)
            sc = spark_context(master, driver_memory=driver_memory)
            inputs = planned.result()
        counters = Counters(sc)
        progress = Progress(counters, sys.stderr, enabled=tty)
        try:
            result = run_scan(sc, options, progress.set_total, counters, begun, inputs)
        finally:
            progress.stop()
    print_summary(result, time.monotonic() - started)
    status: int = result.manifest["exit_status"]
    return status


def print_summary(result: Any, seconds: float) -> None:
    """What the run published, from its tables (the same whether it was scanned or
    republished)."""
    import pyarrow.parquet as pq

    out = sys.stdout
    m = result.manifest
    counts, reuse = m["counts"], m["reuse"]
    tables = {
        name: pq.read_table(result.run_dir / f"{name}.parquet").to_pylist()
        for name in ("brokers", "partitions", "findings")
    }
    partitions_of, findings_of = _by_input(tables["partitions"]), _by_input(tables["findings"])
    out.write(
        f"scanned {counts['log_dirs']} log dir(s): {counts['partitions']} partitions,"
        f" {counts['segments']} segments, {counts['bytes'] / 1048576:,.1f} MiB in {seconds:,.1f} s"
        f" ({reuse['segments_reused']} segment(s) reused from the previous scan,"
        f" {reuse['segments_read']} read)\n"
    )
    if reuse.get("run_reused"):
        out.write(f"nothing changed since run {reuse['run_reused']}: published again\n")
    for broker in tables["brokers"]:
        partitions = partitions_of.get(broker["input"], [])
        out.write(
            f"\n{broker_label(broker['broker_id'], broker['log_dir'])}, Kafka"
            f" {broker['kafka_version']} ({broker['kafka_version_basis']})\n"
        )
        verdicts: dict[str, int] = {}
        for p in partitions:
            verdicts[p["outcome"]] = verdicts.get(p["outcome"], 0) + 1
        out.write(
            "  verdicts: " + ", ".join(f"{k} {v}" for k, v in sorted(verdicts.items())) + "\n"
        )
        never = [p for p in partitions if p["never_compacted"] and p["size_bytes"]]
        for p in sorted(never, key=lambda p: -p["size_bytes"]):
            out.write(
                f"  never compacted: {p['name']} {p['size_bytes']:,} bytes,"
                f" {p['outcome']}: {p['reason']}\n"
            )
        if broker["recommended_dedupe_buffer_size"] is not None:
            out.write(
                f"  recommendation: log.cleaner.dedupe.buffer.size="
                f"{broker['recommended_dedupe_buffer_size']}"
                f" at least ({broker['recommendation_arithmetic']})\n"
            )
        if broker.get("recommended_dedupe_buffer_size_with_headroom") is not None:
            out.write(
                "  with room for a day's growth: log.cleaner.dedupe.buffer.size="
                f"{broker['recommended_dedupe_buffer_size_with_headroom']},"
                f" {broker['recommendation_heap_bytes']:,} B of broker heap"
                f" ({broker['headroom_arithmetic']})\n"
            )
        severe = [
            f
            for f in findings_of.get(broker["input"], [])
            if f["severity"] in ("critical", "warning")
        ]
        if severe:
            out.write(f"  findings: {len(severe)} (critical and warning):\n")
            for f in severe[:10]:
                out.write(f"    [{f['severity']}] {f['kind']}: {f['detail'][:160]}\n")
            if len(severe) > 10:
                out.write(f"    ... {len(severe) - 10} more in the findings table\n")
    print_replicas(tables["brokers"], tables["partitions"], out)
    out.write(f"\npublished run {result.run_id} to {result.run_dir}\n")


def _by_input(rows: list[dict[str, Any]]) -> dict[int, list[dict[str, Any]]]:
    grouped: dict[int, list[dict[str, Any]]] = {}
    for row in rows:
        grouped.setdefault(row["input"], []).append(row)
    return grouped


def print_replicas(brokers: Any, partitions: Any, out: Any) -> None:
    """Replicas of one partition (same cluster, other brokers) side by side."""
    by_input = {b["input"]: b for b in brokers}
    replicas: dict[tuple[Any, int], list[tuple[Any, Any]]] = {}
    for p in partitions:
        broker = by_input[p["input"]]
        replicas.setdefault((broker["cluster_id"], p["partition"]), []).append((broker, p))
    shown = {k: v for k, v in replicas.items() if len({b["broker_id"] for b, _ in v}) > 1}
    if not shown:
        return
    out.write("\nreplicas side by side (size, cleaner checkpoint, verdict):\n")
    for (cluster, partition), copies in sorted(
        shown.items(), key=lambda kv: (str(kv[0][0]), kv[0][1])
    ):
        where = f" (cluster {cluster})" if cluster else ""
        sides = "  |  ".join(
            f"{_short_label(b)}: {p['size_bytes']:,} B, checkpoint"
            f" {'-' if p['cleaner_checkpoint'] is None else p['cleaner_checkpoint']},"
            f" {p['outcome']}"
            for b, p in copies
        )
        out.write(f"  __consumer_offsets-{partition}{where}: {sides}\n")


def _short_label(broker: dict[str, Any]) -> str:
    """``broker 1``; the whole label when there is no broker.id (never ``broker None``)."""
    if broker["broker_id"] is None:
        return broker_label(None, broker["log_dir"])
    return f"broker {broker['broker_id']}"


def local_path(text: str) -> Path | None:
    """A LOGDIR argument as a local path: a plain path or a ``file://`` URI; None for another
    scheme."""
    parsed = urlparse(text)
    if parsed.scheme == "file":
        return Path(unquote(parsed.path))
    if parsed.scheme and len(parsed.scheme) > 1:  # not a Windows drive letter
        return None
    return Path(text)


def kafka_versions(given: list[str], log_dirs: list[Path]) -> dict[Path, Any]:
    """``--kafka-version V`` (every log dir) and ``--kafka-version LOGDIR=V`` (one) as a map."""
    from offsets_auditor.versions import KafkaVersion

    everyone = None
    versions: dict[Path, Any] = {}
    for item in given:
        where, sep, version = item.rpartition("=")
        parsed = KafkaVersion.parse(version)
        if not sep:
            everyone = parsed
            continue
        path = local_path(where)
        target = path.resolve() if path is not None else None
        if target not in log_dirs:
            raise ValueError(f"--kafka-version {item}: {where} is not one of the LOGDIRs")
        versions[target] = parsed
    return {d: versions.get(d, everyone) for d in log_dirs}


def server_logs(given: list[str], log_dirs: list[Path]) -> dict[Path, Path | None]:
    """``--server-log FILE`` (every log dir) and ``--server-log LOGDIR=FILE`` (one) as a map.
    A ``LOGDIR=`` prefix counts only when it names one of the LOGDIRs (a file name may hold
    ``=``)."""
    everyone = None
    logs: dict[Path, Path] = {}
    for item in given:
        where, sep, file = item.partition("=")
        path = local_path(where) if sep else None
        target = path.resolve() if path is not None else None
        if target in log_dirs:
            logs[target] = Path(file)
        else:
            everyone = Path(item)
    return {d: logs.get(d, everyone) for d in log_dirs}


def cleaner_logs(given: list[str], log_dirs: list[Path]) -> dict[Path, tuple[Path, ...]]:
    """``--cleaner-log FILE`` (every log dir) and ``--cleaner-log LOGDIR=FILE`` (one), each
    repeatable: the files of each log dir in the order given (empty: found beside it)."""
    everyone: list[Path] = []
    logs: dict[Path, list[Path]] = {}
    for item in given:
        where, sep, file = item.partition("=")
        path = local_path(where) if sep else None
        target = path.resolve() if path is not None else None
        if target in log_dirs:
            logs.setdefault(target, []).append(Path(file))
        else:
            everyone.append(Path(item))
    return {d: tuple(logs.get(d, everyone)) for d in log_dirs}


def main(argv: list[str] | None = None) -> int:
    from offsets_auditor.cli.exit_status import ArgumentParser

    parser = ArgumentParser(
        prog="spark_jobs/scan.py",
        description=SUMMARY,
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_arguments(parser)
    return run(parser.parse_args(argv))
