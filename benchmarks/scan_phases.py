"""Where the scan's time goes: ``python -m benchmarks.scan_phases [--scale S] [--master M]``.

One scan (``run_scan``, in this process, after the session is up) of the first broker's log dir
of the benchmark cluster, with a timer around each phase the driver goes through, by wrapping
the functions the scan calls (nothing of the scan is changed):

- listing the partitions as consistent snapshots (``list_partition``);
- waiting for the executors: stages A (per segment) and B (per partition) run when the driver
  collects the folded results, and the emulations apart when it collects those (``RDD.collect``);
- unpickling the partitions' outcomes on the driver (``cache.loads``);
- each log dir's conclusion (``conclude``: the cleaner's threads, groups, findings) and its report
  as JSON-ready dicts (``report_json``);
- the table rows (``_tables``), their conversion to Arrow (``publish.to_arrow``);
- publishing: the reports' JSON (``publish._write_json``) and the Parquet files (the rest of
  ``publish.publish``).

Prints one table (seconds, share of the scan).
"""

from __future__ import annotations

import argparse
import functools
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

from benchmarks.scan import _cluster

PHASES: tuple[tuple[str, str, str], ...] = (
    ("spark_jobs.job", "list_partition", "listing partitions"),
    ("pyspark.core.rdd", "RDD.collect", "executors: stages A and B, emulations"),
    ("spark_jobs.cache", "loads", "unpickling outcomes (driver)"),
    ("spark_jobs.job", "conclude", "conclusion per log dir (driver)"),
    ("spark_jobs.job", "report_json", "reports as dicts (driver)"),
    ("spark_jobs.job", "_tables", "table rows (driver)"),
    ("spark_jobs.publish", "to_arrow", "rows to Arrow (driver)"),
    ("spark_jobs.publish", "_write_json", "reports' JSON written (driver)"),
    ("spark_jobs.publish", "publish", "publishing, JSON included (driver)"),
)


def _timed(spent: dict[str, float], label: str, function: Callable[..., Any]) -> Any:
    @functools.wraps(function)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        started = time.perf_counter()
        try:
            return function(*args, **kwargs)
        finally:
            spent[label] += time.perf_counter() - started

    return wrapper


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--scale", type=float, default=0.2)
    parser.add_argument("--master", default="local[2]")
    args = parser.parse_args(argv)
    import importlib

    from offsets_auditor.logdir.meta_properties import parse_java_properties
    from spark_jobs.job import ScanOptions, run_scan
    from spark_jobs.session import spark_context

    _, manifest = _cluster(args.scale)
    broker = manifest["brokers"][0]
    sc = spark_context(args.master)
    sc.parallelize([0], 1).count()
    spent: dict[str, float] = defaultdict(float)
    for module_name, attribute, label in PHASES:
        owner: Any = importlib.import_module(module_name)
        *path, name = attribute.split(".")
        for part in path:
            owner = getattr(owner, part)
        setattr(owner, name, _timed(spent, label, getattr(owner, name)))
    with tempfile.TemporaryDirectory(prefix="scan-phases-", dir=Path.cwd()) as out:
        text = Path(broker["server_properties"]).read_text()
        options = ScanOptions(
            log_dirs=(Path(broker["log_dir"]),),
            out=Path(out),
            properties=tuple(parse_java_properties(text)),
            now_ms=manifest["now_ms"],
        )
        started = time.perf_counter()
        run_scan(sc, options)
        total = time.perf_counter() - started
    sc.stop()
    print(
        f"one scan of {broker['log_dir']} ({broker['bytes'] / 1e9:.2f} GB,"
        f" {broker['live_offsets']:,} committed offsets), {args.master}: {total:.1f} s"
    )
    print("| phase | s | share |\n|---|---:|---:|")
    for _, _, label in PHASES:
        print(f"| {label} | {spent[label]:.1f} | {spent[label] / total:.0%} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
