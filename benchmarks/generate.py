"""Deterministic benchmark segments: a full ``__consumer_offsets`` segment of offset commits in
message format v0 (as Kafka 0.9 writes it) and one in v2 (as Kafka 2.1+ writes it).

``python -m benchmarks.generate`` writes them to ``benchmarks/data/`` (gitignored); the same seed
gives the same bytes. ``python -m benchmarks.generate cluster [--scale S]`` writes the log dirs
of a whole cluster from the same records (``benchmarks/cluster.py``). A segment stops before the
next entry would pass ``--size`` (default 100 MiB, Kafka's ``offsets.topic.segment.bytes``), as a
broker rolls it.

What is in them, and why it looks like a broker's:

- A few thousand consumer groups (team/service names plus a tail of ``console-consumer-N``),
  each consuming 1-3 of a few hundred topics with 1-64 partitions. Busy groups commit more
  often (a skewed choice), as in a real cluster.
- One commit request commits one member's assignment, 1-20 partitions. Kafka 0.9 appends it as
  that many consecutive, uncompressed magic-0 messages (``offsets.topic.compression.codec`` is
  none by default); Kafka 2.1+ as ONE uncompressed v2 batch of that many records, no producer id.
- Keys are OffsetCommitKey v1 (``GroupMetadataManager.offsetCommitKey``). Values: 0.9 writes
  OffsetCommitValue v1 (with expire_timestamp); 2.1+ writes v3 (with leader_epoch), v1 when the
  client sets a retention time. About 3 % of the records are expiration tombstones (null value).
  Metadata strings are mostly empty, sometimes short client strings.
"""

from __future__ import annotations

import argparse
import random
import struct
import sys
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from crc32c import crc32c

#: ``offsets.topic.segment.bytes`` default: a full segment.
SEGMENT_BYTES = 100 * 1024 * 1024
DATA_DIR = Path(__file__).parent / "data"
DEFAULT_SEED = 20_251_121
#: When the first commit happened (ms since the epoch); commits advance a few ms each.
START_TIMESTAMP_MS = 1_763_700_000_000
#: offsets.retention.minutes default (1 day in 0.9, 7 days from 2.0): expire_timestamp - commit.
RETENTION_MS = 24 * 60 * 60 * 1000

# Legacy message (0.9 Message.scala): offset, size | crc | magic, attributes, key length.
LEGACY_HEAD = struct.Struct(">qiI")
LEGACY_MAGIC_ATTRIBUTES_KEYLEN = struct.Struct(">bbi")
INT32 = struct.Struct(">i")
# OffsetCommitKey: version, group (string), topic (string), partition.
STRING_LENGTH = struct.Struct(">h")
KEY_VERSION = struct.Struct(">h")
# OffsetCommitValue v1: version, offset, metadata length | metadata | commit, expire timestamps.
VALUE_V1_HEAD = struct.Struct(">hqh")
VALUE_V1_TAIL = struct.Struct(">qq")
# OffsetCommitValue v3: version, offset, leader_epoch, metadata length | metadata | commit ts.
VALUE_V3_HEAD = struct.Struct(">hqih")
VALUE_V3_TAIL = struct.Struct(">q")
# v2 batch header up to the CRC, and the CRC-covered rest (DefaultRecordBatch).
BATCH_HEAD = struct.Struct(">qiib")  # baseOffset, length, partitionLeaderEpoch, magic
BATCH_CRC = struct.Struct(">I")
BATCH_REST = struct.Struct(
    ">h"  # attributes
    "i"  # lastOffsetDelta
    "q"  # baseTimestamp
    "q"  # maxTimestamp
    "q"  # producerId
    "h"  # producerEpoch
    "i"  # baseSequence
    "i"  # recordsCount
)

_TEAMS = [
    "payments",
    "orders",
    "search",
    "billing",
    "fraud",
    "inventory",
    "shipping",
    "analytics",
    "recs",
    "notifications",
    "identity",
    "ads",
    "pricing",
    "catalog",
    "checkout",
    "ledger",
    "risk",
    "loyalty",
    "warehouse",
    "support",
]
_ROLES = [
    "indexer",
    "projector",
    "sink",
    "enricher",
    "router",
    "aggregator",
    "consumer",
    "worker",
    "replicator",
    "archiver",
    "etl",
    "stream",
    "audit",
    "cache-warmer",
]
_SUFFIXES = ("", "", "-prod", "-eu-1", "-us-east-2", "-canary", "-v2", "-batch")
_DOMAINS = [
    "orders",
    "payments",
    "users",
    "inventory",
    "shipments",
    "clicks",
    "invoices",
    "sessions",
    "events",
]
_ENTITIES = [
    "order",
    "payment",
    "user",
    "item",
    "parcel",
    "click",
    "invoice",
    "session",
    "device",
    "account",
]
_EVENTS = ["created", "updated", "deleted", "snapshot", "changelog", "enriched", "dlq", "retry"]
_PARTITION_COUNTS = (1, 3, 6, 6, 12, 12, 12, 24, 32, 64)
_METADATA = (
    "",
    "consumer-1",
    "host=10.12.3.41",
    '{"client":"svc-7","v":2}',
    "checkpoint-4411",
)


@dataclass(frozen=True)
class SegmentSpec:
    """One benchmark segment: where it goes (named like a broker's first segment, which Kafka's
    DumpLogSegments insists on) and its message format (0 or 2)."""

    name: str
    magic: int


SEGMENTS = (
    SegmentSpec("v0/00000000000000000000.log", 0),
    SegmentSpec("v2/00000000000000000000.log", 2),
)


@dataclass
class _Group:
    keys: list[bytes]  # OffsetCommitKey v1 bytes for each assigned partition
    offsets: list[int]  # the next committed offset of each


def _string(text: str) -> bytes:
    raw = text.encode()
    return STRING_LENGTH.pack(len(raw)) + raw


def _groups(rng: random.Random, count: int = 3000, topic_count: int = 400) -> list[_Group]:
    topics: list[tuple[str, int]] = []
    seen: set[str] = set()
    while len(topics) < topic_count:
        name = f"{rng.choice(_DOMAINS)}.{rng.choice(_ENTITIES)}.{rng.choice(_EVENTS)}"
        if rng.random() < 0.3:
            name += f".v{rng.randint(2, 4)}"
        if name in seen:
            name += f"-{len(topics)}"
        seen.add(name)
        topics.append((name, rng.choice(_PARTITION_COUNTS)))
    names: set[str] = set()
    groups: list[_Group] = []
    while len(groups) < count:
        if rng.random() < 0.1:
            name = f"console-consumer-{rng.randint(10_000, 99_999)}"
        else:
            name = f"{rng.choice(_TEAMS)}-{rng.choice(_ROLES)}{rng.choice(_SUFFIXES)}"
            if name in names:
                name += f"-{rng.randint(1, 99)}"
        if name in names:
            continue
        names.add(name)
        group = _string(name)
        keys: list[bytes] = []
        for topic, partitions in rng.sample(topics, rng.randint(1, 3)):
            prefix = KEY_VERSION.pack(1) + group + _string(topic)
            keys.extend(prefix + INT32.pack(p) for p in range(partitions))
        groups.append(_Group(keys, [rng.randint(0, 5_000_000) for _ in keys]))
    return groups


def _commits(rng: random.Random) -> Iterator[tuple[int, list[tuple[bytes, int | None, str]]]]:
    """Endless commit requests: (commit timestamp, [(key, committed offset or None, metadata)])."""
    groups = _groups(rng)
    # a skewed choice: group i has weight (i+1)^-0.8 (a few busy groups, a long tail)
    weights = [(i + 1) ** -0.8 for i in range(len(groups))]
    timestamp = START_TIMESTAMP_MS
    while True:
        for group in rng.choices(groups, weights, k=1024):
            timestamp += rng.randint(0, 3)
            size = min(len(group.keys), rng.randint(1, 20))
            first = rng.randrange(len(group.keys) - size + 1)
            expire = rng.random() < 0.03
            metadata = "" if rng.random() < 0.85 else rng.choice(_METADATA)
            commit: list[tuple[bytes, int | None, str]] = []
            for i in range(first, first + size):
                if expire:
                    commit.append((group.keys[i], None, ""))
                else:
                    group.offsets[i] += rng.randint(1, 500)
                    commit.append((group.keys[i], group.offsets[i], metadata))
            yield timestamp, commit


def _value_v1(offset: int, metadata: bytes, timestamp: int) -> bytes:
    return (
        VALUE_V1_HEAD.pack(1, offset, len(metadata))
        + metadata
        + VALUE_V1_TAIL.pack(timestamp, timestamp + RETENTION_MS)
    )


def _value_v3(offset: int, leader_epoch: int, metadata: bytes, timestamp: int) -> bytes:
    return (
        VALUE_V3_HEAD.pack(3, offset, leader_epoch, len(metadata))
        + metadata
        + VALUE_V3_TAIL.pack(timestamp)
    )


def legacy_entries(seed: int = DEFAULT_SEED) -> Iterator[bytes]:
    """Magic-0 messages of offset commits, offsets from 0 (Kafka 0.9.0.1)."""
    rng = random.Random(seed)
    offset = 0
    length_value = INT32.pack
    for timestamp, commit in _commits(rng):
        for key, committed, metadata in commit:
            head = LEGACY_MAGIC_ATTRIBUTES_KEYLEN.pack(0, 0, len(key)) + key
            if committed is None:
                tail = length_value(-1)
            else:
                value = _value_v1(committed, metadata.encode(), timestamp)
                tail = length_value(len(value)) + value
            crc = zlib.crc32(tail, zlib.crc32(head))
            yield LEGACY_HEAD.pack(offset, 4 + len(head) + len(tail), crc) + head + tail
            offset += 1


def _varint(value: int) -> bytes:
    """Zig-zag varint (ByteUtils.writeVarint)."""
    raw = ((value << 1) ^ (value >> 63)) & 0xFFFFFFFFFFFFFFFF
    out = bytearray()
    while raw >= 0x80:
        out.append((raw & 0x7F) | 0x80)
        raw >>= 7
    out.append(raw)
    return bytes(out)


_SMALL_VARINTS = [_varint(n) for n in range(1 << 14)]
_NULL = _varint(-1)


def _record(offset_delta: int, key: bytes, value: bytes | None) -> bytes:
    body = b"".join(
        (
            b"\x00\x00",  # attributes, timestampDelta 0
            _SMALL_VARINTS[offset_delta],
            _SMALL_VARINTS[len(key)],
            key,
            _NULL if value is None else _SMALL_VARINTS[len(value)] + value,
            b"\x00",  # no headers
        )
    )
    return _SMALL_VARINTS[len(body)] + body


def default_batches(seed: int = DEFAULT_SEED, leader_epoch: int = 7) -> Iterator[bytes]:
    """Uncompressed v2 batches of offset commits, one per commit request (Kafka 2.1+)."""
    rng = random.Random(seed)
    offset = 0
    for timestamp, commit in _commits(rng):
        version = 1 if rng.random() < 0.08 else 3
        records = []
        for delta, (key, committed, metadata) in enumerate(commit):
            value = None
            if committed is not None:
                raw = metadata.encode()
                value = (
                    _value_v1(committed, raw, timestamp)
                    if version == 1
                    else _value_v3(committed, leader_epoch, raw, timestamp)
                )
            records.append(_record(delta, key, value))
        rest = BATCH_REST.pack(0, len(commit) - 1, timestamp, timestamp, -1, -1, -1, len(commit))
        crc = crc32c(b"".join(records), crc32c(rest))
        size = BATCH_HEAD.size - 12 + BATCH_CRC.size + len(rest) + sum(map(len, records))
        yield b"".join(
            (BATCH_HEAD.pack(offset, size, leader_epoch, 2), BATCH_CRC.pack(crc), rest, *records)
        )
        offset += len(commit)


def write_segment(
    path: Path, magic: int, size: int = SEGMENT_BYTES, seed: int = DEFAULT_SEED
) -> int:
    """Write a segment of at most ``size`` bytes; returns its size."""
    entries = legacy_entries(seed) if magic in (0, 1) else default_batches(seed)
    written = 0
    chunk: list[bytes] = []
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    with tmp.open("wb") as out:
        for entry in entries:
            if written + len(entry) > size:
                break
            chunk.append(entry)
            written += len(entry)
            if len(chunk) >= 4096:
                out.write(b"".join(chunk))
                chunk.clear()
        out.write(b"".join(chunk))
    tmp.replace(path)
    return written


def ensure_segments(
    data_dir: Path = DATA_DIR, size: int = SEGMENT_BYTES, *, force: bool = False
) -> dict[int, Path]:
    """The benchmark segments by magic, generated unless present (at ``size``) already."""
    paths = {}
    for spec in SEGMENTS:
        path = data_dir / spec.name
        if force or not path.exists() or not size - 4096 < path.stat().st_size <= size:
            write_segment(path, spec.magic, size)
        paths[spec.magic] = path
    return paths


def main(argv: list[str] | None = None) -> int:
    """The two segments; ``cluster ...``: the benchmark cluster (``benchmarks/cluster.py``)."""
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["cluster"]:
        from benchmarks.cluster import main as cluster_main

        return cluster_main(argv[1:])
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--out", type=Path, default=DATA_DIR)
    parser.add_argument("--size", type=int, default=SEGMENT_BYTES)
    parser.add_argument("--force", action="store_true", help="regenerate even if present")
    args = parser.parse_args(argv)
    for magic, path in ensure_segments(args.out, args.size, force=args.force).items():
        print(f"v{magic}: {path} ({path.stat().st_size} bytes)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
