"""The live run's driver: clients commit to the running broker while the auditor reads its log dir.

Usage (live_run.sh starts and stops the broker around it):
    live_driver.py --work DIR [--seconds 300] [--clients 7] [--groups-every 5] [--out FILE]

1. creates topic ``live-events`` and starts ``--clients`` processes of ``live_clients.py``
   (roles in turn: plain, plain, plain, plain, txn, txn, delete);
2. meanwhile runs ``offsets-auditor audit DIR/kafka-logs --json --no-groups`` (every
   ``--groups-every``-th run without ``--no-groups``) one after the other against the LIVE log
   dir, recording for each run its exit status, wall time, whether stdout is JSON, whether
   stderr holds a traceback, and its non-info findings (``DIR/audit-runs.jsonl``);
3. then reads what the broker did (``live_summary``) and prints the summary JSON (also written
   to ``--out``, default ``DIR/summary.json``).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from kafka import KafkaAdminClient, KafkaConsumer, TopicPartition
from kafka.admin import NewTopic
from live_summary import audit_summary, broker_summary, read_events

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
BOOTSTRAP = f"127.0.0.1:{os.environ.get('KAFKA_PORT', '29492')}"
ROLES = ("plain", "plain", "plain", "plain", "txn", "txn", "delete")
OFFSETS_TOPIC = "__consumer_offsets"


def log(*words: object) -> None:
    print(time.strftime("%H:%M:%S"), *words, file=sys.stderr, flush=True)


def create_topic() -> None:
    admin = KafkaAdminClient(bootstrap_servers=BOOTSTRAP, request_timeout_ms=60000)
    try:
        admin.create_topics(
            [NewTopic("live-events", 40, 1)], raise_errors=False, wait_for_metadata=True
        )
    finally:
        admin.close()


def start_clients(work: Path, count: int, seconds: float) -> list[subprocess.Popen[bytes]]:
    clients = []
    for i in range(count):
        out = work / f"client-{i}.json"
        command = [sys.executable, str(HERE / "live_clients.py"), ROLES[i % len(ROLES)]]
        clients.append(subprocess.Popen([*command, str(i), str(seconds), str(out)]))
    return clients


def audit_once(args: argparse.Namespace, n: int) -> dict[str, Any]:
    """One audit of the live log dir, as an operator would run it."""
    with_groups = args.groups_every > 0 and n % args.groups_every == 0
    command = [
        args.auditor, "audit", str(args.work / "kafka-logs"), "--json",
        "--kafka-version", "2.3.0", "--broker-config", str(args.work / "server-live.properties"),
    ]  # fmt: skip
    if not with_groups:
        command.append("--no-groups")
    start = time.time()
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=900, check=False)
        status, out, err = done.returncode, done.stdout, done.stderr
    except subprocess.TimeoutExpired:
        status, out, err = "timeout", "", ""
    end = time.time()
    try:
        report = json.loads(out)
        findings = [f for f in report["findings"] if f["severity"] != "info"]
        json_ok = True
    except (ValueError, KeyError, TypeError):
        findings, json_ok = [], False
    return {
        "n": n, "start": start, "end": end, "wall_s": round(end - start, 3),
        "with_groups": with_groups, "exit": status, "json_ok": json_ok,
        "traceback": "Traceback (most recent call last)" in err,
        "stderr_tail": " | ".join(err.strip().splitlines()[-3:])[:600],
        "findings": [{k: f.get(k) for k in ("kind", "severity", "partition", "file", "detail")}
                     for f in findings],
    }  # fmt: skip


def audit_loop(args: argparse.Namespace, clients: list[subprocess.Popen[bytes]]) -> list[Any]:
    runs = []
    with (args.work / "audit-runs.jsonl").open("w") as sink:
        while any(c.poll() is None for c in clients):
            run = audit_once(args, len(runs))
            runs.append(run)
            sink.write(json.dumps(run) + "\n")
            sink.flush()
            criticals = sum(f["severity"] == "critical" for f in run["findings"])
            log(f"audit {run['n']}: exit {run['exit']}, {run['wall_s']} s, {criticals} critical")
    return runs


def broker_state() -> dict[str, Any]:
    """What the broker itself says at the end: records in __consumer_offsets, live groups."""
    consumer = KafkaConsumer(bootstrap_servers=BOOTSTRAP)
    parts = [TopicPartition(OFFSETS_TOPIC, p) for p in consumer.partitions_for_topic(OFFSETS_TOPIC)]
    ends = consumer.end_offsets(parts)
    consumer.close()
    admin = KafkaAdminClient(bootstrap_servers=BOOTSTRAP)
    groups = admin.list_groups()
    admin.close()
    return {
        "offsets_topic_end_offsets": {f"{tp.partition}": o for tp, o in sorted(ends.items())},
        "offset_records_written": sum(ends.values()),
        "groups_listed_at_end": len(groups),
    }


def listing(log_dir: Path) -> set[str]:
    return {
        f"{part.name}/{f.name}"
        for part in log_dir.glob(f"{OFFSETS_TOPIC}-*")
        for f in part.iterdir()
    }


def client_totals(work: Path, count: int) -> dict[str, Any]:
    totals: dict[str, Any] = {"clients": count, "last_errors": []}
    for i in range(count):
        path = work / f"client-{i}.json"
        stats = json.loads(path.read_text()) if path.exists() else {"missing": 1}
        for key, value in stats.items():
            if isinstance(value, int) and key != "index":
                totals[key] = totals.get(key, 0) + value
        if stats.get("last_error"):
            totals["last_errors"].append(f"client {i}: {stats['last_error']}")
    return totals


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--work", type=Path, required=True)
    parser.add_argument("--seconds", type=float, default=300)
    parser.add_argument("--clients", type=int, default=7)
    parser.add_argument("--groups-every", type=int, default=5)
    parser.add_argument("--auditor", default=str(REPO / ".venv" / "bin" / "offsets-auditor"))
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    create_topic()
    started = time.time()
    clients = start_clients(args.work, args.clients, args.seconds)
    try:
        runs = audit_loop(args, clients)
    finally:
        for client in clients:
            if client.poll() is None:
                client.terminate()
            client.wait()
    ended = time.time()
    logs = args.work / "logs-live"
    events = read_events(logs / "log-cleaner.log", logs / "server.log")
    summary = {
        "kafka_version": "2.3.0",
        "seconds": args.seconds,
        "audit_command": "offsets-auditor audit LOGDIR --json --kafka-version 2.3.0"
        " --broker-config server-live.properties [--no-groups]",
        **audit_summary(runs, events, listing(args.work / "kafka-logs")),
        "broker": {**broker_state(), **broker_summary(events, started, ended)},
        "client_totals": client_totals(args.work, args.clients),
    }
    text = json.dumps(summary, indent=1)
    (args.out or args.work / "summary.json").write_text(text + "\n")
    print(text)


if __name__ == "__main__":
    main()
