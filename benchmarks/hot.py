"""One hot partition at the size that matters: ``python -m benchmarks.hot [--gib 20]``.

The log dir of one broker holding only the full-scale cluster's hot partition, written to
``--gib`` GiB in 100 MiB segments (``python -m benchmarks.generate cluster --hot-gib G``,
``benchmarks/cluster.py``; generated unless present), audited and scanned on one and on two
cores:

- ``offsets-auditor audit --jobs 1`` pinned to one core, ``--jobs 2`` on both;
- ``offsets-auditor scan --master local[1]`` pinned to one core, ``local[2]`` on both, each into
  an empty results dir (removed after the run: the segment cache takes about half the
  partition's size).

Each run is a separate process measured from outside (``benchmarks/measure.py``: wall time,
CPU seconds of the process tree, peak resident set and anonymous memory per process, the disk's
bytes read and written), ``--repeat`` runs of each in turns (every run once, then again: this
machine's speed drifts by tens of percent within minutes), the best in the table and the median
of the turns' ratios in the verdicts, with the load average before each (the machine may be
shared). Before each run the partition is read once, unmeasured (``benchmarks.scan.warm``), so
every run starts with as much of it in the page cache as fits; a 20 GiB partition on a 24 GiB
machine, with the audit's scratch files beside it, does not all fit, so runs read from disk too.

From the audit's times on one and two cores (``t1``, ``t2``) it projects the time for a
``--project-gb`` GB partition on ``--project-cores`` cores: the per-core rate ``r = bytes / t1``;
the serial share ``s = 2 * t2 / t1 - 1`` (Amdahl: ``t2 = t1 * (s + (1 - s) / 2)``); then
``T = (GB / r) * (s + (1 - s) / cores)``. The table, the targets and that arithmetic go to the
"One hot partition" section of ``benchmarks/README.md``.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from benchmarks import scan as scan_benchmark
from benchmarks.cluster import ensure_hot
from benchmarks.generate import DATA_DIR
from benchmarks.measure import Measured, run
from benchmarks.scan import spark_cost, spark_env, startup, warm

README = Path(__file__).parent / "README.md"
SECTION = "## One hot partition on many cores"
GiB = 1024**3


def _python(*args: str) -> list[str]:
    return [sys.executable, *args]


def checked(measured: Measured) -> Measured:
    """``measured``, if the run succeeded (an audit's findings exit 1 or 2)."""
    if measured.returncode not in (0, 1, 2):
        raise RuntimeError(f"run failed (exit {measured.returncode}): {measured.stderr[-2000:]}")
    return measured


def in_turns(
    repeat: int, measures: dict[str, Any], before: Callable[[], None] = lambda: None
) -> dict[str, tuple[list[Measured], list[float]]]:
    """Each of ``measures`` run ``repeat`` times, one after the other in turn (1, 2, 3, 1, 2,
    3, ...), so that the machine's speed, which drifts by tens of percent within minutes here,
    weighs on every run alike: per key, every run in order and the load average before each.
    ``before`` runs before each run, unmeasured."""
    runs: dict[str, tuple[list[Measured], list[float]]] = {k: ([], []) for k in measures}
    for turn in range(repeat):
        for key, measure in measures.items():
            before()
            runs[key][1].append(os.getloadavg()[0])
            runs[key][0].append(checked(measure()))
            seconds = runs[key][0][-1].wall_seconds
            print(f"{key}, turn {turn + 1}/{repeat}: {seconds:.1f} s", file=sys.stderr, flush=True)
    return runs


def speedup(one: dict[str, Any], two: dict[str, Any]) -> tuple[float, str]:
    """How much faster ``two`` ran than ``one``: the median of the turns' ratios (each turn's
    runs a few minutes apart), or the best runs' ratio for rows of one run each; and the
    words that say so."""
    best = one["wall_seconds"] / two["wall_seconds"]
    text = f"{one['wall_seconds']:.1f} s -> {two['wall_seconds']:.1f} s at best, {best:.2f}x"
    pairs = list(zip(one.get("walls", []), two.get("walls", []), strict=False))
    if len(pairs) < 2:
        return best, text
    ratios = sorted(a / b for a, b in pairs)
    middle = len(ratios) // 2
    median = ratios[middle] if len(ratios) % 2 else (ratios[middle - 1] + ratios[middle]) / 2
    each = ", ".join(f"{a / b:.2f}x" for a, b in pairs)
    return median, f"{text}; run in turns: {each}, median {median:.2f}x"


def audit(hot: dict[str, Any], jobs: int, cpus: set[int], limit: int) -> Measured:
    command = _python("-m", "offsets_auditor.cli.main", "audit", hot["log_dir"])
    command += ["--broker-config", hot["server_properties"], "--now", str(hot["now_ms"])]
    command += ["--jobs", str(jobs)]
    return run(command, cpus=cpus, limit_bytes=limit)


def scan(hot: dict[str, Any], master: str, cpus: set[int], out: Path, limit: int) -> Measured:
    shutil.rmtree(out, ignore_errors=True)
    command = _python("-m", "offsets_auditor.cli.main", "scan", hot["log_dir"])
    command += ["--out", str(out), "--master", master, "--now", str(hot["now_ms"])]
    command += ["--broker-config", hot["server_properties"]]
    try:
        return run(command, cpus=cpus, limit_bytes=limit, env=scan_benchmark.SPARK_ENV)
    finally:
        shutil.rmtree(out, ignore_errors=True)


def record(
    name: str, runs: list[Measured], loads: list[float], spark: float = 0.0
) -> dict[str, Any]:
    """The row of the fastest of ``runs``, with the wall time of each (in the order run)."""
    m = min(runs, key=lambda r: r.wall_seconds)
    return {
        "name": name,
        "wall_seconds": m.wall_seconds,
        "walls": [r.wall_seconds for r in runs],
        "cpu_seconds": m.cpu_seconds,
        "spark_seconds": spark,
        "load_averages": loads,
        "peaks": {role: m.peak(role) for role in ("driver", "jvm", "worker", "other")},
        "anon_peaks": {role: m.peak_anon(role) for role in ("driver", "jvm", "worker", "other")},
        "disk_read_bytes": m.disk_read_bytes,
        "disk_written_bytes": m.disk_written_bytes,
        "iowait_seconds": m.iowait_seconds,
    }


def projection(t1: float, t2: float, size: int, gb: float, cores: int) -> tuple[str, float]:
    rate = size / 1e6 / t1
    serial = min(max(2 * t2 / t1 - 1, 0.0), 1.0)
    one_core = gb * 1000 / rate
    seconds = one_core * (serial + (1 - serial) / cores)
    text = (
        f"per-core rate r = {size / 1e9:.2f} GB / {t1:.1f} s = {rate:.1f} MB/s;"
        f" serial share s = 2 x {t2:.1f} / {t1:.1f} - 1 = {serial:.3f};"
        f" {gb:g} GB on one core = {gb * 1000:,.0f} MB / {rate:.1f} MB/s = {one_core:,.0f} s;"
        f" on {cores} cores = {one_core:,.0f} x ({serial:.3f} + {1 - serial:.3f} / {cores})"
        f" = {seconds:,.0f} s ({seconds / 60:.1f} min)"
    )
    return text, seconds


def _mib(n: int) -> str:
    return f"{n / 1048576:,.0f}" if n else "-"


def _disk(r: dict[str, Any]) -> str:
    """The disk columns of a run (``-`` for a run recorded before they were measured)."""
    if "disk_read_bytes" not in r:
        return " | - | - | -"
    return (
        f" | {r['disk_read_bytes'] / 1e9:.1f} | {r['disk_written_bytes'] / 1e9:.1f}"
        f" | {r['iowait_seconds']:.0f}"
    )


def section(hot: dict[str, Any], rows: list[dict[str, Any]], args: argparse.Namespace) -> str:
    size = hot["partition"]["bytes"]
    records = hot["partition"]["records"]
    by = {r["name"]: r for r in rows}
    lines = [
        "| run | cores | wall s (best) | Spark start-up + stop s | MB/s | MB/s per core | CPU s"
        " | load avg before runs | peak RSS MiB: driver | largest other process"
        " | anonymous MiB: driver | largest other process"
        " | disk GB read | disk GB written | CPU s idle waiting for disk |",
        "|---|---:|---:|---:|---:|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        cores = 2 if r["name"] in ("audit --jobs 2", "scan local[2]") else 1
        rate = size / 1e6 / r["wall_seconds"]
        others = max(r["peaks"]["worker"], r["peaks"]["other"], r["peaks"]["jvm"])
        anon_others = max(r["anon_peaks"]["worker"], r["anon_peaks"]["other"])
        lines.append(
            f"| {r['name']} | {cores} | {r['wall_seconds']:.1f}"
            f" | {r['spark_seconds']:.1f} | {rate:.1f} | {rate / cores:.1f}"
            f" | {r['cpu_seconds']:.1f} | {', '.join(f'{x:.1f}' for x in r['load_averages'])}"
            f" | {_mib(r['peaks']['driver'])} | {_mib(others)}"
            f" | {_mib(r['anon_peaks']['driver'])} | {_mib(anon_others)}{_disk(r)} |"
        )
    verdicts = []
    a1, a2 = by.get("audit --jobs 1"), by.get("audit --jobs 2")
    s1, s2 = by.get("scan local[1]"), by.get("scan local[2]")
    if a1 and a2:
        ratio, how = speedup(a1, a2)
        verdicts.append(
            f"- **One hot partition at least 1.8x faster on 2 cores than on 1** (`audit`):"
            f" {how}: **{'met' if ratio >= 1.8 else 'NOT met'}**."
        )
    if s1 and s2:
        verdicts.append(f"  The scan, `local[1]` -> `local[2]`: {speedup(s1, s2)[1]}.")
    if a1 and s2:
        ratio, how = speedup(a1, s2)
        verdicts.append(
            f"- **The 2-core scan at least 1.6x faster than `audit` on one core, Spark's start-up"
            f" included** (`audit --jobs 1` -> `scan` on `local[2]`): {how}:"
            f" **{'met' if ratio >= 1.6 else 'NOT met'}**."
        )
    if a1 and a2:
        text, seconds = projection(
            a1["wall_seconds"], a2["wall_seconds"], size, args.project_gb, args.project_cores
        )
        verdicts.append(
            f"- **{args.project_gb:g} GB projected under 5 minutes on {args.project_cores} cores**"
            f" (`audit`, from the best runs' rate and scaling): {text}:"
            f" **{'met' if seconds < 300 else 'NOT met'}**."
        )
    return (
        f"{SECTION}\n\n"
        f"`python -m benchmarks.hot --gib {args.gib:g} --repeat {args.repeat}` on"
        f" {os.cpu_count()} cores, {time.strftime('%Y-%m-%d')}: the hot partition"
        f" `__consumer_offsets-{hot['hot_partition']}` alone in one broker's log dir,"
        f" {hot['partition']['segments']} segments, {size:,} bytes ({size / 1e9:.2f} GB),"
        f" {records:,} records (`python -m benchmarks.generate cluster --hot-gib {args.gib:g}`)."
        f" {args.repeat} run(s) of each, in turns (every run once, then again), the best in the"
        " table; the ratios below are the median of the turns' when there are several. The"
        " load average (1 min) before each run says how busy the shared"
        " machine was. `audit --jobs 1` and `local[1]` are pinned to one core. MB/s from the"
        " wall time, Spark's start-up included (measured alone: the column beside it). The disk"
        " columns are the machine's (`benchmarks/measure.py`): what its disks read and wrote"
        " during the run, and the CPU seconds its cores sat idle waiting for them. Before each"
        " run the partition is read once, unmeasured, into the page cache as far as it fits;"
        " what does not fit (with the audit's scratch files beside it) is read from disk.\n\n"
        + "\n".join(lines)
        + "\n\nAgainst the targets:\n\n"
        + "\n".join(verdicts)
        + "\n"
    )


def write_readme(text: str) -> None:
    current = README.read_text()
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
    parser.add_argument("--gib", type=float, default=20.0, help="the hot partition's size")
    parser.add_argument(
        "--repeat",
        type=int,
        default=3,
        help="turns: each run once per turn; the best run in the table, the median of the"
        " turns' ratios in the verdicts",
    )
    parser.add_argument("--runs", default="audit1,audit2,scan1,scan2", help="which runs")
    parser.add_argument("--project-gb", type=float, default=200.0)
    parser.add_argument("--project-cores", type=int, default=16)
    parser.add_argument("--driver-memory", default="6g")
    parser.add_argument("--limit-gib", type=float, default=20)
    parser.add_argument("--no-readme", action="store_true")
    parser.add_argument("--from-json", type=Path, help="only render a run's hot.json")
    args = parser.parse_args(argv)
    data = DATA_DIR / f"hot-{args.gib:g}"
    hot = ensure_hot(data, args.gib)
    out = DATA_DIR / f"hot-{args.gib:g}-results.json"
    if args.from_json:
        rows = json.loads(args.from_json.read_text())
    else:
        spark_env(args.driver_memory)
        limit = int(args.limit_gib * GiB)
        both = {0, 1} if (os.cpu_count() or 1) > 1 else {0}
        wanted = args.runs.split(",")
        rows = []
        runs = (
            ("audit1", "audit --jobs 1", lambda: audit(hot, 1, {0}, limit), None),
            ("audit2", "audit --jobs 2", lambda: audit(hot, 2, both, limit), None),
            ("scan1", "scan local[1]", lambda: scan(hot, "local[1]", {0}, data / "out", limit),
             "local[1]"),
            ("scan2", "scan local[2]", lambda: scan(hot, "local[2]", both, data / "out", limit),
             "local[2]"),
        )  # fmt: skip
        chosen = [run for run in runs if run[0] in wanted]
        spark = {
            key: spark_cost(startup(master, both if master == "local[2]" else {0}))
            for key, _, _, master in chosen
            if master
        }
        measured = in_turns(
            args.repeat,
            {key: measure for key, _, measure, _ in chosen},
            lambda: warm([Path(hot["log_dir"])]),
        )
        for key, name, _, _ in chosen:
            rows.append(record(name, *measured[key], spark.get(key, 0.0)))
            print(json.dumps(rows[-1]), file=sys.stderr, flush=True)
        out.write_text(json.dumps(rows, indent=1))
    text = section(hot, rows, args)
    print(text)
    if not args.no_readme:
        write_readme(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
