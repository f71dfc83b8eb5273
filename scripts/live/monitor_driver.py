"""The monitoring path against a live broker: scheduled scans, the service, Prometheus with the
project's rules, while clients commit; then scans made to fail, then ``kill -9``.

Usage (monitor_run.sh starts the broker, the service and Prometheus around it):
    monitor_driver.py --work DIR --results R --service URL --prometheus URL
        [--seconds 600] [--interval 30] [--clients 7] [--fail-scans 2] [--out FILE]

1. creates topic ``live-events`` and starts ``--clients`` processes of ``live_clients.py``;
2. meanwhile runs ``offsets-auditor scan DIR/kafka-logs --out R --publisher live`` once every
   ``--interval`` seconds (the next starts when the previous has finished, as a CronJob with
   ``concurrencyPolicy: Forbid`` would), recording each scan's exit status, time, stderr and the
   run it published; polls Prometheus' alerts all along;
3. two thirds into the load, makes the next ``--fail-scans`` scans fail (the publisher's
   ``.staging`` becomes a file: the scan reads everything, then cannot publish), then lets them
   succeed again: ``OffsetsScanFailing`` must fire and clear;
4. when the clients are done: one more scan, and every group's committed offsets from the
   service (``/groups/{id}``) against the broker's own (``list_consumer_group_offsets``);
5. ``kill -9`` of the broker, a scan of what it left (the unclean shutdown and what the next
   start recovers), the broker started again, and its own ``server.log`` read for what it
   recovered.

Prints the summary JSON (also written to ``--out``, default ``DIR/monitor-summary.json``).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import threading
import time
import urllib.parse
import urllib.request
from collections import Counter
from pathlib import Path
from typing import Any

from kafka import KafkaAdminClient
from live_driver import BOOTSTRAP, client_totals, create_topic, log, start_clients

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
PUBLISHER = "live"


def get(url: str, timeout: float = 10) -> Any:
    with urllib.request.urlopen(url, timeout=timeout) as response:
        return json.loads(response.read())


class Monitor:
    def __init__(self, args: argparse.Namespace) -> None:
        self.args = args
        self.home = args.results / "publishers" / PUBLISHER
        self.scans: list[dict[str, Any]] = []
        self.alerts: dict[tuple[str, str], dict[str, Any]] = {}
        self.polls = 0
        self.failing: tuple[float, float] | None = None  # when scans were made to fail
        self.broker_phase = "live"  # whose server.log the scans are given
        self._stop = threading.Event()
        self._poller = threading.Thread(target=self._poll, daemon=True)
        self._poller.start()

    def _poll(self) -> None:
        """Prometheus' alerts every 2 s, whatever the scans are doing."""
        while not self._stop.wait(2.0):
            self.poll_alerts()

    def stop(self) -> None:
        self._stop.set()
        self._poller.join(timeout=10)

    def scan(self, phase: str) -> dict[str, Any]:
        args = self.args
        command = [
            *(args.auditor, "scan", str(args.work / "kafka-logs"), "--out", str(args.results)),
            *("--publisher", PUBLISHER, "--broker-config", str(args.config)),
            *("--server-log", str(args.work / f"logs-{self.broker_phase}" / "server.log")),
            *("--driver-memory", "1g", "--master", "local[2]"),
        ]
        start = time.time()
        done = subprocess.run(command, capture_output=True, text=True, timeout=1800, check=False)
        end = time.time()
        pointer = self.home / "LATEST"
        latest = pointer.read_text().strip() if pointer.is_file() else None
        err = done.stderr.strip().splitlines()
        record = {
            "n": len(self.scans), "phase": phase, "start": start, "end": end,
            "wall_s": round(end - start, 1), "exit": done.returncode, "latest": latest,
            "stderr_lines": len(err), "stderr_tail": err[-3:],
            "traceback": "Traceback (most recent call last)" in done.stderr,
        }  # fmt: skip
        self.scans.append(record)
        log(f"scan {record['n']} ({phase}): exit {done.returncode} in {record['wall_s']} s,"
            f" {len(err)} stderr line(s)")  # fmt: skip
        return record

    def poll_alerts(self) -> None:
        """Every alert Prometheus has (pending or firing), with when it was first and last seen."""
        try:
            answer = get(f"{self.args.prometheus}/api/v1/alerts")
        except OSError:
            return
        self.polls += 1
        now = time.time()
        for alert in answer["data"]["alerts"]:
            labels = {k: v for k, v in alert["labels"].items() if k not in ("job", "instance")}
            key = (labels["alertname"], json.dumps(labels, sort_keys=True))
            seen = self.alerts.setdefault(
                key, {"labels": labels, "first_seen": now, "states": {}, "activeAt": set()}
            )
            seen["last_seen"] = now
            seen["states"][alert["state"]] = seen["states"].get(alert["state"], 0) + 1
            seen["activeAt"].add(alert["activeAt"])

    def wait(self, seconds: float) -> None:
        time.sleep(max(seconds, 0))


def scheduled(monitor: Monitor, clients: list[subprocess.Popen[bytes]]) -> None:
    """Scans every --interval while the clients run; two thirds in, --fail-scans of them fail."""
    args = monitor.args
    started = time.time()
    fail_at = started + args.seconds * 2 / 3
    failed = 0
    staging = monitor.home / ".staging"
    while any(c.poll() is None for c in clients):
        slot = time.time()
        if failed < args.fail_scans and slot >= fail_at:
            if failed == 0:
                shutil.rmtree(staging, ignore_errors=True)
                staging.write_text("in the way: the scan cannot publish\n")
                monitor.failing = (time.time(), 0.0)
            monitor.scan("made to fail")
            failed += 1
            if failed == args.fail_scans:
                staging.unlink()
                monitor.failing = (monitor.failing[0], time.time())  # type: ignore[index]
        else:
            monitor.scan("load")
        monitor.wait(max(args.interval - (time.time() - slot), 0))
    if staging.is_file():  # the load ended inside the failing window
        staging.unlink()
        monitor.failing = (monitor.failing[0], time.time())  # type: ignore[index]


def broker_offsets() -> dict[str, dict[str, int]]:
    """Every group the broker lists, with its committed offsets."""
    admin = KafkaAdminClient(bootstrap_servers=BOOTSTRAP, request_timeout_ms=60000)
    try:
        found = {}
        for listed in admin.list_groups():
            group = listed["group_id"] if isinstance(listed, dict) else listed[0]
            committed = admin.list_group_offsets(group)
            if group in committed and isinstance(committed[group], dict):
                committed = committed[group]
            found[group] = {
                f"{tp.topic}:{tp.partition}": meta.offset
                for tp, meta in committed.items()
                if meta.offset >= 0
            }
        return found
    finally:
        admin.close()


def served_offsets(service: str, groups: list[str]) -> dict[str, dict[str, int]]:
    found = {}
    for group in groups:
        url = f"{service}/group?" + urllib.parse.urlencode({"group": group})
        try:
            details = get(url)
        except urllib.error.HTTPError:
            found[group] = {}
            continue
        copies = details["copies"] if "copies" in details else details.get("log_dirs", [])
        offsets = {}
        for copy in copies:
            for o in copy["offsets"]:
                if not o["pending"]:
                    offsets[f"{o['topic']}:{o['partition']}"] = o["offset"]
        found[group] = offsets
    return found


def restart_after_kill(monitor: Monitor, broker_settings: list[str]) -> dict[str, Any]:
    """kill -9, a scan of what is left, the broker started again: what it recovered."""
    args = monitor.args
    k23 = REPO / "scripts" / "fixtures" / "kafka23.sh"
    subprocess.run(
        [str(k23), "kill", str(args.work)], check=True, env={**os.environ, "KEEP_ZK": "1"}
    )
    scan = monitor.scan("after kill -9")
    run = monitor.home / "runs" / str(scan["latest"])
    report = json.loads((run / "reports" / "0.json").read_text())
    (broker,) = report["brokers"]
    findings = [f for f in report["findings"] if f["kind"] in ("unclean-shutdown", "corrupt-index")]
    predicted = {
        "run": scan["latest"],
        "clean_shutdown": broker.get("clean_shutdown"),
        "recovery": {k: v for k, v in broker["recovery"].items() if k != "partitions"},
        "corrupt_index_files": sum(
            1 for i in report["indexes"] if i["verdict"] in ("corrupt", "fatal")
        ),
        "findings": [{k: f[k] for k in ("kind", "severity", "detail")} for f in findings],
    }
    env = {**os.environ, "PHASE": "restart"}
    subprocess.run(
        [str(k23), "start", str(args.work), *broker_settings],
        check=True, env=env, capture_output=True,
    )  # fmt: skip
    server_log = args.work / "logs-restart" / "server.log"
    progress = subprocess.run(
        [args.auditor, "restart-progress", "--server-log", str(server_log), "--json"],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    try:
        loading = json.loads(progress.stdout)["log_loading"]
        real = {
            k: loading.get(k)
            for k in ("segments_recovered", "index_files_rebuilt", "partitions_loaded")
        }

    except ValueError:
        real = {"error": progress.stderr[-500:]}
    subprocess.run([str(k23), "stop", str(args.work)], check=False, env=env, capture_output=True)
    return {"scan": scan, "predicted": predicted, "restart": real}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--work", type=Path, required=True)
    parser.add_argument("--results", type=Path, required=True)
    parser.add_argument("--config", type=Path, required=True)
    parser.add_argument("--service", required=True)
    parser.add_argument("--prometheus", required=True)
    parser.add_argument("--seconds", type=float, default=600)
    parser.add_argument("--interval", type=float, default=30)
    parser.add_argument("--clients", type=int, default=7)
    parser.add_argument("--fail-scans", type=int, default=2)
    parser.add_argument("--auditor", default=str(REPO / ".venv" / "bin" / "offsets-auditor"))
    parser.add_argument("--out", type=Path)
    parser.add_argument("settings", nargs="*", help="the broker's key=value settings")
    args = parser.parse_args()
    monitor = Monitor(args)
    create_topic()
    clients = start_clients(args.work, args.clients, args.seconds)
    try:
        scheduled(monitor, clients)
    finally:
        for client in clients:
            if client.poll() is None:
                client.terminate()
            client.wait()
    monitor.scan("after the load")
    monitor.wait(3 * 2)  # a scrape and an evaluation
    broker = broker_offsets()
    served = served_offsets(args.service, sorted(broker))
    differ = sorted(g for g in broker if broker[g] != served.get(g))
    killed = restart_after_kill(monitor, args.settings)
    monitor.wait(3 * 2)
    monitor.stop()
    summary = {
        "kafka_version": "2.3.0",
        "seconds": args.seconds,
        "interval": args.interval,
        "scans": monitor.scans,
        "exits": dict(Counter(str(s["exit"]) for s in monitor.scans)),
        "failing_window": monitor.failing,
        "alerts": [{**a, "activeAt": sorted(a["activeAt"])} for a in monitor.alerts.values()],
        "alert_polls": monitor.polls,
        "groups": {
            "broker": len(broker),
            "equal": len(broker) - len(differ),
            "differ": differ[:20],
            "differences": {g: {"broker": broker[g], "served": served.get(g)} for g in differ[:5]},
        },
        "kill": killed,
        "client_totals": client_totals(args.work, args.clients),
    }
    text = json.dumps(summary, indent=1, default=str)
    (args.out or args.work / "monitor-summary.json").write_text(text + "\n")
    print(text)


if __name__ == "__main__":
    main()
