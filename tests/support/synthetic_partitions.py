"""Synthetic ``__consumer_offsets`` partitions written as real segment files, for the cleaner
oracle tests (``tests/cleaner/test_cleaner_oracle.py``), and the hypothesis strategies that draw
them.

A partition is a list of segments, each a list of :class:`Entry` (written in order, offsets
assigned as they are written). Entries cover what a broker's log holds: v0/v1 messages, gzip
legacy wrappers, v2 batches (plain, gzip, idempotent, transactional), COMMIT/ABORT markers
written separately from their transaction's batches (so transactions span segments, stay open,
interleave between producers), emptied batches as the cleaner leaves them, control batches with
odd or undecodable records, entries whose CRC does not match, offset gaps and a truncated tail.
Grown from the generator of ``tests/test_cleaner_fast.py`` at ``aa82d94`` (``build_partition``,
``entry_spec``).
"""

from __future__ import annotations

import gzip
import os
import struct
import zlib
from dataclasses import dataclass
from pathlib import Path

from crc32c import crc32c
from hypothesis import strategies as st

from tests.support.segments import varint

TIMESTAMP = 1_763_700_000_000
#: the emulation's clock in these tests
NOW_MS = TIMESTAMP + 10**9
PRODUCERS = (7, 8, 9)
#: key ids: 0..KEYLESS-1 are keys, KEYLESS is a record without a key
KEYLESS = 24

KINDS = (
    "v0",
    "v1",
    "v0-gzip",
    "v1-gzip",
    "v2",
    "v2",
    "v2-gzip",
    "v2-idempotent",
    "v2-txn",
    "v2-txn",
    "v2-txn-gzip",
    "marker",
    "marker",
    "txn+marker",
    "empty",
    "empty-control",
    "odd-control",
    "crc-flip",
    "crc-flip-v2",
    "v2-offset-negative",
    "v2-offset-ahead",
)
#: v2 batches whose base offset field (outside the CRC, so a flipped bit goes unseen) says
#: something else than where they are: negative, or 1000 ahead (offsets out of order)
CORRUPT_OFFSET_KINDS = ("v2-offset-negative", "v2-offset-ahead")
LEGACY_KINDS = {"v0", "v1", "v0-gzip", "v1-gzip", "crc-flip"}


@dataclass(frozen=True)
class Entry:
    """One thing written to a segment.

    ``records``: (key id, tombstone) pairs (an ``empty`` batch takes their offsets but holds
    none of them). ``producer``: index into :data:`PRODUCERS` (idempotent, transactional,
    marker and empty kinds), with ``epoch``. ``commit``: the marker's type (COMMIT or ABORT).
    ``gap``: offsets skipped before the entry (a compacted log has gaps). ``odd``: which of
    :data:`ODD_CONTROLS` ``odd-control`` writes. ``keep_producer``: whether an ``empty`` batch
    keeps its producer id (as the cleaner leaves a producer's last batch) or has none.
    """

    kind: str
    records: tuple[tuple[int, bool], ...] = ((0, False),)
    producer: int = 0
    epoch: int = 0
    commit: bool = True
    gap: int = 0
    odd: int = 0
    keep_producer: bool = True


@dataclass(frozen=True)
class Partition:
    """Segments of entries; ``mtime_steps[i]``: ms between segment i-1's and i's modification
    times; ``checkpoint``/``log_start``: the cleaner and log-start checkpoints (None: no
    entry); ``truncated_tail``: a partial write at the end of the last segment."""

    segments: tuple[tuple[Entry, ...], ...]
    mtime_steps: tuple[int, ...]
    checkpoint: int | None = None
    log_start: int | None = None
    truncated_tail: bool = False
    legacy_only: bool = False
    #: per producer: None leaves its transaction open (hanging) at the end of the log, else
    #: the last segment ends with its marker (True: COMMIT, False: ABORT)
    closing: tuple[bool | None, ...] = (None, None, None)


# --- encoding ------------------------------------------------------------------------------------


def commit_key(key_id: int) -> bytes:
    """An OffsetCommitKey v1 (group, topic, partition), or a GroupMetadataKey for every
    fifth id."""
    group = f"group-{key_id % 5}".encode()
    if key_id % 5 == 4:
        return struct.pack(">hh", 2, len(group)) + group
    topic = b"topic"
    return (
        struct.pack(">hh", 1, len(group))
        + group
        + struct.pack(">h", len(topic))
        + topic
        + struct.pack(">i", key_id)
    )


def commit_value(offset: int) -> bytes:
    return struct.pack(">hqh", 1, offset, 0) + struct.pack(">qq", TIMESTAMP + offset, TIMESTAMP)


def timestamp_of(offset: int) -> int:
    return TIMESTAMP + 10 * offset


def legacy(
    offset: int,
    key: bytes | None,
    value: bytes | None,
    *,
    magic: int = 0,
    codec: int = 0,
    timestamp: int = TIMESTAMP,
) -> bytes:
    body = bytes([magic, codec])
    if magic == 1:
        body += struct.pack(">q", timestamp)
    body += struct.pack(">i", -1 if key is None else len(key)) + (key or b"")
    body += struct.pack(">i", -1 if value is None else len(value)) + (value or b"")
    return struct.pack(">qiI", offset, 4 + len(body), zlib.crc32(body)) + body


def legacy_wrapper(first: int, pairs: list[tuple[bytes | None, bytes | None]], magic: int) -> bytes:
    """A gzip wrapper: inner offsets absolute (v0) or relative (v1, KIP-31); the wrapper's
    offset is the last inner offset."""
    inner = b"".join(
        legacy(first + i if magic == 0 else i, k, v, magic=magic, timestamp=timestamp_of(first + i))
        for i, (k, v) in enumerate(pairs)
    )
    last = first + len(pairs) - 1
    return legacy(
        last,
        None,
        gzip.compress(inner, mtime=0),
        magic=magic,
        codec=1,
        timestamp=timestamp_of(last),
    )


def v2_record(delta: int, key: bytes | None, value: bytes | None) -> bytes:
    body = b"\x00" + varint(delta * 10) + varint(delta)
    body += varint(-1) if key is None else varint(len(key)) + key
    body += varint(-1) if value is None else varint(len(value)) + value
    body += varint(0)
    return varint(len(body)) + body


def v2_batch(
    base: int,
    records: list[tuple[bytes | None, bytes | None]],
    *,
    attributes: int = 0,
    producer_id: int = -1,
    epoch: int = -1,
    last_offset_delta: int | None = None,
) -> bytes:
    raw = b"".join(v2_record(i, k, v) for i, (k, v) in enumerate(records))
    if attributes & 0x07 == 1:
        raw = gzip.compress(raw, mtime=0)
    delta = len(records) - 1 if last_offset_delta is None else last_offset_delta
    rest = struct.pack(
        ">hiqqqhii",
        attributes,
        delta,
        timestamp_of(base),
        timestamp_of(base + max(delta, 0)),
        producer_id,
        epoch if producer_id >= 0 else -1,
        0 if producer_id >= 0 else -1,
        len(records),
    )
    rest += raw
    return struct.pack(">qiibI", base, 4 + 1 + 4 + len(rest), 0, 2, crc32c(rest)) + rest


TXN = 0x10
CONTROL = 0x20

#: the odd control record of type -1 (``ControlRecordType.UNKNOWN``'s id)
UNKNOWN_TYPE_CONTROL = 0
#: odd control records: (key, value) of ``odd-control`` number ``odd``
ODD_CONTROLS: tuple[tuple[bytes, bytes | None], ...] = (
    (struct.pack(">hh", 0, -1), struct.pack(">hi", 0, 5)),  # type -1 (Kafka's UNKNOWN)
    (struct.pack(">hh", 0, 3), b""),  # SNAPSHOT_HEADER: a known non-marker type
    (struct.pack(">hh", 0, 99), None),  # an unknown type
    (b"\x00", None),  # a key too short to decode
    (struct.pack(">hh", 0, 1), b"\x00"),  # a COMMIT whose value is too short
    (struct.pack(">hh", -1, 0), struct.pack(">hi", 0, 1)),  # negative key version
)
#: the odd control records ``records.control.decode_control`` decodes
DECODABLE_ODD_CONTROLS = frozenset({0, 1, 2})


def _pairs(entry: Entry, offset: int) -> list[tuple[bytes | None, bytes | None]]:
    return [
        (
            None if k == KEYLESS else commit_key(k),
            None if tombstone else commit_value(offset + i),
        )
        for i, (k, tombstone) in enumerate(entry.records)
    ]


def encode(entry: Entry, offset: int, legacy_only: bool) -> tuple[bytes, int]:
    """The bytes of ``entry`` written at ``offset``, and how many offsets it takes."""
    kind = entry.kind
    if legacy_only and kind not in LEGACY_KINDS:
        kind = "v0-gzip" if "gzip" in kind else "v0"
    pairs = _pairs(entry, offset)
    pid = PRODUCERS[entry.producer]
    n = len(pairs)
    if kind in ("v0", "v1"):
        magic = 0 if kind == "v0" else 1
        data = b"".join(
            legacy(offset + i, k, v, magic=magic, timestamp=timestamp_of(offset + i))
            for i, (k, v) in enumerate(pairs)
        )
        return data, n
    if kind in ("v0-gzip", "v1-gzip"):
        return legacy_wrapper(offset, pairs, 0 if kind == "v0-gzip" else 1), n
    if kind == "crc-flip":  # the v0 CRC alone flipped: read as is (no broker reader checks it)
        bad = bytearray(legacy(offset, *pairs[0]))
        bad[12] ^= 0x01
        return bytes(bad), 1
    if kind == "crc-flip-v2":  # the CRC-32C alone flipped
        bad = bytearray(v2_batch(offset, pairs))
        bad[17] ^= 0x01
        return bytes(bad), n
    if kind in CORRUPT_OFFSET_KINDS:  # takes no offset of its own
        flipped = -offset - 1 if kind == "v2-offset-negative" else offset + 1000
        return struct.pack(">q", flipped) + v2_batch(offset, pairs)[8:], 0
    if kind in ("v2", "v2-gzip"):
        return v2_batch(offset, pairs, attributes=1 if kind == "v2-gzip" else 0), n
    if kind == "v2-idempotent":
        return v2_batch(offset, pairs, producer_id=pid, epoch=entry.epoch), n
    if kind in ("v2-txn", "v2-txn-gzip"):
        attributes = TXN | (1 if kind == "v2-txn-gzip" else 0)
        return v2_batch(offset, pairs, attributes=attributes, producer_id=pid, epoch=entry.epoch), n
    if kind == "marker":
        return marker(offset, pid, entry.epoch, entry.commit), 1
    if kind == "txn+marker":
        data = v2_batch(offset, pairs, attributes=TXN, producer_id=pid, epoch=entry.epoch)
        return data + marker(offset + n, pid, entry.epoch, entry.commit), n + 1
    if kind == "empty":  # a batch the cleaner emptied: header only, its offsets still taken
        producer = pid if entry.keep_producer else -1
        return v2_batch(
            offset, [], producer_id=producer, epoch=entry.epoch, last_offset_delta=n - 1
        ), n
    if kind == "empty-control":
        attributes = TXN | CONTROL
        return v2_batch(
            offset,
            [],
            attributes=attributes,
            producer_id=pid,
            epoch=entry.epoch,
            last_offset_delta=0,
        ), 1
    if kind == "odd-control":
        record = ODD_CONTROLS[entry.odd % len(ODD_CONTROLS)]
        attributes = TXN | CONTROL
        return v2_batch(
            offset, [record], attributes=attributes, producer_id=pid, epoch=entry.epoch
        ), 1
    raise ValueError(kind)


def marker(offset: int, producer_id: int, epoch: int, commit: bool) -> bytes:
    key = struct.pack(">hh", 0, 1 if commit else 0)
    value = struct.pack(">hi", 0, 5)
    return v2_batch(
        offset, [(key, value)], attributes=TXN | CONTROL, producer_id=producer_id, epoch=epoch
    )


def write_partition(root: Path, spec: Partition) -> Path:
    """Write ``spec`` as ``root/kafka-logs/__consumer_offsets-0``; returns the log dir."""
    log_dir = root / "kafka-logs"
    part = log_dir / "__consumer_offsets-0"
    part.mkdir(parents=True)
    (log_dir / "meta.properties").write_text("version=0\nbroker.id=0\n")
    offset = 0
    mtime = TIMESTAMP
    open_txns: set[int] = set()
    for number, entries in enumerate(spec.segments):
        base = offset
        data = bytearray()
        for entry in entries:
            offset += entry.gap
            encoded, taken = encode(entry, offset, spec.legacy_only)
            data += encoded
            offset += taken
            if not spec.legacy_only:
                _track(entry, open_txns)
        if number == len(spec.segments) - 1:
            for producer in sorted(open_txns):
                commit = spec.closing[producer]
                if commit is not None:
                    data += marker(offset, PRODUCERS[producer], 0, commit)
                    offset += 1
        if offset == base:
            offset += 1  # an empty segment: the next one must start above it
        if number == len(spec.segments) - 1 and spec.truncated_tail:
            data += legacy(offset, commit_key(0), commit_value(offset))[:-5]
        path = part / f"{base:020d}.log"
        path.write_bytes(bytes(data))
        mtime += spec.mtime_steps[number] if number < len(spec.mtime_steps) else 0
        os.utime(path, ns=(mtime * 10**6, mtime * 10**6))
    for name, value in (
        ("cleaner-offset-checkpoint", spec.checkpoint),
        ("log-start-offset-checkpoint", spec.log_start),
    ):
        if value is not None:
            (log_dir / name).write_text(f"0\n1\n__consumer_offsets 0 {value}\n")
    return log_dir


def _track(entry: Entry, open_txns: set[int]) -> None:
    """Which producers have a transaction open after ``entry``: a control record that decodes
    ends it, whatever its type (``ProducerStateManager``)."""
    if entry.kind in ("v2-txn", "v2-txn-gzip"):
        open_txns.add(entry.producer)
    elif entry.kind in ("marker", "txn+marker") or (
        entry.kind == "odd-control" and entry.odd % len(ODD_CONTROLS) in DECODABLE_ODD_CONTROLS
    ):
        open_txns.discard(entry.producer)


# --- strategies ---------------------------------------------------------------------------------

records_spec = st.lists(
    st.tuples(
        st.integers(0, KEYLESS),  # KEYLESS: no key
        st.sampled_from([False, False, False, True]),  # tombstone
    ),
    min_size=1,
    max_size=6,
).map(tuple)


def entries(
    kinds: tuple[str, ...] = KINDS,
    odd_controls: tuple[int, ...] = tuple(range(len(ODD_CONTROLS))),
) -> st.SearchStrategy[Entry]:
    """Entries of ``kinds``; ``odd-control`` ones write the odd control records numbered
    ``odd_controls``."""
    return st.builds(
        Entry,
        kind=st.sampled_from(kinds),
        records=records_spec,
        producer=st.integers(0, len(PRODUCERS) - 1),
        epoch=st.sampled_from([0, 0, 0, 1]),
        commit=st.booleans(),
        gap=st.sampled_from([0, 0, 0, 0, 0, 1, 3]),
        odd=st.sampled_from(odd_controls),
        keep_producer=st.booleans(),
    )


def partitions(
    entry: st.SearchStrategy[Entry] | None = None, max_segments: int = 5, max_entries: int = 10
) -> st.SearchStrategy[Partition]:
    """Partitions of 2 to ``max_segments`` segments of up to ``max_entries`` entries each."""
    return st.builds(
        Partition,
        segments=st.lists(
            st.lists(entries() if entry is None else entry, max_size=max_entries).map(tuple),
            min_size=2,
            max_size=max_segments,
        ).map(tuple),
        mtime_steps=st.lists(
            st.sampled_from([0, 1_000, 60_000, 10**8]),
            min_size=max_segments,
            max_size=max_segments,
        ).map(tuple),
        checkpoint=st.one_of(st.none(), st.none(), st.integers(0, max_segments * max_entries)),
        log_start=st.one_of(st.none(), st.none(), st.integers(0, max_segments * max_entries // 2)),
        truncated_tail=st.booleans(),
        legacy_only=st.sampled_from([False, False, False, True]),
        closing=st.tuples(*[st.sampled_from([False, False, True, None])] * len(PRODUCERS)),
    )
