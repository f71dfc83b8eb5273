"""The C path of the cleaner emulation (``offsets_auditor._cleaner_speedups``) changes nothing
but speed.

1. Its MD5 is RFC 1321's (hashlib's).
2. Its ``SkimpyOffsetMap`` answers size / get / latestOffset like a dict of digests, refuses a
   put into a full map as Kafka does, and lays the slots out with Kafka's probe sequence.
3. On every real broker log dir under ``tests/fixtures``, the full ``audit --json`` report is the
   same with and without it.
4. On synthetic partitions (hypothesis: random keys, tombstones, keyless records, duplicate keys,
   compressed, idempotent, transactional and control batches, corrupt entries, several segments,
   dedupe buffers small enough to force several passes, every modelled era), the report is the
   same with and without it.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import os
import struct
import zlib
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from crc32c import crc32c
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from offsets_auditor.audit import audit_log_dir
from offsets_auditor.audit_report import report_json
from offsets_auditor.cleaner.config import CleanerConfig
from offsets_auditor.cli.main import main
from offsets_auditor.fastlane import ENV_SWITCH
from offsets_auditor.versions import KafkaVersion
from tests.conftest import FIXTURES

TIMESTAMP = 1_763_700_000_000
REAL_LOG_DIRS = sorted(
    d
    for d in FIXTURES.glob("kafka-*/*/kafka-logs")
    if (d.parent / "broker-server.properties").exists()
)


@pytest.fixture(scope="module")
def cs() -> ModuleType:
    return pytest.importorskip("offsets_auditor._cleaner_speedups")


# -- 1. MD5 --------------------------------------------------------------------------------------


@pytest.mark.parametrize("length", [0, 1, 3, 54, 55, 56, 57, 63, 64, 65, 119, 120, 128, 1000])
def test_md5_block_boundaries(cs: ModuleType, length: int) -> None:
    data = bytes(range(256)) * 4
    assert cs.md5(data[:length]) == hashlib.md5(data[:length]).digest()


@given(st.binary(max_size=300))
def test_md5_is_hashlib(key: bytes) -> None:
    cs = pytest.importorskip("offsets_auditor._cleaner_speedups")
    assert cs.md5(key) == hashlib.md5(key).digest()


@settings(max_examples=200)
@given(st.lists(st.binary(max_size=140), max_size=40))
def test_batched_md5_is_hashlib(keys: list[bytes]) -> None:
    """The SIMD lanes (16 or 8 keys at once, one or two blocks each, longer keys alone), at
    every width this CPU has."""
    cs = pytest.importorskip("offsets_auditor._cleaner_speedups")
    best = cs._simd(0)
    try:
        for width in (16, 8, 1):
            try:
                cs._simd(width)
            except ValueError:
                continue
            assert cs.md5_many(keys) == [hashlib.md5(k).digest() for k in keys], width
    finally:
        cs._simd(best)


@settings(max_examples=300)
@given(st.binary(max_size=600))
def test_entry_crcs_are_zlibs_and_crc32c(data: bytes) -> None:
    cs = pytest.importorskip("offsets_auditor._cleaner_speedups")
    assert cs._crc(data, False) == zlib.crc32(data)
    assert cs._crc(data, True) == crc32c(data)


# -- 2. the map ----------------------------------------------------------------------------------


def kafka_slot_order(ops: list[tuple[bytes, int]], slots: int) -> list[tuple[bytes, int]]:
    """A line-by-line Python twin of SkimpyOffsetMap.put: the (digest, offset) of every slot in
    slot order."""
    table: list[tuple[bytes, int] | None] = [None] * slots
    entries = 0
    for key, offset in ops:
        if entries >= slots:
            continue  # require(entries < slots) fails: nothing changes
        digest = hashlib.md5(key).digest()
        attempt = 0
        while True:
            at = min(attempt, 12)
            probe = int.from_bytes(digest[at : at + 4], "big") + max(0, attempt - 12)
            probe = (probe + 2**31) % 2**32 - 2**31  # Java int
            slot = (0 if probe == -(2**31) else abs(probe)) % slots
            current = table[slot]
            if current is None:
                table[slot] = (digest, offset)
                entries += 1
                break
            if current[0] == digest:
                table[slot] = (digest, offset)
                break
            attempt += 1
    return [t for t in table if t is not None]


@settings(max_examples=300, deadline=None)
@given(
    slots=st.integers(1, 40),
    ops=st.lists(
        st.tuples(
            st.sampled_from(["put", "get", "latest", "clear"]),
            st.binary(max_size=6),
            st.integers(-5, 2**63 - 1),
        ),
        max_size=120,
    ),
)
def test_map_is_a_dict_of_digests(slots: int, ops: list[tuple[str, bytes, int]]) -> None:
    cs = pytest.importorskip("offsets_auditor._cleaner_speedups")
    m = cs.SkimpyOffsetMap(slots)
    model: dict[bytes, int] = {}
    latest = -1
    puts: list[tuple[bytes, int]] = []
    for op, key, offset in ops:
        digest = hashlib.md5(key).digest()
        if op == "put":
            stored = m.put(key, offset)
            assert stored == (len(model) < slots)  # Kafka checks entries < slots first
            if stored:
                model[digest] = offset
                latest = offset
                puts.append((key, offset))
        elif op == "get":
            assert m.get(key) == model.get(digest, -1)
        elif op == "latest":
            m.update_latest_offset(offset)
            latest = offset
        else:
            m.clear()
            model.clear()
            latest = -1
            puts.clear()
        assert m.size == len(model)
        assert m.latest_offset == latest
    assert m.items() == kafka_slot_order(puts, slots)
    assert m.allocated_bytes in (0, slots * 24)


def test_full_map_and_bounded_get(cs: ModuleType) -> None:
    m = cs.SkimpyOffsetMap(3)
    assert [m.put(k, i) for i, k in enumerate([b"a", b"b", b"c"])] == [True] * 3
    assert m.put(b"d", 9) is False
    assert m.put(b"a", 9) is False  # the require runs before the lookup
    assert (m.size, m.get(b"a"), m.get(b"d"), m.latest_offset) == (3, 0, -1, 2)
    m.clear()
    assert (m.size, m.get(b"a"), m.latest_offset) == (0, -1, -1)


def test_offset_map_spills_into_the_dict_when_full(monkeypatch: pytest.MonkeyPatch) -> None:
    """A put into a full Kafka map (the broker refuses it) carries on in the dict, so the map
    answers as the pure-Python one would."""
    from offsets_auditor.cleaner.offset_map import OffsetMap

    answers = []
    for switch in ("1", "0"):
        monkeypatch.setenv(ENV_SWITCH, switch)
        m = OffsetMap(3 * 24, 2.0)
        for i, key in enumerate([b"a", b"b", b"c", b"d", b"a"]):
            m.put(key, i)
        answers.append((m.size, m.latest_offset, [m.get(k) for k in [b"a", b"d", b"e"]]))
        m.clear()
        m.put(b"x", 7)
        answers.append((m.size, m.latest_offset, m.get(b"x")))
    assert answers[:2] == answers[2:]


@settings(max_examples=100, deadline=None)
@given(
    keys=st.lists(st.integers(0, 3000), max_size=2500),
    limit=st.sampled_from([0, 16 * 1024, 32 * 1024]),
)
def test_bounded_key_set_counts_part_by_part(keys: list[int], limit: int) -> None:
    """A key set within a byte limit overflows rather than grow; the parts of a split count
    add up to the distinct keys."""
    cs = pytest.importorskip("offsets_auditor._cleaner_speedups")
    raw = [str(k).encode() for k in keys]
    whole = cs.DigestSet(limit)
    for key in raw:
        whole.add(key)
    assert whole.allocated_bytes <= max(limit, 16 * 1024) or limit == 0
    if not whole.overflowed:
        assert whole.size == len(set(raw))
    parts = [cs.DigestSet(limit, 4, part) for part in range(4)]
    for key in raw:
        assert sorted(p.add(key) >= 0 for p in parts) == [False, False, False, True]
    if not any(p.overflowed for p in parts):
        assert sum(p.size for p in parts) == len(set(raw))


def test_needed_entries_split_into_parts_is_the_same(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The dedupe-buffer advice counted within the map's memory (several sweeps) equals the
    count in one unbounded set, and the pure-Python one."""
    from offsets_auditor.cleaner.partition_scan import distinct_keys, scan_partition
    from offsets_auditor.logdir import offsets_partitions, read_log_dir

    entries = [("v2", [(k, "value") for k in range(i, i + 5)], True) for i in range(0, 3000, 4)]
    log_dir = build_partition(
        tmp_path, [entries[:400], entries[400:], [("v0", [(3, "value")], True)]], 2
    )
    answers = []
    for switch, limit in (("1", 16 * 1024), ("1", 0), ("0", 0)):
        monkeypatch.setenv(ENV_SWITCH, switch)
        scan = scan_partition(offsets_partitions(read_log_dir(log_dir))[0])
        answers.append(distinct_keys(scan.partition, list(scan.segments), 3, 10**9, limit))
    assert answers[0] == answers[1] == answers[2]
    assert answers[0][0][-1] > 2 * 768  # more keys than one 16 KiB part holds: several sweeps


# -- 3. real broker log dirs ---------------------------------------------------------------------


def audit_json(log_dir: Path, capsys: pytest.CaptureFixture[str]) -> dict[str, Any]:
    version = log_dir.parent.parent.name.removeprefix("kafka-")
    now = max(int(p.stat().st_mtime * 1000) for p in log_dir.rglob("*.log")) + 60_000
    main(
        [
            "audit",
            str(log_dir),
            "--broker-config",
            str(log_dir.parent / "broker-server.properties"),
            "--kafka-version",
            version,
            "--json",
            "--now",
            str(now),
        ]
    )
    report: dict[str, Any] = json.loads(capsys.readouterr().out)
    return report


@pytest.mark.parametrize(
    "log_dir", REAL_LOG_DIRS, ids=[str(d.parent.relative_to(FIXTURES)) for d in REAL_LOG_DIRS]
)
def test_real_audits_are_the_same(
    cs: ModuleType,
    log_dir: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv(ENV_SWITCH, "1")
    fast = audit_json(log_dir, capsys)
    monkeypatch.setenv(ENV_SWITCH, "0")
    slow = audit_json(log_dir, capsys)
    assert fast == slow


# -- 4. synthetic partitions ---------------------------------------------------------------------


def legacy(
    offset: int, key: bytes | None, value: bytes | None, magic: int = 0, codec: int = 0
) -> bytes:
    body = bytes([magic, codec])
    if magic == 1:
        body += struct.pack(">q", TIMESTAMP + offset)
    body += struct.pack(">i", -1 if key is None else len(key)) + (key or b"")
    body += struct.pack(">i", -1 if value is None else len(value)) + (value or b"")
    return struct.pack(">qiI", offset, 4 + len(body), zlib.crc32(body)) + body


def varint(value: int) -> bytes:
    raw = ((value << 1) ^ (value >> 63)) & 0xFFFFFFFFFFFFFFFF
    out = bytearray()
    while raw >= 0x80:
        out.append((raw & 0x7F) | 0x80)
        raw >>= 7
    out.append(raw)
    return bytes(out)


def v2_record(delta: int, key: bytes | None, value: bytes | None) -> bytes:
    body = b"\x00" + varint(delta * 3) + varint(delta)
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
) -> bytes:
    raw = b"".join(v2_record(i, k, v) for i, (k, v) in enumerate(records))
    if attributes & 0x07 == 1:
        raw = gzip.compress(raw, mtime=0)
    rest = struct.pack(
        ">hiqqqhii",
        attributes,
        len(records) - 1,
        TIMESTAMP + base,
        TIMESTAMP + base + len(records),
        producer_id,
        0 if producer_id >= 0 else -1,
        -1,
        len(records),
    )
    rest += raw
    return struct.pack(">qiibI", base, 4 + 1 + 4 + len(rest), 0, 2, crc32c(rest)) + rest


def control(base: int, producer_id: int, commit: bool) -> bytes:
    key = struct.pack(">hh", 0, 1 if commit else 0)
    value = struct.pack(">hi", 0, 5)
    return v2_batch(base, [(key, value)], attributes=0x30, producer_id=producer_id)


def commit_key(group: str, partition: int) -> bytes:
    g, t = group.encode(), b"topic"
    return (
        struct.pack(">hh", 1, len(g))
        + g
        + struct.pack(">h", len(t))
        + t
        + struct.pack(">i", partition)
    )


def commit_value(offset: int) -> bytes:
    return struct.pack(">hqh", 1, offset, 0) + struct.pack(">qq", TIMESTAMP + offset, TIMESTAMP)


KINDS = ["v0", "v0", "v1", "v2", "v2", "v2-gzip", "v2-idempotent", "v2-txn", "corrupt"]

entry_spec = st.tuples(
    st.sampled_from(KINDS),
    st.lists(
        st.tuples(
            st.integers(0, 30),  # key id (30: keyless)
            st.sampled_from(["value", "value", "value", "tombstone"]),
        ),
        min_size=1,
        max_size=6,
    ),
    st.booleans(),  # txn: commit (True) or abort
)


def build_partition(
    root: Path, segments: list[list[tuple[str, list[tuple[int, str]], bool]]], magic_pref: int
) -> Path:
    log_dir = root / "kafka-logs"
    part = log_dir / "__consumer_offsets-0"
    part.mkdir(parents=True)
    (log_dir / "meta.properties").write_text("version=0\nbroker.id=0\n")
    offset = 0
    for number, entries in enumerate(segments):
        base = offset
        data = bytearray()
        for kind, recs, commit in entries:
            if magic_pref == 0 and kind.startswith("v2"):
                kind = "v0"
            pairs = [
                (
                    None if k == 30 else commit_key(f"group-{k % 7}", k),
                    None if what == "tombstone" else commit_value(offset + i),
                )
                for i, (k, what) in enumerate(recs)
            ]
            if kind in ("v0", "v1"):
                for key, value in pairs:
                    data += legacy(offset, key, value, magic=0 if kind == "v0" else 1)
                    offset += 1
            elif kind == "corrupt":
                entry = bytearray(legacy(offset, *pairs[0]))
                entry[-1] ^= 0xFF
                data += entry
                offset += 1
            elif kind == "v2-txn":
                data += v2_batch(offset, pairs, attributes=0x10, producer_id=7)
                offset += len(pairs)
                data += control(offset, 7, commit)
                offset += 1
            else:
                data += v2_batch(
                    offset,
                    pairs,
                    attributes=1 if kind == "v2-gzip" else 0,
                    producer_id=3 if kind == "v2-idempotent" else -1,
                )
                offset += len(pairs)
        path = part / f"{base:020d}.log"
        path.write_bytes(bytes(data))
        os.utime(path, ns=((TIMESTAMP + number * 1000) * 10**6,) * 2)
    return log_dir


def audit_both(log_dir: Path, config: CleanerConfig, monkeypatch: pytest.MonkeyPatch) -> None:
    reports = []
    for switch in ("1", "0"):
        monkeypatch.setenv(ENV_SWITCH, switch)
        report = report_json([audit_log_dir(log_dir, config, TIMESTAMP + 10**9)])
        reports.append(json.dumps(report, sort_keys=True))
    assert reports[0] == reports[1]


@settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    segments=st.lists(st.lists(entry_spec, min_size=0, max_size=12), min_size=2, max_size=5),
    version=st.sampled_from(["0.9.0.1", "0.10.0.1", "0.10.1.0", "2.3.0", "2.5.0", "3.0.0"]),
    slots=st.integers(2, 40),
    magic=st.sampled_from([0, 2]),
    ratio=st.sampled_from([0.01, 0.5]),
)
def test_synthetic_partitions_are_the_same(
    tmp_path_factory: pytest.TempPathFactory,
    monkeypatch: pytest.MonkeyPatch,
    segments: list[list[tuple[str, list[tuple[int, str]], bool]]],
    version: str,
    slots: int,
    magic: int,
    ratio: float,
) -> None:
    pytest.importorskip("offsets_auditor._cleaner_speedups")
    log_dir = build_partition(tmp_path_factory.mktemp("synthetic"), segments, magic)
    config = CleanerConfig(
        kafka_version=KafkaVersion.parse(version),
        dedupe_buffer_size=slots * 24,
        min_cleanable_ratio=ratio,
        segment_bytes=2048,
    )
    audit_both(log_dir, config, monkeypatch)


def test_synthetic_multi_pass_happens(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The synthetic setup does reach several passes (so the property above covers them)."""
    entries = [("v2", [(k, "value") for k in range(5)], True) for _ in range(6)]
    log_dir = build_partition(tmp_path, [entries, entries, [("v0", [(1, "value")], True)]], 2)
    config = CleanerConfig(
        kafka_version=KafkaVersion.parse("2.3.0"),
        dedupe_buffer_size=4 * 24,
        min_cleanable_ratio=0.01,
    )
    monkeypatch.setenv(ENV_SWITCH, "1")
    (partition,) = audit_log_dir(log_dir, config, TIMESTAMP + 10**9).partitions
    assert len(partition.passes) > 1
    audit_both(log_dir, config, monkeypatch)
