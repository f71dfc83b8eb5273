"""Full audit throughput per core: ``python -m benchmarks.audit``.

The audit of one ``__consumer_offsets`` partition made of a full 100 MiB segment of offset commits
(``benchmarks/generate.py``, message format v0 or v2) and a tiny active segment after it, in three
modes: the cleaner audit ``audit_at(..., with_groups=False)`` (read + decode + MD5 into
columns, segment stats and group writers, every cleaner pass over the columns: offset map, then the
retention filter, the dedupe-buffer advice, the startup checks); the full audit
``audit_at(..., with_groups=True)`` (the same read also folds every group's committed
offsets); and the group recovery alone (``groups.recover``).

Each case runs in its own process pinned to one core (``os.sched_setaffinity(0, {0})``), with a
dedupe buffer whose map fits the partition's keys (one pass) or one that needs several passes.
Reported, best of ``--repeat`` runs:

- records/s as ``partition records x passes / s`` (each pass reads the records below its end
  again) and as ``partition records / s`` (the partition's own records per second of wall time);
- MiB/s of the partition;
- memory: the emulated offset map (``slots x 24`` bytes), the peak of Python allocations
  (``tracemalloc``, a separate run: it slows allocation down) and the process's peak RSS
  (``ru_maxrss``: interpreter, imports and the map included).

The table is printed and written to the "Audit throughput" section of ``benchmarks/README.md``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import subprocess
import sys
import tempfile
import time
import tracemalloc
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from benchmarks.generate import SEGMENT_BYTES, default_batches, ensure_segments, legacy_entries

README = Path(__file__).parent / "README.md"
SECTION = "## Audit throughput"
PARTITION = "__consumer_offsets-0"
#: The emulation's clock (ms): after every benchmark commit.
NOW_MS = 1_800_000_000_000
DEFAULT_DEDUPE_BUFFER = 134_217_728
MIN_DEDUPE_BUFFER = 1024 * 1024 + 1


@dataclass(frozen=True)
class Case:
    name: str
    magic: int
    kafka_version: str
    #: "fits": Kafka's default buffer (128 MiB); "passes": the broker's minimum (1 MiB + 1)
    buffer: str


CASES = (
    Case("v0, 0.9.0.1, map fits", 0, "0.9.0.1", "fits"),
    Case("v0, 2.3.0, map fits", 0, "2.3.0", "fits"),
    Case("v0, 2.3.0, several passes", 0, "2.3.0", "passes"),
    Case("v2, 2.3.0, map fits", 2, "2.3.0", "fits"),
    Case("v2, 2.3.0, several passes", 2, "2.3.0", "passes"),
)


# -- the log dir ---------------------------------------------------------------------------------


def build_log_dir(root: Path, segment: Path, magic: int) -> Path:
    """``root/kafka-logs`` holding ``__consumer_offsets-0/``: ``segment`` (a symlink, named as
    the first segment) and a one-entry active segment based at its next offset."""
    from offsets_auditor.cleaner.partition_scan import scan_partition
    from offsets_auditor.logdir.model import offsets_partitions, read_log_dir
    from offsets_auditor.reader.reading import DEFAULT_READ

    log_dir = root / "kafka-logs"
    partition = log_dir / PARTITION
    partition.mkdir(parents=True)
    (log_dir / "meta.properties").write_text("version=0\nbroker.id=0\n")
    (partition / "00000000000000000000.log").symlink_to(segment.resolve())
    scanned = scan_partition(offsets_partitions(read_log_dir(log_dir))[0], DEFAULT_READ.segment)
    next_offset = scanned.log_end_offset
    entry = next(legacy_entries() if magic in (0, 1) else default_batches())
    # the base offset / offset field is not covered by either CRC
    (partition / f"{next_offset:020d}.log").write_bytes(
        next_offset.to_bytes(8, "big", signed=True) + entry[8:]
    )
    return log_dir


def distinct_keys(log_dir: Path) -> int:
    from offsets_auditor.cleaner.partition_scan import scan_partition
    from offsets_auditor.cleaner.requirements import distinct_keys
    from offsets_auditor.logdir.model import offsets_partitions, read_log_dir
    from offsets_auditor.reader.reading import DEFAULT_READ

    scan = scan_partition(offsets_partitions(read_log_dir(log_dir))[0], DEFAULT_READ.segment)
    before, _ = distinct_keys(scan, list(range(len(scan.segments))), 0, scan.log_end_offset)
    return before[-1]


def dedupe_buffer(case: Case, keys: int) -> int:
    """Kafka's default (128 MiB: every key fits), or the broker's minimum (just over 1 MiB per
    thread, 39,321 keys), below a quarter of the keys of either segment."""
    return DEFAULT_DEDUPE_BUFFER if case.buffer == "fits" else MIN_DEDUPE_BUFFER


def min_cleanable_ratio(case: Case) -> float:
    """After a partial clean, the rest of the dirty segment counts as both clean and dirty bytes
    (``logSegments`` includes the segment holding the first dirty offset), so the dirty ratio is
    exactly 0.5, not above the default threshold: the "several passes" cases lower it."""
    return 0.5 if case.buffer == "fits" else 0.01


# -- one case, in its own process ----------------------------------------------------------------


def run_case(
    log_dir: Path, version: str, buffer: int, ratio: float, repeat: int, reader: str
) -> dict[str, Any]:
    os.sched_setaffinity(0, {0})
    from offsets_auditor.audit.group_recovery import recover
    from offsets_auditor.audit.stages import audit_at
    from offsets_auditor.cleaner.config import CleanerConfig
    from offsets_auditor.reader.options import Backend
    from offsets_auditor.reader.reading import ReadOptions
    from offsets_auditor.versions import KafkaVersion

    config = CleanerConfig(
        kafka_version=KafkaVersion.parse(version),
        dedupe_buffer_size=buffer,
        min_cleanable_ratio=ratio,
    )
    read = ReadOptions(backend=Backend(reader))

    def best_of(run: Any) -> tuple[float, float, Any]:
        best = best_cpu = float("inf")
        result = None
        for _ in range(repeat):
            started, started_cpu = time.perf_counter(), time.process_time()
            result = run()
            best = min(best, time.perf_counter() - started)
            best_cpu = min(best_cpu, time.process_time() - started_cpu)
        return best, best_cpu, result

    seconds, cpu, audit = best_of(
        lambda: audit_at(log_dir, config, NOW_MS, with_groups=False, read=read)
    )
    (partition,) = audit.partitions
    with_groups, _, full = best_of(
        lambda: audit_at(log_dir, config, NOW_MS, with_groups=True, read=read)
    )
    groups_only, _, recovered = best_of(lambda: recover(log_dir, version, read=read))
    tracemalloc.start()
    audit_at(log_dir, config, NOW_MS, with_groups=False, read=read)
    _, python_peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    scan = partition.scan
    return {
        "seconds": seconds,
        "cpu_seconds": cpu,
        "with_groups_seconds": with_groups,
        "groups_seconds": groups_only,
        "groups": len(recovered.groups),
        "offsets": sum(len(g.offsets) for g in full.groups),
        "records": scan.records,
        "bytes": scan.size_bytes,
        "passes": len(partition.passes),
        "outcome": partition.outcome.value,
        "map_entries": partition.passes[0].map_entries if partition.passes else 0,
        "python_peak": python_peak,
        "max_rss": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024,
        "reader": reader,
    }


# -- the table -----------------------------------------------------------------------------------


def mib(n: float) -> str:
    return f"{n / 1048576:,.1f}"


def table(rows: list[tuple[Case, int, float, int, dict[str, Any]]]) -> str:
    lines = [
        "| partition | dedupe buffer | min dirty ratio | distinct keys | passes | records"
        " | records x passes / s | partition records / s | partition MiB/s"
        " | partition records / CPU s | audit with groups s (x no-groups) | groups alone s (x)"
        " | Python peak MiB | max RSS MiB |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for case, buffer, ratio, keys, r in rows:
        seconds = r["seconds"]
        lines.append(
            f"| {case.name} | {buffer:,} | {ratio} | {keys:,} | {r['passes']} | {r['records']:,}"
            f" | {r['records'] * max(r['passes'], 1) / seconds:,.0f}"
            f" | {r['records'] / seconds:,.0f} | {r['bytes'] / 1048576 / seconds:,.1f}"
            f" | {r['records'] / r['cpu_seconds']:,.0f}"
            f" | {r['with_groups_seconds']:.2f} ({r['with_groups_seconds'] / seconds:.2f}x)"
            f" | {r['groups_seconds']:.2f} ({r['groups_seconds'] / seconds:.2f}x)"
            f" | {mib(r['python_peak'])} | {mib(r['max_rss'])} |"
        )
    return "\n".join(lines)


def section(body: str, command: str) -> str:
    return (
        f"{SECTION}\n\n"
        "The cleaner audit of one `__consumer_offsets` partition (`audit_at(...,"
        " with_groups=False)`: read + decode + MD5 into columns, every cleaner pass over them,"
        " the dedupe-buffer advice, startup checks), then the full audit with every group's"
        " offsets recovered in the same read, then the group recovery alone (`groups.recover`),"
        " one core, best of the repeats. Partition: the 100 MiB segment of"
        " `benchmarks/generate.py`"
        ' plus a one-entry active segment, no cleaner checkpoint. "records x passes / s"'
        " counts the partition's records once per pass (each pass reads them again);"
        ' "partition records / s" is the partition\'s own records per second of wall time,'
        ' "... / CPU s" per second of process CPU time (the machine may be shared).'
        " Memory: the peak of Python allocations of the cleaner audit (tracemalloc: the columns"
        " and the survivor flags, about 90 bytes per record here) and the process's peak RSS"
        " (interpreter, imports and all three modes included).\n\n"
        f"`{command}` on {platform.machine()} / Python {platform.python_version()}:\n\n"
        f"{body}\n"
    )


def write_readme(text: str) -> None:
    current = README.read_text() if README.exists() else "# Benchmarks\n"
    if SECTION in current:
        head, _, rest = current.partition(SECTION)
        after = rest.find("\n## ")
        tail = rest[after + 1 :] if after >= 0 else ""
        current = head.rstrip("\n") + "\n\n" + text + ("\n" + tail if tail else "")
    else:
        current = current.rstrip("\n") + "\n\n" + text
    README.write_text(current)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--size", type=int, default=SEGMENT_BYTES, help="segment bytes")
    parser.add_argument("--no-readme", action="store_true", help="only print the table")
    parser.add_argument(
        "--reader", default="native", choices=("native", "python"), help="record reader"
    )
    parser.add_argument("--case", help=argparse.SUPPRESS)  # internal: run one case, print JSON
    args = parser.parse_args(argv)
    if args.case:
        log_dir, version, buffer, ratio = args.case.split(",")
        result = run_case(
            Path(log_dir), version, int(buffer), float(ratio), args.repeat, args.reader
        )
        print(json.dumps(result))
        return 0

    segments = ensure_segments(size=args.size)
    rows = []
    with tempfile.TemporaryDirectory(prefix="offsets-auditor-bench-") as tmp:
        log_dirs = {m: build_log_dir(Path(tmp) / f"v{m}", p, m) for m, p in segments.items()}
        keys = {m: distinct_keys(d) for m, d in log_dirs.items()}
        for case in CASES:
            buffer = dedupe_buffer(case, keys[case.magic])
            ratio = min_cleanable_ratio(case)
            spec = f"{log_dirs[case.magic]},{case.kafka_version},{buffer},{ratio}"
            child = [sys.executable, "-m", "benchmarks.audit", "--repeat", str(args.repeat)]
            child += ["--reader", args.reader]
            out = subprocess.run(
                [*child, "--case", spec], check=True, capture_output=True, text=True
            ).stdout
            result = json.loads(out)
            rows.append((case, buffer, ratio, keys[case.magic], result))
            print(f"{case.name}: {result}", file=sys.stderr)
    command = "python -m benchmarks.audit" + (
        f" --reader {args.reader}" if args.reader != "native" else ""
    )
    text = section(table(rows), command)
    print(text)
    if not args.no_readme:
        write_readme(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
