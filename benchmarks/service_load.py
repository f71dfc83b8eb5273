"""Load test of ``offsets-auditor serve`` (issue 10's acceptance): a synthetic published run of
one cluster, 3 brokers x 50 ``__consumer_offsets`` partitions (replication factor 3, so every
partition in every log dir) and 1,000,000 groups (each in the 3 log dirs holding its coordinator
partition, 2 committed offsets each: 6,000,000 rows in ``groups``); the real CLI serves it on
loopback; wrk (Debian's package) requests ``/metrics`` and random group lookups for a bounded
time each. Reports requests/s, p50/p99 latency, errors, and the server's memory.

    .venv/bin/python -m benchmarks.service_load [--groups N] [--seconds S] [--connections C]

Targets on the 2-core development machine: group lookup p99 < 50 ms, ``/metrics`` p99 < 250 ms,
zero errors. The run is written under ``benchmarks/data/service-run`` (gitignored) and reused
while its parameters are the same.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa

from offsets_auditor import published
from offsets_auditor.coordinator import coordinator_partition
from spark_jobs import publish

ROOT = Path(__file__).resolve().parent
BROKERS = 3
PARTITIONS = 50
OFFSETS_PER_GROUP = 2


def group_ids(n: int) -> list[str]:
    """Names like real ones: team/service prefixes, some console consumers."""
    teams = ["payments", "search", "billing", "ads", "feeds", "ml", "fraud", "mail", "geo", "id"]
    out = []
    for i in range(n):
        if i % 97 == 0:
            out.append(f"console-consumer-{i}")
        else:
            out.append(f"{teams[i % len(teams)]}-svc{i % 313}-consumer-{i}")
    return out


def _table(name: str, columns: dict[str, pa.Array | list], rows: int) -> pa.Table:
    schema = publish.arrow_schema(name)
    arrays = [
        pa.array(columns[f.name], f.type) if f.name in columns else pa.nulls(rows, f.type)
        for f in schema
    ]
    return pa.Table.from_arrays(arrays, schema=schema)


def synthetic(table: str, rows: list[dict[str, Any]]) -> list[object]:
    """``rows`` (some columns each) as the table's row type, every other column null."""
    row_type = published.ROW_TYPES[table]
    empty = {column: None for column, _ in published.TABLES[table]}
    return [row_type(**{**empty, **row}) for row in rows]


def synthetic_run(results: Path, groups: int) -> str:
    log_dirs = [f"/var/lib/kafka/data-{b}" for b in range(BROKERS)]
    names = group_ids(groups)
    started = time.time()
    coordinators = np.array([coordinator_partition(g, PARTITIONS) for g in names], np.int64)
    print(f"  {groups:,} group ids hashed in {time.time() - started:.1f} s", file=sys.stderr)
    # groups: per log dir, per group, OFFSETS_PER_GROUP offsets
    per_dir = groups * OFFSETS_PER_GROUP
    rows = per_dir * BROKERS
    group_col = np.repeat(np.array(names, dtype=object), OFFSETS_PER_GROUP)
    topic_partition = np.tile(np.arange(OFFSETS_PER_GROUP, dtype=np.int64), groups)
    coordinator_col = np.repeat(coordinators, OFFSETS_PER_GROUP)
    group_table = _table(
        "groups",
        {
            "input": np.repeat(np.arange(BROKERS, dtype=np.int64), per_dir),
            "log_dir": np.repeat(np.array(log_dirs, dtype=object), per_dir),
            "broker_id": np.repeat(np.arange(BROKERS, dtype=np.int64), per_dir),
            "group": np.tile(group_col, BROKERS),
            "coordinator_partition": np.tile(coordinator_col, BROKERS),
            "expected_partition": np.tile(coordinator_col, BROKERS),
            "state": ["Empty"] * rows,
            "group_type": ["classic"] * rows,
            "protocol_type": ["consumer"] * rows,
            "generation": np.full(rows, 7, np.int64),
            "members": np.zeros(rows, np.int64),
            "topic": ["orders"] * rows,
            "partition": np.tile(topic_partition, BROKERS),
            "offset": np.tile(np.arange(per_dir, dtype=np.int64) * 3, BROKERS),
            "metadata": [""] * rows,
            "commit_timestamp": np.full(rows, 1_795_000_000_000, np.int64),
            "value_version": np.full(rows, 3, np.int64),
            "pending": np.zeros(rows, bool),
        },
        rows,
    )
    sizes = np.random.default_rng(1).integers(1 << 20, 1 << 30, PARTITIONS)
    partition_rows = []
    for b, log_dir in enumerate(log_dirs):
        for p in range(PARTITIONS):
            size = int(sizes[p])
            needed = size // 120
            partition_rows.append(
                {
                    "input": b,
                    "log_dir": log_dir,
                    "broker_id": b,
                    "partition": p,
                    "name": f"__consumer_offsets-{p}",
                    "size_bytes": size,
                    "segment_count": size // (100 << 20) + 1,
                    "records": needed,
                    "log_end_offset": needed,
                    "cleaner_checkpoint": needed // 2 if p % 7 else None,
                    "never_compacted": p % 7 == 0,
                    "dirty_ratio": 0.5,
                    "cleanable_bytes": size // 2,
                    "outcome": "multi-pass" if needed > 5_033_164 else "single-pass",
                    "reason": "synthetic",
                    "capacity": 5_033_164,
                    "needed_entries": needed,
                    "passes": needed // 5_033_164 + 1,
                    "load_estimate_seconds": size / (50 << 20),
                    "load_estimate_basis": "synthetic",
                    "reclaimable_bytes": size // 3,
                    "unknown_record_types": 0,
                }
            )
    broker_rows = [
        {
            "input": b,
            "log_dir": d,
            "broker_id": b,
            "kafka_version": "3.7.0",
            "clean_shutdown": True,
            "cleaner_threads": 1,
            "capacity": 5_033_164,
            "threads_that_die": 0,
            "partitions": PARTITIONS,
            "corrupt_index_files": 0,
        }
        for b, d in enumerate(log_dirs)
    ]
    finding_rows = [
        {
            "input": b,
            "log_dir": d,
            "broker_id": b,
            "kind": "partition-skew",
            "severity": "warning",
            "detail": "synthetic",
            "partition": f"__consumer_offsets-{p}",
        }
        for b, d in enumerate(log_dirs)
        for p in range(0, PARTITIONS, 10)
    ]
    tables = {
        "groups": group_table,
        "partitions": publish.to_arrow("partitions", synthetic("partitions", partition_rows)),
        "brokers": publish.to_arrow("brokers", synthetic("brokers", broker_rows)),
        "findings": publish.to_arrow("findings", synthetic("findings", finding_rows)),
        "segments": publish.to_arrow("segments", []),
        "indexes": publish.to_arrow("indexes", []),
    }
    run_id = time.strftime("%Y%m%dT%H%M%S", time.gmtime()) + "Z-load00"
    now = time.strftime("%Y-%m-%dT%H:%M:%S.000Z", time.gmtime())
    manifest = {
        "schema_version": published.SCHEMA_VERSION,
        "run_id": run_id,
        "started_at": now,
        "finished_at": now,
        "duration_seconds": 0.0,
        "inputs": [],
        "config": {},
        "counts": {"groups": groups},
        "reuse": {},
        "tables": sorted(tables),
        "exit_status": 1,
    }
    publish.publish(results, run_id, tables, [], manifest, keep=1)
    return run_id


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def rss_mib(pid: int) -> float:
    status = Path(f"/proc/{pid}/status").read_text()
    return int(re.search(r"VmRSS:\s+(\d+) kB", status).group(1)) / 1024


def wrk(url: str, seconds: int, connections: int, script: str | None) -> dict[str, float]:
    command = ["wrk", "-t2", f"-c{connections}", f"-d{seconds}s", "--latency", "--timeout", "5s"]
    if script:
        command += ["-s", script]
    out = subprocess.run(
        [*command, url], capture_output=True, text=True, timeout=seconds + 60
    ).stdout
    unit = {"us": 0.001, "ms": 1.0, "s": 1000.0}

    def latency(label: str) -> float:
        value, u = re.search(rf"{label}\s+([\d.]+)(us|ms|s)\b", out).groups()
        return float(value) * unit[u]

    errors = 0
    if m := re.search(r"Non-2xx or 3xx responses: (\d+)", out):
        errors += int(m.group(1))
    if m := re.search(r"Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)", out):
        errors += sum(map(int, m.groups()))
    return {
        "requests": float(re.search(r"(\d+) requests in", out).group(1)),
        "requests_per_second": float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1)),
        "p50_ms": latency("50%"),
        "p99_ms": latency("99%"),
        "errors": float(errors),
    }


LOOKUP_LUA = """
local n = {groups}
local teams = {{"payments","search","billing","ads","feeds","ml","fraud","mail","geo","id"}}
math.randomseed(7)
request = function()
  local i = math.random(0, n - 1)
  local id
  if i % 97 == 0 then id = "console-consumer-" .. i
  else id = teams[(i % 10) + 1] .. "-svc" .. (i % 313) .. "-consumer-" .. i end
  return wrk.format("GET", "/groups/" .. id .. "/coordinator-partition")
end
"""


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--groups", type=int, default=1_000_000)
    parser.add_argument("--seconds", type=int, default=15, help="per endpoint (default 15)")
    parser.add_argument("--connections", type=int, default=16)
    parser.add_argument("--json", type=Path, help="also write the numbers here")
    args = parser.parse_args(argv)
    if shutil.which("wrk") is None:
        print("wrk is not installed (scripts/service-test-deps.sh installs it)", file=sys.stderr)
        return 3
    results = ROOT / "data" / f"service-run-{args.groups}"
    if not (results / published.LATEST).is_file():
        shutil.rmtree(results, ignore_errors=True)
        started = time.time()
        print(f"writing a synthetic run of {args.groups:,} groups to {results}", file=sys.stderr)
        synthetic_run(results, args.groups)
        print(f"  written in {time.time() - started:.1f} s", file=sys.stderr)
    port = free_port()
    started = time.time()
    server = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "offsets_auditor.cli.main",
            "serve",
            "--results",
            str(results),
            "--port",
            str(port),
            "--scan-interval-seconds",
            "1e9",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        while True:
            try:
                ready = json.load(urllib.request.urlopen(base + "/readyz", timeout=5))
                if ready["ready"]:
                    break
            except OSError:
                pass
            if server.poll() is not None or time.time() - started > 300:
                print("the server did not start", file=sys.stderr)
                return 1
            time.sleep(0.2)
        load_seconds = time.time() - started
        rss_loaded = rss_mib(server.pid)
        first = time.perf_counter()  # the first scrape renders; later ones reuse it
        metrics_bytes = len(urllib.request.urlopen(base + "/metrics").read())
        first_metrics_ms = (time.perf_counter() - first) * 1000
        with tempfile.NamedTemporaryFile("w", suffix=".lua", delete=False) as lua:
            lua.write(LOOKUP_LUA.format(groups=args.groups))
        report = {
            "groups": args.groups,
            "group_rows": args.groups * OFFSETS_PER_GROUP * BROKERS,
            "partitions": PARTITIONS * BROKERS,
            "load_seconds": round(load_seconds, 1),
            "rss_mib_loaded": round(rss_loaded, 1),
            "metrics": wrk(base + "/metrics", args.seconds, args.connections, None),
            "group_lookup": wrk(base, args.seconds, args.connections, lua.name),
            "rss_mib_after": round(rss_mib(server.pid), 1),
            "metrics_bytes": metrics_bytes,
            "metrics_first_scrape_ms": round(first_metrics_ms, 1),
        }
        os.unlink(lua.name)
    finally:
        server.send_signal(signal.SIGINT)
        server.wait(timeout=30)
    print(json.dumps(report, indent=1))
    if args.json:
        args.json.write_text(json.dumps(report, indent=1) + "\n")
    ok = (
        report["group_lookup"]["p99_ms"] < 50
        and report["metrics"]["p99_ms"] < 250
        and report["group_lookup"]["errors"] == report["metrics"]["errors"] == 0
    )
    print("targets met" if ok else "targets NOT met", file=sys.stderr)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
