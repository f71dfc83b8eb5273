"""Issue 18, no false alarm on a running broker, on a REAL Kafka 2.3.0 broker (opt-in:
OFFSETS_AUDITOR_BROKER_TESTS=1).

While the broker runs under commit load (small segments, so the active ones roll and their
indexes are preallocated): the lock probe names its JVM, and the audit gives no
``unclean-shutdown`` and no corrupt index, at 2.3.0 and judged as 2.1.0 alike. After its
``kill -9``: the audit reports the unclean shutdown, and the broker's restart then recovers
exactly the segments it predicted and rebuilds the indexes it called corrupt (its own
``server.log``, parsed by ``offsets_auditor.restart``). The log dir sits beside the broker's
``logs/`` (Kafka's own layout), where the audit finds ``server.log``.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from offsets_auditor.logdir import fs
from offsets_auditor.logdir.liveness import BrokerState, judge
from offsets_auditor.restart.progress import fold_lines
from tests.startup.test_running_broker import corrupt_files, kinds

REPO = Path(__file__).resolve().parent.parent.parent
KAFKA = REPO / "scripts" / "fixtures" / "kafka23.sh"
BROKER = pytest.mark.skipif(
    os.environ.get("OFFSETS_AUDITOR_BROKER_TESTS") != "1",
    reason="drives a real Kafka 2.3.0 broker: set OFFSETS_AUDITOR_BROKER_TESTS=1",
)
PORTS = {"ZK_PORT": "26682", "KAFKA_PORT": "33692"}
SETTINGS = ["offsets.topic.segment.bytes=131072", "log.segment.bytes=131072"]
ROLLS = re.compile(r"partition=__consumer_offsets-\d+.*Rolled new log segment")
RECOVERING = re.compile(r"partition=(?P<part>\S+), dir=[^\]]*\] Recovering unflushed segment (\d+)")


def kafka(*args: str, phase: str = "run", keep_zk: bool = False) -> None:
    env = {**os.environ, **PORTS, "PHASE": phase, "KEEP_ZK": "1" if keep_zk else "0"}
    subprocess.run([str(KAFKA), *args], env=env, check=True, timeout=600, capture_output=True)


@pytest.fixture
def work(tmp_path: Path) -> Iterator[Path]:
    yield tmp_path
    kafka("stop", str(tmp_path))  # whatever happened: no broker or ZooKeeper left behind


def audit(log_dir: Path, *extra: str) -> dict[str, Any]:
    import json

    done = subprocess.run(
        [str(Path(sys.executable).parent / "offsets-auditor"), "audit", str(log_dir), "--json",
         "--no-groups",
         "--set", "offsets.topic.num.partitions=4", *extra],
        capture_output=True, text=True, timeout=300, check=False, cwd=REPO,
    )  # fmt: skip
    assert done.returncode in (0, 1, 2), done.stderr[-2000:]
    report: dict[str, Any] = json.loads(done.stdout)
    return report


def wait_for(path: Path, pattern: re.Pattern[str], count: int, seconds: float) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        text = path.read_text(errors="replace") if path.exists() else ""
        if len(pattern.findall(text)) >= count:
            return
        time.sleep(0.5)
    raise AssertionError(f"timed out waiting for {pattern.pattern!r} x{count} in {path}")


@pytest.mark.broker
@BROKER
def test_running_then_killed_broker(work: Path) -> None:
    kafka("start", str(work), *SETTINGS)
    (work / "logs").symlink_to("logs-run")  # Kafka's layout: LOG_DIR=$base_dir/logs
    log_dir = work / "kafka-logs"
    client = subprocess.Popen(
        [sys.executable, str(REPO / "scripts" / "fixtures" / "k23_unclean.py"),
         str(work / "client-progress.json")],
        env={**os.environ, **PORTS}, cwd=REPO / "scripts" / "fixtures",
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    try:
        wait_for(work / "logs-run" / "server.log", ROLLS, 6, 300)
        jvm = int((work / "kafka.pid").read_text())
        liveness = judge(fs.probe_lock(log_dir / ".lock"))
        assert liveness.state is BrokerState.RUNNING
        assert f"process {jvm} holds a write lock" in liveness.evidence
        running = audit(log_dir)
        as_2_1 = audit(log_dir, "--kafka-version", "2.1.0")
        print(
            "running:",
            running["brokers"][0]["broker_state"],
            running["brokers"][0]["recovery"]["if_crashed"],
        )
    finally:
        kafka("kill", str(work), keep_zk=True)
        client.kill()
        client.wait()
    assert running["kafka_version"]["range"] == ["2.3.0", "2.3.0"]
    assert running["kafka_version"]["server_log"]["how"] == "found beside the log dir"
    for report in (running, as_2_1):
        assert report["brokers"][0]["broker_state"]["state"] == "running"
        assert report["brokers"][0]["clean_shutdown"] is None
        assert not {"unclean-shutdown", "corrupt-index"} & set(kinds(report)), report["findings"]
        assert corrupt_files(report) == 0
    preallocated = [x for x in as_2_1["indexes"] if "preallocated (" in x["reason"]]
    assert preallocated, "no active index was preallocated: the test proves nothing"

    killed = audit(log_dir)
    killed_2_1 = audit(log_dir, "--kafka-version", "2.1.0")
    (broker,) = killed["brokers"]
    assert broker["broker_state"]["state"] == "stopped"
    assert "unclean-shutdown" in kinds(killed)
    predicted = {s["file"] for p in broker["recovery"]["by_partition"] for s in p["segments"]}

    time.sleep(10)  # the dead broker's ZooKeeper session (6 s) expires
    kafka("start", str(work), *SETTINGS, phase="restart")
    restart_log = work / "logs-restart" / "server.log"
    for n in range(4):
        wait_for(
            restart_log,
            re.compile(f"Finished loading offsets and group metadata from __consumer_offsets-{n} "),
            1,
            300,
        )
    restart = fold_lines(fs.iter_lines(restart_log), kafka_version="2.3.0")
    recovered = {
        f"{m['part']}/{int(m[2]):020d}.log" for m in RECOVERING.finditer(restart_log.read_text())
    }
    print(
        "killed: predicted", broker["recovery"]["segments_to_recover"], "segments,",
        broker["recovery"]["bytes_to_read"], "bytes; as 2.1.0:",
        killed_2_1["brokers"][0]["recovery"]["segments_to_recover"], "segments,",
        corrupt_files(killed_2_1), "corrupt; the restart recovered", restart.segments_recovered,
        "and rebuilt", restart.index_files_rebuilt, "index files",
    )  # fmt: skip
    assert broker["recovery"]["segments_to_recover"] == restart.segments_recovered
    assert predicted == recovered
    assert corrupt_files(killed) == restart.index_files_rebuilt == 0
