"""Helpers for the restart-progress tests: independent "grep"s over real logs, and restart logs
written line by line in the formats of Kafka's source (for versions and situations the real
fixtures do not cover; each format string cites the Kafka source that prints it).

The greps below use only substring tests, never the module under test, so that a count the
module reports can be checked against the log itself.
"""

from __future__ import annotations

import re
from pathlib import Path

FIXTURES = Path(__file__).parent.parent / "fixtures"

#: The real restarts after `kill -9` other helpers record (used when present).
UNCLEAN = {
    "0.9.0.1": FIXTURES / "kafka-0.9.0.1" / "unclean-shutdown",
    "2.3.0": FIXTURES / "kafka-2.3.0" / "unclean-shutdown",
}
#: Real clean starts.
CLEAN = {
    "0.9.0.1": FIXTURES / "kafka-0.9.0.1" / "cleaner-died" / "server.log",
    "2.3.0": FIXTURES / "kafka-2.3.0" / "small-gzip" / "server.log",
}

STARTING = (
    "INFO starting (kafka.server.KafkaServer)",
    "Starting broker (kafka.server.BrokerServer)",
)


def read_lines(path: Path) -> list[str]:
    return path.read_bytes().decode("utf-8", errors="replace").splitlines()


def real_unclean_logs() -> list[tuple[str, Path, Path]]:
    """(version, server-restart.log, kafka-logs) of each real unclean restart present."""
    found = []
    for version, directory in UNCLEAN.items():
        log = directory / "server-restart.log"
        if (directory / "README.md").exists() and log.exists():
            found.append((version, log, directory / "kafka-logs"))
    return found


def last_startup(lines: list[str]) -> list[str]:
    starts = [i for i, line in enumerate(lines) if line.rstrip().endswith(STARTING)]
    return lines[starts[-1] :] if starts else lines


def count_startups(lines: list[str]) -> int:
    return sum(1 for line in lines if line.rstrip().endswith(STARTING))


def loading_window(lines: list[str]) -> list[str]:
    """Lines of the last startup from 'Loading logs' up to the end of log loading."""
    lines = last_startup(lines)
    out: list[str] = []
    inside = False
    for line in lines:
        if "Loading logs" in line and "(kafka.log.LogManager)" in line:
            inside = True
        if inside:
            if "Logs loading complete" in line or (
                "] INFO Loaded " in line and " logs in " in line
            ):
                break
            out.append(line)
    return out


def grep(lines: list[str], *needles: str) -> list[str]:
    return [line for line in lines if all(n in line for n in needles)]


def coordinator_finished_ms(lines: list[str]) -> list[tuple[int, int]]:
    """(partition, milliseconds) of each coordinator "Finished loading" line, in order."""
    out = []
    for line in grep(last_startup(lines), "Finished loading offsets"):
        partition = re.search(r"__consumer_offsets[,-](\d+)", line)
        ms = re.search(r" in (\d+) milliseconds", line)
        assert partition is not None and ms is not None, line
        out.append((int(partition.group(1)), int(ms.group(1))))
    return out


def coordinator_started(lines: list[str]) -> list[int]:
    out = []
    for line in last_startup(lines):
        if "Loading offsets and group metadata from" in line or (
            "Scheduling loading of offsets and group metadata from" in line
        ):
            partition = re.search(r"__consumer_offsets[,-](\d+)", line)
            assert partition is not None, line
            out.append(int(partition.group(1)))
    return out


# --- restart logs in the formats of Kafka's source --------------------------------------------


def ts(second: float) -> str:
    """A log4j timestamp ``second`` seconds after 2026-11-21 10:00:00."""
    whole, ms = divmod(round(second * 1000), 1000)
    minutes, secs = divmod(whole, 60)
    hours, minutes = divmod(minutes, 60)
    return f"[2026-11-21 {10 + hours:02d}:{minutes:02d}:{secs:02d},{ms:03d}]"


def unclean_restart_09(partitions: list[tuple[str, list[int]]], t0: float = 0.0) -> list[str]:
    """A 0.9.0.1 restart after kill -9: kafka.server.KafkaServer "starting", LogManager
    "Loading logs.", per partition Log.loadSegments "Found a corrupted index file, %s, deleting
    and rebuilding index..." for its last segment, Log.recoverLog "Recovering unflushed segment
    %d in log %s.", Log "Completed load of log %s with log end offset %d", "Logs loading
    complete.", then GroupMetadataManager's loading lines."""
    t = t0
    out = [f"{ts(t)} INFO starting (kafka.server.KafkaServer)"]
    t += 0.1
    out.append(f"{ts(t)} INFO Loading logs. (kafka.log.LogManager)")
    for name, bases in partitions:
        t += 0.5
        index = f"/data/kafka-logs/{name}/{bases[-1]:020d}.index"
        out.append(
            f"{ts(t)} WARN Found a corrupted index file, {index}, deleting and rebuilding "
            "index... (kafka.log.Log)"
        )
        for base in bases:
            t += 1.0
            out.append(
                f"{ts(t)} INFO Recovering unflushed segment {base} in log {name}. (kafka.log.Log)"
            )
        t += 0.2
        out.append(
            f"{ts(t)} INFO Completed load of log {name} with log end offset 100 (kafka.log.Log)"
        )
    t += 0.1
    out.append(f"{ts(t)} INFO Logs loading complete. (kafka.log.LogManager)")
    t += 0.3
    out.append(f"{ts(t)} INFO [Kafka Server 0], started (kafka.server.KafkaServer)")
    prefix = "[Group Metadata Manager on Broker 0]: "
    logger = "(kafka.coordinator.GroupMetadataManager)"
    for n, (name, _) in enumerate(p for p in partitions if p[0].startswith("__consumer_offsets")):
        number = int(name.rsplit("-", 1)[1])
        t += 0.01
        out.append(
            f"{ts(t)} INFO {prefix}Loading offsets and group metadata from "
            f"[__consumer_offsets,{number}] {logger}"
        )
        t += 2.0 + n
        out.append(
            f"{ts(t)} INFO {prefix}Finished loading offsets from [__consumer_offsets,{number}] "
            f"in {int((2.0 + n) * 1000)} milliseconds. {logger}"
        )
    return out


def unclean_restart_39(partitions: list[tuple[str, list[int]]], t0: float = 0.0) -> list[str]:
    """A 3.9 (ZooKeeper mode) restart after kill -9, in the formats of 3.9.0's
    KafkaServer.scala, LogManager.loadLogs ("Loading logs from log dirs", "Recovering %d logs
    from %s since no clean shutdown file was found", "Completed load of Log(...) with %d
    segments, local-log-start-offset %d and log-end-offset %d in %dms (%d/%d completed in %s)",
    "Loaded %d logs in %dms (unclean log dirs = ...)"), LogLoader ("Recovering unflushed
    segment %d. %d/%d recovered for %s.", "Found a corrupted index file corresponding to log file
    %s due to %s}, recovering segment and rebuilding index files...") and
    GroupMetadataManager ("Scheduling loading ... for epoch", "Finished loading ... in %d
    milliseconds for epoch %d, of which %d milliseconds was spent in the scheduler.")."""
    t = t0
    n = len(partitions)
    out = [
        f"{ts(t)} INFO starting (kafka.server.KafkaServer)",
        f"{ts(t + 0.1)} INFO Loading logs from log dirs ArraySeq(/data/kafka-logs) "
        "(kafka.log.LogManager)",
        f"{ts(t + 0.1)} INFO Recovering {n} logs from /data/kafka-logs since no clean shutdown "
        "file was found (kafka.log.LogManager)",
    ]
    t += 0.1
    for k, (name, bases) in enumerate(partitions, start=1):
        ident = f"[LogLoader partition={name}, dir=/data/kafka-logs]"
        t += 0.5
        log = f"/data/kafka-logs/{name}/{bases[-1]:020d}.log"
        out.append(
            f"{ts(t)} WARN {ident} Found a corrupted index file corresponding to log file {log} "
            "due to Corrupt time index found, time index file (/data/kafka-logs/x.timeindex) has "
            "non-zero size but the last timestamp is 0 which is less than the first timestamp "
            "1}, recovering segment and rebuilding index files... (kafka.log.LogLoader)"
        )
        for i, base in enumerate(bases):
            t += 1.0
            out.append(
                f"{ts(t)} INFO {ident} Recovering unflushed segment {base}. {i}/{len(bases)} "
                f"recovered for {name}. (kafka.log.LogLoader)"
            )
        t += 0.2
        topic, part = name.rsplit("-", 1)
        out.append(
            f"{ts(t)} INFO Completed load of Log(dir=/data/kafka-logs/{name}, "
            f"topicId=AAAAAAAAAAAAAAAAAAAAAA, topic={topic}, partition={part}, highWatermark=0, "
            f"lastStableOffset=0, logStartOffset=0, logEndOffset=100) with {len(bases)} segments, "
            f"local-log-start-offset 0 and log-end-offset 100 in {len(bases) * 1000 + 700}ms "
            f"({k}/{n} completed in /data/kafka-logs) (kafka.log.LogManager)"
        )
    t += 0.1
    out.append(
        f"{ts(t)} INFO Loaded {n} logs in {int((t - t0) * 1000)}ms (unclean log dirs = "
        "ArrayBuffer(/data/kafka-logs)) (kafka.log.LogManager)"
    )
    t += 0.3
    out.append(f"{ts(t)} INFO [KafkaServer id=0] started (kafka.server.KafkaServer)")
    prefix = "[GroupMetadataManager brokerId=0] "
    logger = "(kafka.coordinator.group.GroupMetadataManager)"
    offsets = [p for p in partitions if p[0].startswith("__consumer_offsets")]
    t += 0.01
    for name, _ in offsets:
        out.append(
            f"{ts(t)} INFO {prefix}Scheduling loading of offsets and group metadata from {name} "
            f"for epoch 3 {logger}"
        )
    waited = 0
    for n_, (name, _) in enumerate(offsets):
        load = 2000 + 1000 * n_
        t += load / 1000
        out.append(
            f"{ts(t)} INFO {prefix}Finished loading offsets and group metadata from {name} in "
            f"{load + waited} milliseconds for epoch 3, of which {waited} milliseconds was spent "
            f"in the scheduler. {logger}"
        )
        waited += load
    return out
