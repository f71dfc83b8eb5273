"""A benchmark cluster: the log dirs of 3 brokers holding a ``__consumer_offsets`` topic of 50
partitions with replication factor 3, written by a million consumer groups, one partition hot.

``python -m benchmarks.generate cluster [--scale S]`` writes ``benchmarks/data/cluster/``
(gitignored); the same seed and scale give the same bytes. ``--scale`` shrinks every size by the
same factor (groups, the hot partition, ``offsets.topic.segment.bytes`` and so every segment), so
a tiny cluster has the shape of the full one. At scale 1 (about 5 GB per broker, one copy on
disk: replicas are hard links):

- ``broker-<id>/kafka-logs``: a broker's log dir after a clean shutdown, with the files Kafka
  2.3.0 writes (``tests/fixtures/kafka-2.3.0/*/kafka-logs``): ``.kafka_cleanshutdown`` (empty),
  ``recovery-point-offset-checkpoint`` and ``replication-offset-checkpoint`` (every partition at
  its log end offset), ``log-start-offset-checkpoint`` (empty: no log starts above its first
  segment), ``cleaner-offset-checkpoint`` (the cleaned partitions), and per partition its
  segments with ``.index`` and ``.timeindex`` (``benchmarks/cluster_log.py``), the producer-state
  snapshots at the active segment's base offset and at the log end offset (10 bytes: no
  producers) and ``leader-epoch-checkpoint`` (epoch 0 from offset 0). ``meta.properties`` has
  ``broker.id`` and ``cluster.id``, which brokers write from 2.4.0, so the auditor detects 2.4.0
  or later (2.4-3.6 write all these files as 2.3.0 does). ``broker-<id>/server.properties``
  gives the broker's settings that differ from the defaults (the scaled segment size; paths as
  in the fixtures, ``/data/kafka-logs``).
- Replicas by Kafka's ``AdminUtils.assignReplicasToBrokers`` (rack-unaware; its two random
  choices from the seed); with 3 brokers and factor 3 every broker has every partition. A
  partition is written once and hard-linked into its other replicas' log dirs: followers hold the
  leader's bytes. Unlike real followers, they also share its index files (a follower indexes at
  its own fetch boundaries) and its modification times.
- The groups (``benchmarks/cluster_groups.py``) live where ``partitionFor`` puts them.
- The hot partition (the first group's, by ``partitionFor``: never cleaned, no cleaner
  checkpoint, as when the cleaner thread has died) starts with
  every assignment of its groups committed once, then busy groups commit again and again until
  it holds 2 GiB: 20 rolled segments and the active one.
- Every other partition was cleaned up to its active segment: a cleaned segment holding the last
  commit of every member's assignment (whole batches at their original offsets, with the gaps the
  cleaner left), then the active segment filled to a uniformly random part of a segment with
  busy groups' commits, some of them expirations (tombstones). Its cleaner checkpoint is the
  active segment's base offset.

``cluster.json`` (written last) holds the spec, the layout and what a coordinator would load:
the groups with a live offset and the live offsets, per partition and in all.
"""

from __future__ import annotations

import argparse
import base64
import itertools
import json
import math
import multiprocessing
import os
import random
import sys
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

from benchmarks.cluster_groups import Group, by_coordinator, groups
from benchmarks.cluster_log import Committers, PartitionWriter
from benchmarks.generate import DATA_DIR, DEFAULT_SEED, START_TIMESTAMP_MS
from offsets_auditor.coordinator import coordinator_partition

TOPIC = "__consumer_offsets"
MiB = 1024 * 1024
GiB = 1024 * MiB
#: The producer-state snapshot of a partition without producers (2.3.0 ProducerStateManager:
#: version 1, CRC-32C of the rest, 0 entries), as in the 2.3.0 fixtures.
EMPTY_PRODUCER_SNAPSHOT = bytes.fromhex("000148674bc700000000")
#: The commits of the busy stretch span this long, ending at the shutdown.
WINDOW_MS = 2 * 60 * 60 * 1000
#: The cleaned segments' commits span the day before.
CLEANED_SPAN_MS = 24 * 60 * 60 * 1000
#: Records the cleaner removed between two retained batches, at most (drawn uniformly).
CLEANED_GAP = 60


@dataclass(frozen=True)
class ClusterSpec:
    scale: float = 1.0
    seed: int = DEFAULT_SEED
    brokers: int = 3
    partitions: int = 50  # offsets.topic.num.partitions
    replication_factor: int = 3  # offsets.topic.replication.factor
    full_groups: int = 1_000_000
    full_hot_bytes: int = 2048 * MiB
    full_segment_bytes: int = 100 * MiB  # offsets.topic.segment.bytes
    topics: int = 2000

    @property
    def groups(self) -> int:
        return max(self.partitions, round(self.full_groups * self.scale))

    @property
    def segment_bytes(self) -> int:
        return max(16 * 1024, round(self.full_segment_bytes * self.scale))

    @property
    def hot_bytes(self) -> int:
        return round(self.full_hot_bytes * self.scale)

    @property
    def broker_ids(self) -> list[int]:
        return list(range(1, self.brokers + 1))


def log_dir(root: Path, broker_id: int) -> Path:
    return root / f"broker-{broker_id}" / "kafka-logs"


def assign_replicas(spec: ClusterSpec) -> list[list[int]]:
    """Each partition's replicas, preferred leader first (AdminUtils.assignReplicasToBrokers,
    rack-unaware: a random start index and replica shift, here from the seed)."""
    rng = random.Random(f"replicas:{spec.seed}")
    brokers, n = spec.broker_ids, spec.brokers
    start, shift = rng.randrange(n), rng.randrange(n)
    out = []
    for p in range(spec.partitions):
        if p > 0 and p % n == 0:
            shift += 1
        first = (p + start) % n
        replicas = [brokers[first]]
        for j in range(spec.replication_factor - 1):
            replicas.append(brokers[(first + 1 + (shift + j) % (n - 1)) % n])
        out.append(replicas)
    return out


# -- one partition (in a worker process) ---------------------------------------------------------


@dataclass(frozen=True)
class PartitionTask:
    spec: ClusterSpec
    partition: int
    hot: bool
    groups: Sequence[Group]
    dirs: Sequence[Path]  # the replicas' partition dirs, the first one written


def write_partition(task: PartitionTask) -> dict[str, Any]:
    spec, path = task.spec, task.dirs[0]
    rng = random.Random(f"partition:{spec.seed}:{task.partition}")
    committers = Committers(task.groups, rng)
    writer = PartitionWriter(path, spec.segment_bytes)
    assignments = committers.every_assignment()
    cleaned_up_to = None
    offset = 0
    if task.hot:
        target, written = spec.hot_bytes, 0
        start = START_TIMESTAMP_MS - WINDOW_MS
        for commit in itertools.chain(assignments, committers.busy()):
            timestamp = start + WINDOW_MS * written // max(target, 1)
            batch = committers.batch(commit, offset, timestamp, 0)
            writer.append(batch, offset, commit.size, timestamp)
            offset += commit.size
            written += len(batch)
            if written >= target:
                break
    else:
        start = START_TIMESTAMP_MS - WINDOW_MS - CLEANED_SPAN_MS
        writer.roll(0)  # the cleaned segment keeps the name of the first segment it replaced
        for i, commit in enumerate(assignments):
            offset += rng.randint(0, CLEANED_GAP)
            timestamp = start + CLEANED_SPAN_MS * i // len(assignments)
            writer.append(
                committers.batch(commit, offset, timestamp, 0), offset, commit.size, timestamp
            )
            offset += commit.size
        offset += rng.randint(1, CLEANED_GAP)
        cleaned_up_to = offset
        writer.roll(offset)
        target, written = int(rng.random() * spec.segment_bytes), 0
        start = START_TIMESTAMP_MS - WINDOW_MS
        for commit in committers.busy():
            if written >= target:
                break
            timestamp = start + WINDOW_MS * written // max(target, 1)
            batch = committers.batch(commit, offset, timestamp, 0)
            writer.append(batch, offset, commit.size, timestamp)
            offset += commit.size
            written += len(batch)
    active = writer.active_base_offset
    writer.close()
    end = writer.next_offset
    for snapshot in sorted({active, end}):
        (path / f"{snapshot:020d}.snapshot").write_bytes(EMPTY_PRODUCER_SNAPSHOT)
    (path / "leader-epoch-checkpoint").write_text("0\n1\n0 0\n")
    for replica in task.dirs[1:]:
        replica.mkdir(parents=True, exist_ok=True)
        for file in sorted(path.iterdir()):
            os.link(file, replica / file.name)
    return {
        "partition": task.partition,
        "hot": task.hot,
        "replicas": [str(d.parent) for d in task.dirs],
        "groups": len(task.groups),
        "live_groups": committers.live_groups(),
        "live_offsets": committers.live_offsets(),
        "segments": len(writer.segments),
        "bytes": sum(s.size for s in writer.segments),
        "active_bytes": writer.segments[-1].size,
        "records": writer.records,
        "batches": writer.batches,
        "log_end_offset": end,
        "active_base_offset": active,
        "cleaner_checkpoint": cleaned_up_to,
        "last_timestamp": max(s.max_timestamp for s in writer.segments),
    }


# -- the cluster ---------------------------------------------------------------------------------


def _checkpoint(entries: Sequence[tuple[int, int]]) -> str:
    """An offset checkpoint file (version 0): ``topic partition offset`` lines."""
    lines = [f"{TOPIC} {p} {o}" for p, o in entries]
    return "\n".join(["0", str(len(entries)), *lines]) + "\n"


def _cluster_id(seed: int) -> str:
    """A cluster id as Kafka makes them (a random UUID, URL-safe base64, 22 characters)."""
    raw = random.Random(f"cluster:{seed}").randbytes(16)
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def _java_date(ms: int) -> str:
    return time.strftime("%a %b %d %H:%M:%S UTC %Y", time.gmtime(ms / 1000))


def _write_broker(
    root: Path, spec: ClusterSpec, broker: int, stats: list[dict[str, Any]], shutdown_ms: int
) -> None:
    directory = log_dir(root, broker)
    mine = [s for s in stats if str(directory) in s["replicas"]]
    ends = [(s["partition"], s["log_end_offset"]) for s in mine]
    cleaned = [(s["partition"], s["cleaner_checkpoint"]) for s in mine if s["cleaner_checkpoint"]]
    files = {
        "meta.properties": f"#\n#{_java_date(shutdown_ms)}\nversion=0\nbroker.id={broker}\n"
        f"cluster.id={_cluster_id(spec.seed)}\n",
        ".kafka_cleanshutdown": "",
        "recovery-point-offset-checkpoint": _checkpoint(ends),
        "replication-offset-checkpoint": _checkpoint(ends),
        "log-start-offset-checkpoint": _checkpoint([]),
        "cleaner-offset-checkpoint": _checkpoint(cleaned),
    }
    for name, text in files.items():
        (directory / name).write_text(text)
    (directory.parent / "server.properties").write_text(
        f"broker.id={broker}\nlog.dirs=/data/kafka-logs\n"
        f"offsets.topic.num.partitions={spec.partitions}\n"
        f"offsets.topic.replication.factor={spec.replication_factor}\n"
        f"offsets.topic.segment.bytes={spec.segment_bytes}\n"
    )


def generate_cluster(root: Path, spec: ClusterSpec, jobs: int | None = None) -> dict[str, Any]:
    """Write the cluster under ``root`` (which must not exist) and return ``cluster.json``."""
    started = time.perf_counter()
    all_groups = groups(spec.seed, spec.groups, spec.topics)
    placed = by_coordinator(all_groups, spec.partitions)
    hot = coordinator_partition(all_groups[0].name, spec.partitions)
    replicas = assign_replicas(spec)
    for broker in spec.broker_ids:
        log_dir(root, broker).mkdir(parents=True)
    tasks = [
        PartitionTask(
            spec,
            p,
            p == hot,
            placed[p],
            [log_dir(root, b) / f"{TOPIC}-{p}" for b in replicas[p]],
        )
        for p in range(spec.partitions)
    ]
    tasks.sort(key=lambda t: (not t.hot, -len(t.groups)))
    jobs = jobs or os.cpu_count() or 1
    if jobs > 1:
        with multiprocessing.get_context("fork").Pool(jobs) as pool:
            stats = list(pool.imap_unordered(write_partition, tasks))
    else:
        stats = [write_partition(t) for t in tasks]
    stats.sort(key=lambda s: s["partition"])
    shutdown_ms = max(s["last_timestamp"] for s in stats) + 1000
    for broker in spec.broker_ids:
        _write_broker(root, spec, broker, stats, shutdown_ms)
    per_broker = {
        b: [s for s in stats if str(log_dir(root, b)) in s["replicas"]] for b in spec.broker_ids
    }
    manifest = {
        "spec": {
            **asdict(spec),
            "groups": spec.groups,
            "segment_bytes": spec.segment_bytes,
            "hot_bytes": spec.hot_bytes,
        },
        "cluster_id": _cluster_id(spec.seed),
        "hot_partition": hot,
        "shutdown_ms": shutdown_ms,
        "now_ms": shutdown_ms + 60_000,
        "brokers": [
            {
                "broker_id": b,
                "log_dir": str(log_dir(root, b)),
                "server_properties": str(log_dir(root, b).parent / "server.properties"),
                "partitions": len(mine),
                "bytes": sum(s["bytes"] for s in mine),
                "records": sum(s["records"] for s in mine),
                "live_groups": sum(s["live_groups"] for s in mine),
                "live_offsets": sum(s["live_offsets"] for s in mine),
            }
            for b, mine in per_broker.items()
        ],
        "groups": spec.groups,
        "live_groups": sum(s["live_groups"] for s in stats),
        "live_offsets": sum(s["live_offsets"] for s in stats),
        "bytes_on_disk": sum(s["bytes"] for s in stats),
        "generated_seconds": round(time.perf_counter() - started, 1),
        "partitions": stats,
    }
    (root / "cluster.json").write_text(json.dumps(manifest, indent=1) + "\n")
    return manifest


def cluster_dir(scale: float) -> Path:
    """Where the cluster of ``scale`` is generated and looked for: ``benchmarks/data/cluster``
    at scale 1, ``cluster-<scale>`` otherwise."""
    return DATA_DIR / ("cluster" if scale == 1 else f"cluster-{scale:g}")


def ensure_cluster(
    root: Path, spec: ClusterSpec, jobs: int | None = None, *, force: bool = False
) -> dict[str, Any]:
    """The cluster at ``root``, generated unless there already (for this spec)."""
    manifest_path = root / "cluster.json"
    if not force and manifest_path.exists():
        manifest: dict[str, Any] = json.loads(manifest_path.read_text())
        if manifest["spec"]["scale"] == spec.scale and manifest["spec"]["seed"] == spec.seed:
            return manifest
    if root.exists():
        import shutil

        shutil.rmtree(root)
    return generate_cluster(root, spec, jobs)


#: Bytes per record of the hot partition's commits (measured on the scale-1 cluster: 2 GiB,
#: 18.8 million records), to split it into parts of known offsets.
HOT_BYTES_PER_RECORD = 114


@dataclass(frozen=True)
class HotPart:
    """Part ``index`` of ``parts`` of a big hot partition: the records at offsets
    ``[first_offset, first_offset + records)``, written by its own process into ``path``."""

    spec: ClusterSpec
    partition: int
    groups: Sequence[Group]
    path: Path
    index: int
    parts: int
    first_offset: int
    records: int


def write_hot_part(part: HotPart) -> dict[str, Any]:
    """One part of a big hot partition: its own commits (part 0 starts with every assignment),
    its own segments (the last one of each part is rolled early, as by time), timestamps in
    its slice of the busy window. The last commit request is cut to end at the part's end."""
    spec = part.spec
    rng = random.Random(f"partition:{spec.seed}:{part.partition}:{part.index}")
    committers = Committers(part.groups, rng)
    writer = PartitionWriter(part.path, spec.segment_bytes)
    writer.roll(part.first_offset)
    commits = committers.busy()
    if part.index == 0:
        commits = itertools.chain(committers.every_assignment(), commits)
    span = WINDOW_MS // part.parts
    start = START_TIMESTAMP_MS - WINDOW_MS + span * part.index
    offset, end = part.first_offset, part.first_offset + part.records
    for commit in commits:
        if offset >= end:
            break
        if offset + commit.size > end:
            commit = replace(commit, size=end - offset)
        timestamp = start + span * (offset - part.first_offset) // part.records
        writer.append(
            committers.batch(commit, offset, timestamp, 0), offset, commit.size, timestamp
        )
        offset += commit.size
    active = writer.active_base_offset
    writer.close()
    return {
        "segments": len(writer.segments),
        "bytes": sum(s.size for s in writer.segments),
        "records": writer.records,
        "batches": writer.batches,
        "active_base_offset": active,
        "log_end_offset": writer.next_offset,
        "last_timestamp": max(s.max_timestamp for s in writer.segments),
    }


def generate_hot(
    root: Path, gib: float, seed: int = DEFAULT_SEED, jobs: int | None = None
) -> dict[str, Any]:
    """One broker's log dir holding only the full-scale cluster's hot partition, written to
    about ``gib`` GiB in 100 MiB segments (``root/broker-1/kafka-logs``; the broker's own files
    as :func:`generate_cluster` writes them): one huge partition, the case a coordinator
    failover re-reads. It is written in parts of equal record counts, one process each (``jobs``
    at a time); each part rolls its own segments. Returns ``hot.json``."""
    spec = ClusterSpec(
        scale=1.0, seed=seed, brokers=1, replication_factor=1, full_hot_bytes=round(gib * GiB)
    )
    started = time.perf_counter()
    all_groups = groups(spec.seed, spec.groups, spec.topics)
    hot = coordinator_partition(all_groups[0].name, spec.partitions)
    placed = by_coordinator(all_groups, spec.partitions)
    directory = log_dir(root, 1)
    path = directory / f"{TOPIC}-{hot}"
    path.mkdir(parents=True)
    jobs = jobs or os.cpu_count() or 1
    parts = max(1, min(jobs * 2, math.ceil(gib)))
    records = spec.hot_bytes // HOT_BYTES_PER_RECORD
    per_part = -(-records // parts)
    tasks = [
        HotPart(spec, hot, placed[hot], path, i, parts, i * per_part, per_part)
        for i in range(parts)
    ]
    with multiprocessing.get_context("fork").Pool(jobs) as pool:
        written = pool.map(write_hot_part, tasks, chunksize=1)
    end = written[-1]["log_end_offset"]
    for snapshot in sorted({written[-1]["active_base_offset"], end}):
        (path / f"{snapshot:020d}.snapshot").write_bytes(EMPTY_PRODUCER_SNAPSHOT)
    (path / "leader-epoch-checkpoint").write_text("0\n1\n0 0\n")
    stats = {
        "partition": hot,
        "hot": True,
        "replicas": [str(directory.parent)],
        "segments": sum(w["segments"] for w in written),
        "bytes": sum(w["bytes"] for w in written),
        "records": sum(w["records"] for w in written),
        "batches": sum(w["batches"] for w in written),
        "log_end_offset": end,
        "active_base_offset": written[-1]["active_base_offset"],
        "cleaner_checkpoint": None,
        "last_timestamp": max(w["last_timestamp"] for w in written),
    }
    shutdown_ms = stats["last_timestamp"] + 1000
    _write_broker(root, spec, 1, [stats], shutdown_ms)
    manifest = {
        "spec": {**asdict(spec), "hot_gib": gib, "segment_bytes": spec.segment_bytes},
        "hot_partition": hot,
        "shutdown_ms": shutdown_ms,
        "now_ms": shutdown_ms + 60_000,
        "log_dir": str(directory),
        "server_properties": str(directory.parent / "server.properties"),
        "generated_seconds": round(time.perf_counter() - started, 1),
        "partition": stats,
    }
    (root / "hot.json").write_text(json.dumps(manifest, indent=1) + "\n")
    return manifest


def ensure_hot(root: Path, gib: float, seed: int = DEFAULT_SEED) -> dict[str, Any]:
    """The hot partition's log dir at ``root``, generated unless there already (same size and
    seed)."""
    manifest_path = root / "hot.json"
    if manifest_path.exists():
        manifest: dict[str, Any] = json.loads(manifest_path.read_text())
        if manifest["spec"]["hot_gib"] == gib and manifest["spec"]["seed"] == seed:
            return manifest
    if root.exists():
        import shutil

        shutil.rmtree(root)
    return generate_hot(root, gib, seed)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.generate cluster",
        description="Generate the benchmark cluster's broker log dirs (see benchmarks/cluster.py).",
    )
    parser.add_argument(
        "--out",
        type=Path,
        help="default: benchmarks/data/cluster (cluster-<scale> at another scale)",
    )
    parser.add_argument("--scale", type=float, default=1.0, help="every size times this")
    parser.add_argument("--seed", type=int, default=DEFAULT_SEED)
    parser.add_argument("--jobs", type=int, default=None, help="processes (default: CPUs)")
    parser.add_argument("--force", action="store_true", help="regenerate even if present")
    parser.add_argument(
        "--hot-gib",
        type=float,
        help="only the hot partition, in one broker's log dir, at this size (GiB; --out"
        " defaults to benchmarks/data/hot-<GiB>)",
    )
    args = parser.parse_args(argv)
    if args.hot_gib is not None:
        out = args.out if args.out is not None else DATA_DIR / f"hot-{args.hot_gib:g}"
        hot = ensure_hot(out, args.hot_gib, args.seed)
        print(json.dumps({k: v for k, v in hot.items() if k != "partition"}, indent=1))
        return 0
    manifest = ensure_cluster(
        args.out if args.out is not None else cluster_dir(args.scale),
        ClusterSpec(scale=args.scale, seed=args.seed),
        args.jobs,
        force=args.force,
    )
    summary = {k: v for k, v in manifest.items() if k not in ("partitions",)}
    print(json.dumps(summary, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
