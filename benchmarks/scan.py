"""Scan throughput: ``python -m benchmarks.scan`` (the Spark job against ``offsets-auditor audit``).

On the benchmark cluster (``benchmarks/cluster.py``, generated unless present):

1. Spark's start-up, measured alone in a fresh process per master: importing the job, creating
   the ``SparkContext``, the first trivial job (``sc.parallelize([0], 1).count()``), then the
   first job that starts Python workers (a ``map`` of one element), as the scan's first stage
   does.
2. ``offsets-auditor audit`` of a broker's log dir (groups included, the default), pinned to one
   core; then of every broker, one after the other.
3. ``offsets-auditor scan`` of the same log dir: ``--master local[1]`` pinned to one core (the
   JVM, the driver and the workers share it), ``local[2]`` on both, each into an empty results
   dir; then again into the same results dir with nothing changed (the segment cache); then the
   same over the three brokers' log dirs. "job s" is the wall time less Spark's start-up and
   stop as measured alone (1.): everything the scan does itself, publishing included.
   These run on the cluster of ``--scale`` (default 0.2: 200,000 groups, about 1.1 GB per
   broker): at scale 1 the scan's driver holds every committed offset several times over
   (each log dir's report as JSON dicts, the table rows, Arrow) and needs more memory than this
   machine has (item 5 shows it).
4. Memory against the hot partition's size, on the cluster of ``--hot-scale`` (default 1): a log
   dir holding only the hot partition's first 5, 10 and all 21 segments (hard links to the
   cluster's files, the last one as the active segment, checkpoints to match), scanned with
   ``local[2]`` and audited; then the largest one's records written again in segments of
   ``--segment-mib`` (default 1024: 1 GiB, the most a broker is set to), rolled and indexed as a
   broker does, scanned and audited the same way; the largest is rescanned with nothing changed
   (one big partition: the production case, where the active segment is a small part).
5. One broker of the cluster of ``--full-scale`` (default 1: a million groups), audited, then
   scanned with ``local[2]`` under the memory ceiling (``--limit-gib``, default 14).

Every run is a separate process, measured from outside (``benchmarks/measure.py``): wall time,
CPU seconds of the whole process tree, and the peak resident set (``VmHWM``) of each process by
role: the Python driver, the JVM (driver and executor in local mode), the Python workers that
run the executors' code. The data is read once before each run, so every run finds it in the
page cache: this measures CPU, not the disk. MB is 10^6 bytes.

The tables are printed and written to the "Scan throughput" section of ``benchmarks/README.md``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import struct
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from benchmarks.cluster import (
    EMPTY_PRODUCER_SNAPSHOT,
    TOPIC,
    ClusterSpec,
    cluster_dir,
    ensure_cluster,
    log_dir,
)
from benchmarks.cluster_log import PartitionWriter
from benchmarks.generate import DATA_DIR
from benchmarks.measure import Measured, run

README = Path(__file__).parent / "README.md"
SECTION = "## Scan throughput"
#: A v2 batch's header up to its record count, and the fields ``resegmented`` reads from it
#: (base offset, last offset delta, max timestamp, records).
V2_HEADER = 61
V2_FIELDS = struct.Struct(">q15xi8xq14xi")
GiB = 1024**3
STARTUP = """
import json, sys, time
t0 = time.perf_counter()
from spark_jobs.session import spark_context
t1 = time.perf_counter()
sc = spark_context(sys.argv[1])
t2 = time.perf_counter()
sc.parallelize([0], 1).count()
t3 = time.perf_counter()
sc.parallelize([0], 1).map(lambda x: x).collect()
t4 = time.perf_counter()
sc.stop()
t5 = time.perf_counter()
print(json.dumps({"import": t1 - t0, "session": t2 - t1, "first_job": t3 - t2,
                  "first_python_job": t4 - t3, "stop": t5 - t4}))
"""


@dataclass
class Run:
    """One measured command and what it read."""

    name: str
    master: str
    measured: Measured
    bytes: int
    records: int
    manifest: dict[str, Any] | None = None
    #: Spark's start-up and stop, measured alone for this master (import, session, stop): 0 for
    #: ``audit``
    spark_seconds: float = 0.0
    log_dirs: int = 1

    @property
    def ok(self) -> bool:
        return self.measured.returncode in (0, 1, 2) and not self.measured.killed_at_limit

    @property
    def cause(self) -> str:
        """Why a run failed, as the JVM or the CLI said it (the deepest cause, shortened)."""
        lines = [line.strip() for line in self.measured.stderr.splitlines()]
        for marker in ("OutOfMemoryError", "Caused by: ", "offsets-auditor scan: ", "Error"):
            found = [line for line in lines if marker in line and not line.startswith("at ")]
            if found:
                text = found[0].split(marker, 1)[-1] if marker.endswith(": ") else found[0]
                return text[:200]
        return ""

    @property
    def republished(self) -> bool:
        """Whether the scan found nothing changed and published the latest run again (without
        starting Spark)."""
        return self.manifest is not None and bool(self.manifest["reuse"].get("run_reused"))

    @property
    def job_seconds(self) -> float:
        """The wall time less Spark's start-up and stop: everything the scan does itself,
        publishing included (``audit``: its wall time)."""
        return self.measured.wall_seconds - self.spark_seconds

    @property
    def manifest_seconds(self) -> float | None:
        """The manifest's ``duration_seconds``: planning, both Spark stages and the driver's
        conclusion, not the Arrow tables, the reports' JSON and Parquet written after it."""
        return None if self.manifest is None else float(self.manifest["duration_seconds"])


# -- inputs --------------------------------------------------------------------------------------


def warm(paths: list[Path]) -> None:
    """Read every file under ``paths`` once (each inode once): into the page cache."""
    seen: set[int] = set()
    for root in paths:
        for file in sorted(root.rglob("*")):
            if file.is_file() and (inode := file.stat().st_ino) not in seen:
                seen.add(inode)
                with file.open("rb") as f:
                    while f.read(16 * 1024 * 1024):
                        pass


def hot_view(root: Path, manifest: dict[str, Any], segments: int, dest: Path) -> dict[str, Any]:
    """A log dir holding only the hot partition's first ``segments`` segments (hard links), the
    last of them as the active segment, as the broker would have left it after a clean shutdown
    at that point. Returns its size and records."""
    source_dir = log_dir(root, 1)
    hot = manifest["hot_partition"]
    name = f"{TOPIC}-{hot}"
    logs = sorted((source_dir / name).glob("*.log"))
    chosen = logs[:segments]
    end = (
        int(logs[segments].stem)
        if segments < len(logs)
        else manifest["partitions"][hot]["log_end_offset"]
    )
    target = dest / "kafka-logs"
    if dest.exists():
        shutil.rmtree(dest)
    (target / name).mkdir(parents=True)
    for file in ("meta.properties", ".kafka_cleanshutdown", "log-start-offset-checkpoint"):
        shutil.copy(source_dir / file, target / file)
    for file in ("recovery-point-offset-checkpoint", "replication-offset-checkpoint"):
        (target / file).write_text(f"0\n1\n{TOPIC} {hot} {end}\n")
    (target / "cleaner-offset-checkpoint").write_text("0\n0\n")
    for log in chosen:
        for suffix in (".log", ".index", ".timeindex"):
            os.link(log.with_suffix(suffix), target / name / log.with_suffix(suffix).name)
    for offset in sorted({int(chosen[-1].stem), end}):
        (target / name / f"{offset:020d}.snapshot").write_bytes(EMPTY_PRODUCER_SNAPSHOT)
    shutil.copy(source_dir / name / "leader-epoch-checkpoint", target / name)
    shutil.copy(source_dir.parent / "server.properties", dest / "server.properties")
    return {
        "log_dir": str(target),
        "server_properties": str(dest / "server.properties"),
        "segments": len(chosen),
        "largest_segment": max(log.stat().st_size for log in chosen),
        "bytes": sum(log.stat().st_size for log in chosen),
        "records": end,  # from offset 0, never cleaned: one record per offset
    }


def resegmented(view: dict[str, Any], segment_bytes: int, dest: Path) -> dict[str, Any]:
    """The log dir of ``view`` (``hot_view``) with its partition's batches written again into
    segments of ``segment_bytes`` (rolled, indexed and named as a broker does, and the broker's
    ``offsets.topic.segment.bytes`` set to match): the same records in fewer, larger segments."""
    source = Path(view["log_dir"])
    (partition,) = [p for p in source.iterdir() if p.is_dir()]
    target = dest / "kafka-logs"
    if dest.exists():
        shutil.rmtree(dest)
    writer = PartitionWriter(target / partition.name, segment_bytes)
    for log in sorted(partition.glob("*.log")):
        with log.open("rb") as f:
            while header := f.read(V2_HEADER):
                (length,) = struct.unpack_from(">i", header, 8)
                batch = header + f.read(length + 12 - V2_HEADER)
                base_offset, _last_delta, max_timestamp, records = V2_FIELDS.unpack_from(batch)
                writer.append(batch, base_offset, records, max_timestamp)
    active = writer.active_base_offset
    writer.close()
    for file in source.iterdir():
        if file.is_file():
            shutil.copy(file, target / file.name)
    shutil.copy(partition / "leader-epoch-checkpoint", target / partition.name)
    end = int(view["records"])
    for offset in sorted({active, end}):
        (target / partition.name / f"{offset:020d}.snapshot").write_bytes(EMPTY_PRODUCER_SNAPSHOT)
    properties = Path(view["server_properties"]).read_text().splitlines()
    properties = [
        f"offsets.topic.segment.bytes={segment_bytes}"
        if line.startswith("offsets.topic.segment.bytes=")
        else line
        for line in properties
    ]
    (dest / "server.properties").write_text("\n".join(properties) + "\n")
    return {
        **view,
        "log_dir": str(target),
        "server_properties": str(dest / "server.properties"),
        "segments": len(writer.segments),
        "largest_segment": max(s.size for s in writer.segments),
    }


# -- the runs ------------------------------------------------------------------------------------


def _python(*args: str) -> list[str]:
    return [sys.executable, *args]


#: The environment of the Spark runs: ``spark_env(memory)`` sets it.
SPARK_ENV: dict[str, str] | None = None


def spark_env(driver_memory: str | None) -> None:
    """In local mode the executors run in the driver's JVM: ``--driver-memory`` (Spark's
    default 1g, which also caps the JVM's direct memory, where Arrow batches live) through
    ``PYSPARK_SUBMIT_ARGS``, which pyspark passes to the ``spark-submit`` that starts the JVM."""
    global SPARK_ENV
    SPARK_ENV = None
    if driver_memory:
        SPARK_ENV = dict(
            os.environ, PYSPARK_SUBMIT_ARGS=f"--driver-memory {driver_memory} pyspark-shell"
        )


def startup(master: str, cpus: set[int]) -> dict[str, float]:
    measured = run(_python("-c", STARTUP, master), cpus=cpus, env=SPARK_ENV)
    if measured.returncode != 0:
        raise RuntimeError(f"Spark start-up failed: {measured.stderr[-2000:]}")
    timings: dict[str, float] = json.loads(measured.stdout.strip().splitlines()[-1])
    timings["process"] = measured.wall_seconds
    return timings


def audit(brokers: list[dict[str, Any]], now_ms: int, limit: int) -> Run:
    """``audit`` of each log dir in turn, each pinned to one core; the sums (peaks: the max)."""
    total: Measured | None = None
    for broker in brokers:
        warm([Path(broker["log_dir"])])
        command = _python("-m", "offsets_auditor.cli.main", "audit", broker["log_dir"])
        command += ["--broker-config", broker["server_properties"], "--now", str(now_ms)]
        measured = run(command, cpus={0}, limit_bytes=limit)
        if total is None:
            total = measured
        else:
            total.wall_seconds += measured.wall_seconds
            total.cpu_seconds += measured.cpu_seconds
            total.peaks.update(measured.peaks)
            total.killed_at_limit |= measured.killed_at_limit
            total.returncode = max(total.returncode, measured.returncode)
    assert total is not None
    name = "audit" if len(brokers) == 1 else f"audit x {len(brokers)} (one after the other)"
    return Run(
        name,
        "1 core",
        total,
        sum(b["bytes"] for b in brokers),
        sum(b["records"] for b in brokers),
    )


def scan(
    name: str,
    brokers: list[dict[str, Any]],
    master: str,
    cpus: set[int],
    out: Path,
    now_ms: int,
    limit: int,
    *,
    fresh: bool,
    spark_seconds: float = 0.0,
) -> Run:
    if fresh and out.exists():
        shutil.rmtree(out)
    warm([Path(b["log_dir"]) for b in brokers])
    command = _python("-m", "offsets_auditor.cli.main", "scan", *(b["log_dir"] for b in brokers))
    command += ["--out", str(out), "--master", master, "--now", str(now_ms)]
    command += ["--broker-config", brokers[0]["server_properties"]]
    measured = run(command, cpus=cpus, limit_bytes=limit, env=SPARK_ENV)
    manifest = None
    latest = out / "LATEST"
    if measured.returncode in (0, 1, 2) and latest.exists():
        run_id = latest.read_text().strip()
        manifest = json.loads((out / "runs" / run_id / "manifest.json").read_text())
    return Run(
        name,
        master,
        measured,
        sum(b["bytes"] for b in brokers),
        sum(b["records"] for b in brokers),
        manifest,
        spark_seconds,
        len(brokers),
    )


# -- the tables ----------------------------------------------------------------------------------


def _mib(n: int) -> str:
    return f"{n / 1048576:,.0f}" if n else "-"


def throughput_table(runs: list[Run]) -> str:
    lines = [
        "| run | master | input GB | records | wall s | Spark start-up + stop s | job s"
        " | of which before publishing s | MB/s | records/s | CPU s | segments read / reused"
        " | peak RSS MiB: driver | JVM | worker (max) | workers together |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in runs:
        m = r.measured
        spark = f"{r.spark_seconds:.1f}" if r.spark_seconds else "-"
        if not r.ok:
            why = (
                "killed at the memory ceiling"
                if m.killed_at_limit
                else f"exit {m.returncode}: {r.cause}"
            )
            lines.append(
                f"| {r.name} | {r.master} | {r.bytes / 1e9:.2f} | {r.records:,}"
                f" | {m.wall_seconds:.1f} | {spark} | failed: {why} | | | | {m.cpu_seconds:.1f}"
                f" | | {_mib(m.peak('driver'))} | {_mib(m.peak('jvm'))}"
                f" | {_mib(m.peak('worker'))} | {_mib(m.workers_together)} |"
            )
            continue
        seconds = r.job_seconds
        reuse, before = "-", "-"
        if r.manifest is not None:
            used = r.manifest["reuse"]
            reuse = f"{used['segments_read']} / {used['segments_reused']}"
            before = f"{r.manifest_seconds:.1f}"
        lines.append(
            f"| {r.name} | {r.master} | {r.bytes / 1e9:.2f} | {r.records:,}"
            f" | {m.wall_seconds:.1f} | {spark} | {seconds:.1f} | {before}"
            f" | {r.bytes / 1e6 / seconds:,.1f} | {r.records / seconds:,.0f}"
            f" | {m.cpu_seconds:.1f} | {reuse}"
            f" | {_mib(m.peak('driver'))} | {_mib(m.peak('jvm'))} | {_mib(m.peak('worker'))}"
            f" | {_mib(m.workers_together)} |"
        )
    return "\n".join(lines)


def startup_table(rows: dict[str, dict[str, float]]) -> str:
    lines = [
        "| master | process s | import s | session s | first job s | first Python job s | stop s |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for master, t in rows.items():
        lines.append(
            f"| {master} | {t['process']:.2f} | {t['import']:.2f} | {t['session']:.2f}"
            f" | {t['first_job']:.2f} | {t['first_python_job']:.2f} | {t['stop']:.2f} |"
        )
    return "\n".join(lines)


def memory_table(rows: list[tuple[dict[str, Any], Run, Run]]) -> str:
    lines = [
        "| hot partition | segments | largest segment MiB | records | scan job s"
        " | scan peak RSS MiB: worker (max) | worker anonymous (max) | workers together | JVM"
        " | driver | audit s | audit peak RSS MiB |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for view, s, a in rows:
        m = s.measured
        scan_seconds = f"{s.job_seconds:.1f}" if s.ok else f"failed (exit {m.returncode})"
        lines.append(
            f"| {view['bytes'] / GiB:.2f} GiB | {view['segments']}"
            f" | {_mib(view.get('largest_segment', 0))} | {view['records']:,}"
            f" | {scan_seconds} | {_mib(m.peak('worker'))} | {_mib(m.peak_anon('worker'))}"
            f" | {_mib(m.workers_together)}"
            f" | {_mib(m.peak('jvm'))} | {_mib(m.peak('driver'))}"
            f" | {a.measured.wall_seconds:.1f} | {_mib(a.measured.peak('driver'))} |"
        )
    return "\n".join(lines)


# -- targets, README -----------------------------------------------------------------------------


def _rate(r: Run) -> float:
    return r.bytes / 1e6 / r.job_seconds


def targets(
    runs: dict[str, Run], memory: list[tuple[dict[str, Any], Run, Run]], full: list[Run]
) -> str:
    lines = []
    audit_one, local1, local2 = runs["audit"], runs["scan local[1]"], runs["scan local[2]"]
    if local1.ok:
        ratio = _rate(audit_one) / _rate(local1)
        lines.append(
            f"- **Full-scan throughput per core within 2x of `audit`** (one broker, groups"
            f" included): `audit` {_rate(audit_one):.1f} MB/s on one core, the scan on"
            f" `local[1]` (one core) {_rate(local1):.1f} MB/s: `audit` is {ratio:.2f}x faster:"
            f" **{'met' if ratio <= 2 else 'NOT met'}**."
        )
    if local2.ok and local1.ok:
        per_core = _rate(local2) / 2
        lines.append(
            f"  `local[2]`: {_rate(local2):.1f} MB/s, {per_core:.1f} MB/s per core"
            f" ({_rate(audit_one) / per_core:.2f}x below `audit`'s one core). Scaling from 1 to"
            f" 2 cores: {_rate(local2) / _rate(local1):.2f}x."
        )
    for first, again in (
        ("scan local[2]", "rescan local[2]"),
        ("cluster scan local[2]", "cluster rescan local[2]"),
        ("hot scan local[2]", "hot rescan local[2]"),
    ):
        if first in runs and again in runs and runs[first].ok and runs[again].ok:
            a, b = runs[first], runs[again]
            speedup = a.job_seconds / b.job_seconds
            assert b.manifest is not None
            reuse = b.manifest["reuse"]
            lines.append(
                f"- **No-change rescan at least 20x faster than the first scan**"
                f" ({a.log_dirs} log dir(s), {a.bytes / 1e9:.2f} GB, `local[2]`): job s (without"
                f" Spark's start-up) {a.job_seconds:.1f} -> {b.job_seconds:.1f}, {speedup:.1f}x:"
                f" **{'met' if speedup >= 20 else 'NOT met'}**. The rescan read"
                f" {reuse['segments_read']} segments again ({reuse['bytes_read'] / 1e9:.2f} GB)"
                f" and reused {reuse['segments_reused']}"
                f" ({reuse['bytes_reused'] / 1e9:.2f} GB)"
                + (
                    f"; nothing had changed, so it published run {reuse['run_reused']} again"
                    " without starting Spark"
                    if b.republished
                    else ""
                )
                + f". Wall time with Spark's start-up:"
                f" {a.measured.wall_seconds:.1f} -> {b.measured.wall_seconds:.1f} s"
                f" ({a.measured.wall_seconds / b.measured.wall_seconds:.1f}x)."
            )
    done = [(v, r) for v, r, _ in memory if r.ok]
    failed = [(v, r) for v, r, _ in memory if not r.ok]
    by_size = [(v, r) for v, r in done if not v.get("resegmented")]
    if len(by_size) >= 2:
        (v0, s0), (v1, s1) = by_size[0], by_size[-1]
        w0, w1 = s0.measured.peak("worker"), s1.measured.peak("worker")
        a0, a1 = s0.measured.peak_anon("worker"), s1.measured.peak_anon("worker")
        j0, j1 = s0.measured.peak("jvm"), s1.measured.peak("jvm")
        gib = (v1["bytes"] - v0["bytes"]) / GiB
        slope, anon_slope = (w1 - w0) / 1048576 / gib, (a1 - a0) / 1048576 / gib
        anons = [r.measured.peak_anon("worker") for _, r in done]
        bounded = max(anons) < min(anons) * 1.15 and not failed
        lines.append(
            f"- **Executor memory bounded whatever the segment size**: the largest Python"
            f" worker's anonymous memory (what the kernel cannot drop) peaked at {_mib(a0)} MiB"
            f" with a {v0['bytes'] / GiB:.2f} GiB hot partition and at {_mib(a1)} MiB with"
            f" {v1['bytes'] / GiB:.2f} GiB ({anon_slope:,.0f} MiB more per GiB of partition);"
            f" its resident set, mapped cache files included, {_mib(w0)} -> {_mib(w1)} MiB"
            f" ({slope:,.0f} MiB per GiB, pages the kernel drops under pressure); the JVM"
            f" {_mib(j0)} -> {_mib(j1)} MiB."
        )
        for v, r in done:
            if v.get("resegmented"):
                lines.append(
                    f"  The same {v['bytes'] / GiB:.2f} GiB partition in {v['segments']} segments"
                    f" of up to {_mib(v['largest_segment'])} MiB: worker anonymous"
                    f" {_mib(r.measured.peak_anon('worker'))} MiB (against {_mib(a1)} MiB in"
                    f" {v1['segments']} segments of up to {_mib(v1['largest_segment'])} MiB),"
                    f" resident {_mib(r.measured.peak('worker'))} MiB."
                )
        lines.append(
            f"  Over every memory run the worker's anonymous peak stays within"
            f" {_mib(min(anons))}-{_mib(max(anons))} MiB: "
            + (
                "**met** (bounded)."
                if bounded
                else "**NOT met**: it grows with the partition or the segments."
            )
        )
    for v, r in failed:
        lines.append(
            f"  The scan of the {v['bytes'] / GiB:.2f} GiB hot partition failed: {r.cause}."
        )
    if len(full) == 2:
        a, s = full
        m = s.measured
        outcome = (
            f"finished in {m.wall_seconds:.1f} s wall ({s.job_seconds:.1f} s without Spark's"
            " start-up)"
            if s.ok
            else (
                f"was killed at the {_mib(m.tree_together)} MiB memory ceiling after"
                f" {m.wall_seconds:.1f} s"
                if m.killed_at_limit
                else f"failed after {m.wall_seconds:.1f} s (exit {m.returncode}: {s.cause})"
            )
        )
        lines.append(
            f"- **At full scale** ({s.records:,} records, {s.bytes / 1e9:.2f} GB, one broker):"
            f" `audit` took {a.measured.wall_seconds:.1f} s ({_rate(a):.1f} MB/s, peak RSS"
            f" {_mib(a.measured.peak('driver'))} MiB); the scan on `local[2]` {outcome}; peak"
            f" RSS: driver {_mib(m.peak('driver'))} MiB, JVM {_mib(m.peak('jvm'))} MiB, largest"
            f" worker {_mib(m.peak('worker'))} MiB."
        )
    return "\n".join(lines)


def section(
    command: str,
    manifest: dict[str, Any],
    hot_manifest: dict[str, Any],
    startups: dict[str, dict[str, float]],
    runs: dict[str, Run],
    memory: list[tuple[dict[str, Any], Run, Run]],
    full: list[Run],
    limit: int,
    verdicts: str,
) -> str:
    def describe(m: dict[str, Any]) -> str:
        spec, broker = m["spec"], m["brokers"][0]
        return (
            f"`python -m benchmarks.generate cluster --scale {spec['scale']:g}`:"
            f" {len(m['brokers'])} brokers x {spec['partitions']} partitions,"
            f" {spec['groups']:,} groups, each broker's log dir {broker['bytes'] / 1e9:.2f} GB,"
            f" {broker['records']:,} records, {broker['live_offsets']:,} committed offsets, hot"
            f" partition {m['hot_partition']} of {m['partitions'][m['hot_partition']]['bytes']:,}"
            " bytes"
        )

    full_table = (
        "\n\nOne broker of the full-scale cluster (`--full-scale`, the memory runs' data when"
        f" both are 1), with a {limit / GiB:.0f} GiB ceiling on the resident sets of the run's"
        f" processes together:\n\n{throughput_table(full)}"
        if full
        else ""
    )
    return (
        f"{SECTION}\n\n"
        f"`{command}` on {platform.machine()}, {os.cpu_count()} cores,"
        f" {os.sysconf('SC_PAGE_SIZE') * os.sysconf('SC_PHYS_PAGES') / GiB:.0f} GiB,"
        f" Python {platform.python_version()}, {time.strftime('%Y-%m-%d')}.\n\n"
        f"- Throughput and rescans: {describe(manifest)}.\n"
        f"- Memory runs and the full-scale attempt: {describe(hot_manifest)}.\n\n"
        'Every run found the data in the page cache (read once before each run). "Spark'
        " start-up + stop s\": the context's creation until the first trivial job completes,"
        ' plus `sc.stop()`, measured alone for that master (table below); "job s": the wall time'
        " less that, so everything the scan does itself, publishing included; MB/s (10^6 bytes)"
        ' and records/s from it. "of which before publishing": the manifest\'s'
        " `duration_seconds` (planning, both Spark stages, the driver's conclusion; not the"
        " Arrow tables, each log dir's report as JSON and the Parquet written after it)."
        " CPU s: the whole process tree. Peak RSS: `VmHWM` of each process, polled from `/proc`"
        " (`benchmarks/measure.py`):"
        " the Python driver, the JVM (driver and executor in local mode), the largest Python"
        " worker (where the executors' code runs: stage A per segment, stage B per partition),"
        " and the largest sum of the workers' resident sets at one time. A worker's resident"
        " set counts the pages of the segment results it maps from the cache, which the kernel"
        ' drops under pressure; "worker anonymous" is its largest `RssAnon` seen at a poll,'
        " the memory it cannot drop. `local[1]` and"
        " `audit` are pinned to one core; `audit` runs with groups (its default).\n\n"
        'Spark\'s start-up alone (a fresh process; "session" imports pyspark and starts the'
        " JVM and its `SparkContext`; then `sc.parallelize([0], 1).count()`, then a `map` of"
        " one element, which starts the Python workers as the scan's first stage does):\n\n"
        f"{startup_table(startups)}\n\n"
        f"{throughput_table(list(runs.values()))}\n\n"
        "Memory against the hot partition's size (a log dir holding only the hot partition's"
        " first segments, hard links to the full-scale cluster's, `local[2]`), and against the"
        " segments' size (the largest partition's records written again in bigger segments,"
        " rolled and indexed as a broker does):\n\n"
        f"{memory_table(memory)}"
        f"{full_table}\n\n"
        f"Against the targets:\n\n{verdicts}\n"
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


def _record(run_: Run) -> dict[str, Any]:
    m = run_.measured
    return {
        "name": run_.name,
        "master": run_.master,
        "bytes": run_.bytes,
        "records": run_.records,
        "returncode": m.returncode,
        "killed_at_limit": m.killed_at_limit,
        "wall_seconds": m.wall_seconds,
        "manifest_seconds": run_.manifest_seconds,
        "spark_seconds": run_.spark_seconds,
        "log_dirs": run_.log_dirs,
        "cpu_seconds": m.cpu_seconds,
        "peaks": {role: m.peak(role) for role in ("driver", "jvm", "daemon", "worker")},
        "anon_peaks": {role: m.peak_anon(role) for role in ("driver", "jvm", "daemon", "worker")},
        "workers": m.count("worker"),
        "workers_together": m.workers_together,
        "tree_together": m.tree_together,
        "reuse": None if run_.manifest is None else run_.manifest["reuse"],
        "cause": run_.cause if not run_.ok else "",
        "stderr_tail": m.stderr[-3000:] if not run_.ok else "",
    }


def spark_cost(startup: dict[str, float]) -> float:
    """Spark's start-up (the context's creation until the first trivial job completes) and
    stop."""
    return startup["session"] + startup["first_job"] + startup["stop"]


def _cluster(scale: float) -> tuple[Path, dict[str, Any]]:
    data = cluster_dir(scale)
    return data, ensure_cluster(data, ClusterSpec(scale=scale))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument(
        "--scale", type=float, default=0.2, help="the cluster of the throughput runs"
    )
    parser.add_argument(
        "--hot-scale", type=float, default=1.0, help="the cluster of the memory runs"
    )
    parser.add_argument(
        "--full-scale", type=float, default=1.0, help="the cluster of the single full attempt"
    )
    parser.add_argument("--no-full", action="store_true", help="skip the full-scale attempt")
    parser.add_argument("--results", type=Path, default=DATA_DIR / "scan-results")
    parser.add_argument(
        "--views",
        default="5,10,21",
        help="hot-partition segments of the memory runs, the last rescanned",
    )
    parser.add_argument(
        "--segment-mib",
        default="1024",
        help="the largest view's records written again in segments of these sizes (MiB)",
    )
    parser.add_argument(
        "--limit-gib", type=float, default=14, help="kill a run whose processes pass this RSS"
    )
    parser.add_argument(
        "--driver-memory", help="Spark's driver (and, in local mode, executor) JVM memory"
    )
    parser.add_argument("--no-readme", action="store_true", help="only print the tables")
    parser.add_argument(
        "--from-json", type=Path, help="only render a run's benchmark.json (no measuring)"
    )
    args = parser.parse_args(argv)
    if args.from_json:
        return from_json(args, args.from_json)
    spark_env(args.driver_memory)
    _, manifest = _cluster(args.scale)
    now, brokers, limit = manifest["now_ms"], manifest["brokers"], int(args.limit_gib * GiB)
    results = args.results
    results.mkdir(parents=True, exist_ok=True)
    both = {0, 1} if (os.cpu_count() or 1) > 1 else {0}

    def log(run_: Run, *done: Path) -> Run:
        if run_.master in startups and not run_.republished:
            run_.spark_seconds = spark_cost(startups[run_.master])
        print(json.dumps(_record(run_)), file=sys.stderr, flush=True)
        for path in done:  # results (and their segment cache) no longer needed: disk space
            shutil.rmtree(path, ignore_errors=True)
        return run_

    startups = {m: startup(m, cpus) for m, cpus in (("local[1]", {0}), ("local[2]", both))}
    print(json.dumps(startups), file=sys.stderr, flush=True)
    one = brokers[:1]
    runs: dict[str, Run] = {}
    runs["audit"] = log(audit(one, now, limit))
    runs["scan local[1]"] = log(
        scan("scan", one, "local[1]", {0}, results / "one-1", now, limit, fresh=True),
        results / "one-1",
    )
    runs["scan local[2]"] = log(
        scan("scan", one, "local[2]", both, results / "one-2", now, limit, fresh=True)
    )
    runs["rescan local[2]"] = log(
        scan(
            "rescan, nothing changed",
            one,
            "local[2]",
            both,
            results / "one-2",
            now,
            limit,
            fresh=False,
        ),
        results / "one-2",
    )
    runs["cluster audit"] = log(audit(brokers, now, limit))
    runs["cluster scan local[2]"] = log(
        scan(
            "scan, 3 brokers", brokers, "local[2]", both, results / "all-2", now, limit, fresh=True
        )
    )
    runs["cluster rescan local[2]"] = log(
        scan(
            "rescan, 3 brokers, nothing changed",
            brokers,
            "local[2]",
            both,
            results / "all-2",
            now,
            limit,
            fresh=False,
        ),
        results / "all-2",
    )
    hot_data, hot_manifest = _cluster(args.hot_scale)
    memory = []
    views = [int(n) for n in args.views.split(",")]
    largest = views[-1]  # rescanned below
    for segments in views:
        view = hot_view(hot_data, hot_manifest, segments, results / f"hot-{segments}")
        hot_now = hot_manifest["now_ms"]
        out = results / f"hot-{segments}-out"
        scanned = log(
            scan(f"hot {segments}", [view], "local[2]", both, out, hot_now, limit, fresh=True),
            *([out] if segments != largest else []),
        )
        audited = log(audit([view], hot_now, limit))
        memory.append((view, scanned, audited))
    for mib in [int(n) for n in args.segment_mib.split(",") if n]:
        bigger = resegmented(memory[-1][0], mib * 1048576, results / f"hot-{largest}-{mib}")
        out = results / f"hot-{largest}-{mib}-out"
        scanned = log(
            scan(
                f"hot {largest} as {mib} MiB segments",
                [bigger],
                "local[2]",
                both,
                out,
                hot_manifest["now_ms"],
                limit,
                fresh=True,
            ),
            out,
        )
        audited = log(audit([bigger], hot_manifest["now_ms"], limit))
        memory.append(({**bigger, "resegmented": True}, scanned, audited))
    view, hot_scan, _ = memory[len(views) - 1]
    runs["hot scan local[2]"] = hot_scan
    runs["hot rescan local[2]"] = log(
        scan(
            f"rescan of the hot partition alone ({largest} segments), nothing changed",
            [view],
            "local[2]",
            both,
            results / f"hot-{largest}-out",
            hot_manifest["now_ms"],
            limit,
            fresh=False,
        ),
        results / f"hot-{largest}-out",
    )
    full: list[Run] = []
    if not args.no_full:
        _, full_manifest = _cluster(args.full_scale)
        full_one = full_manifest["brokers"][:1]
        full_now = full_manifest["now_ms"]
        full.append(log(audit(full_one, full_now, limit)))
        full.append(
            log(
                scan(
                    "scan",
                    full_one,
                    "local[2]",
                    both,
                    results / "full-2",
                    full_now,
                    limit,
                    fresh=True,
                ),
                results / "full-2",
            )
        )
    (results / "benchmark.json").write_text(
        json.dumps(
            {
                "startups": startups,
                "runs": {k: _record(v) for k, v in runs.items()},
                "memory": [
                    {"view": v, "scan": _record(s), "audit": _record(a)} for v, s, a in memory
                ],
                "full": [_record(r) for r in full],
            },
            indent=1,
        )
    )
    return render(args, manifest, hot_manifest, startups, runs, memory, full)


def render(
    args: argparse.Namespace,
    manifest: dict[str, Any],
    hot_manifest: dict[str, Any],
    startups: dict[str, dict[str, float]],
    runs: dict[str, Run],
    memory: list[tuple[dict[str, Any], Run, Run]],
    full: list[Run],
) -> int:
    command = f"python -m benchmarks.scan --scale {args.scale:g} --hot-scale {args.hot_scale:g}"
    if args.driver_memory:
        command += f" --driver-memory {args.driver_memory}"
    limit = int(args.limit_gib * GiB)
    verdicts = targets(runs, memory, full)
    text = section(command, manifest, hot_manifest, startups, runs, memory, full, limit, verdicts)
    print(text)
    if not args.no_readme:
        write_readme(text)
    return 0


def _load_run(record: dict[str, Any], startups: dict[str, dict[str, float]]) -> Run:
    """A run as ``benchmark.json`` kept it (the peaks by role, the manifest's reuse)."""
    measured = Measured(
        record["returncode"],
        record["wall_seconds"],
        record["cpu_seconds"],
        "",
        record.get("cause") or record.get("stderr_tail", ""),
    )
    measured.peaks = {i: (role, v) for i, (role, v) in enumerate(record["peaks"].items()) if v}
    measured.anon_peaks = {
        i: (role, v) for i, (role, v) in enumerate(record.get("anon_peaks", {}).items()) if v
    }
    measured.workers_together = record["workers_together"]
    measured.tree_together = record["tree_together"]
    measured.killed_at_limit = record["killed_at_limit"]
    manifest = None
    if record["reuse"] is not None:
        seconds = record.get("manifest_seconds", record.get("scan_seconds"))
        manifest = {"duration_seconds": seconds, "reuse": record["reuse"]}
    master = record["master"]
    started_spark = master in startups and not (record["reuse"] or {}).get("run_reused")
    return Run(
        record["name"],
        master,
        measured,
        record["bytes"],
        record["records"],
        manifest,
        spark_cost(startups[master]) if started_spark else 0.0,
        record.get("log_dirs") or (3 if "3 brokers" in record["name"] else 1),
    )


def from_json(args: argparse.Namespace, path: Path) -> int:
    """The section again from a run's ``benchmark.json`` (same scales), nothing measured."""
    data = json.loads(path.read_text())
    startups = data["startups"]
    runs = {k: _load_run(v, startups) for k, v in data["runs"].items()}
    memory = [
        (m["view"], _load_run(m["scan"], startups), _load_run(m["audit"], startups))
        for m in data["memory"]
    ]
    runs["hot scan local[2]"] = memory[-1][1]
    full = [_load_run(r, startups) for r in data["full"]]
    _, manifest = _cluster(args.scale)
    _, hot_manifest = _cluster(args.hot_scale)
    return render(args, manifest, hot_manifest, startups, runs, memory, full)


if __name__ == "__main__":
    sys.exit(main())
