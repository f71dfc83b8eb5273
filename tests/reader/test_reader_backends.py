"""The two record readers give the same columns: the C parser (``native``) and the Python
reference decoders (``python``), on every real segment, on entries built to sit on every edge,
across window and chunk boundaries; and the C parser takes exactly the entries the reference
decoders accept (what it refuses, they report).
"""

from __future__ import annotations

import struct
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from offsets_auditor import _native
from offsets_auditor.errors import DecodeError
from offsets_auditor.reader.columns import BatchColumns, Chunk, KeyStatus, ValueStatus
from offsets_auditor.reader.options import Backend, Limits
from offsets_auditor.reader.python_reader import decode_entry
from offsets_auditor.reader.segment import BytesSource, read_segment
from tests.conftest import FIXTURES
from tests.support.segments import (
    CASES,
    GZIP,
    commit_key,
    commit_value,
    commits_v2,
    control_batch,
    group_metadata_key,
    group_metadata_value,
    gzip_wrapper_with_bad_inner_crc,
    kafka_python_legacy,
    kafka_python_v2,
    legacy,
    mixed_segment,
    v2_batch,
    v2_record,
)

#: every fixture with a log dir
FIXTURE_DIRS = sorted(p for p in FIXTURES.glob("kafka-*/*") if any(p.glob("kafka-logs*")))


def read(data: bytes, backend: Backend, limits: Limits) -> tuple[list[Chunk], list[DecodeError]]:
    chunks: list[Chunk] = []
    errors: list[DecodeError] = []
    for item in read_segment(BytesSource(data), file="seg.log", backend=backend, limits=limits):
        (errors if isinstance(item, DecodeError) else chunks).append(item)
    return chunks, errors


def record_rows(chunks: list[Chunk]) -> list[tuple[Any, ...]]:
    """Every record's columns, with bytes and strings in place of positions and ids."""
    rows = []
    for c in chunks:
        r = c.records
        for i in range(len(r)):
            rows.append(
                (
                    int(c.batches.ordinal[r.batch[i]]),
                    int(r.offset[i]),
                    int(r.timestamp[i]),
                    int(r.magic[i]),
                    c.key_bytes(i),
                    c.value_bytes(i),
                    bytes(r.digest[i]),
                    int(r.key_type[i]),
                    int(r.key_status[i]),
                    c.strings[int(r.group[i])] if r.group[i] >= 0 else None,
                    c.strings[int(r.topic[i])] if r.topic[i] >= 0 else None,
                    int(r.partition[i]),
                    int(r.value_version[i]),
                    int(r.value_status[i]),
                    int(r.committed_offset[i]),
                    int(r.leader_epoch[i]),
                    int(r.commit_timestamp[i]),
                    int(r.expire_timestamp[i]),
                    c.metadata_bytes(i),
                    int(r.control_type[i]),
                    int(r.coordinator_epoch[i]),
                )
            )
    return rows


def batch_rows(chunks: list[Chunk]) -> list[tuple[int, ...]]:
    return [
        tuple(int(getattr(c.batches, name)[i]) for name, _ in BatchColumns.DTYPES)
        for c in chunks
        for i in range(len(c.batches))
    ]


def error_rows(errors: list[DecodeError]) -> list[tuple[Any, ...]]:
    return [(type(e).__name__, e.message, e.field, e.position, e.file) for e in errors]


def assert_agree(data: bytes, **limits: int) -> tuple[list[Chunk], list[DecodeError]]:
    """Both readers on ``data``: the same records, batches (chunk by chunk) and errors."""
    chosen = Limits(**limits)
    native, native_errors = read(data, Backend.NATIVE, chosen)
    python, python_errors = read(data, Backend.PYTHON, chosen)
    assert error_rows(native_errors) == error_rows(python_errors)
    assert record_rows(native) == record_rows(python)
    assert batch_rows(native) == batch_rows(python)
    assert [len(c.records) for c in native] == [len(c.records) for c in python]
    return native, native_errors


@pytest.mark.parametrize("fixture", FIXTURE_DIRS, ids=lambda p: str(p.relative_to(FIXTURES)))
def test_every_real_segment_reads_the_same(fixture: Path) -> None:
    # a broker's log dirs, or (the cluster fixtures) each broker's: broker-N/kafka-logs; or,
    # a scenario of several copies of one dir (running-broker: live/, killed/), each copy's
    segments = sorted(fixture.glob("kafka-logs*/*/*.log")) + sorted(
        fixture.glob("broker-*/kafka-logs*/*/*.log")
    ) or sorted(fixture.glob("*/kafka-logs*/*/*.log"))
    assert segments
    for segment in segments:
        _chunks, errors = assert_agree(segment.read_bytes())
        # damaged on purpose (corrupt-segments, uncleanable: each with its damage.json), or a
        # killed broker's, or a copy taken while it appended: may end in a partial batch
        damaged = (
            "unclean" in fixture.name
            or (fixture / "damage.json").exists()
            or fixture.name == "running-broker"
        )
        if "__consumer_offsets" in segment.parent.name and not damaged:
            assert not errors, segment


@pytest.mark.parametrize(("name", "build", "valid"), CASES, ids=[c[0] for c in CASES])
def test_the_c_reader_takes_exactly_what_the_reference_accepts(
    name: str, build: Callable[[], bytes], valid: bool
) -> None:
    """Each entry between two ordinary ones: both readers agree; the C reader takes it (all
    its records in columns, no error) exactly when the reference decoder decodes it with
    nothing to report (a CRC that does not match is the reference decoder's to report)."""
    entry = build()
    before, after = legacy(0, commit_key(), commit_value(1)), commits_v2(100, 2)
    data = before + entry + after
    assert_agree(data)
    assert_agree(data, window_bytes=len(before) + 20)
    try:
        batch = decode_entry(memoryview(entry), 0, 0, Limits().decompress_limit)
        accepted = batch.checksum_error is None
    except DecodeError:
        accepted = False
    assert c_takes(entry) == accepted, name


@pytest.mark.parametrize(
    ("entry", "field"),
    [
        (legacy(7, commit_key(), commit_value(1), crc=1), "crc"),
        (v2_batch(7, [v2_record(0, commit_key(), commit_value(3))], crc=3), "crc"),
        (gzip_wrapper_with_bad_inner_crc(9), "value.inner_messages.crc"),
    ],
    ids=["v0", "v2", "inner message of a v1 gzip wrapper"],
)
def test_an_entry_whose_crc_does_not_match_is_read_as_the_broker_reads_it(
    entry: bytes, field: str
) -> None:
    """Kafka's cleaner and coordinator load never check CRCs: the records are in the columns,
    and the mismatch is reported once, at the entry."""
    before = legacy(0, commit_key(), commit_value(1))
    chunks, errors = assert_agree(before + entry + commits_v2(100, 2))
    assert [(type(e).__name__, e.field, e.position) for e in errors] == [
        ("ChecksumError", field, len(before))
    ]
    batch = decode_entry(memoryview(entry), 0, 0, Limits().decompress_limit)
    offsets = [int(o) for c in chunks for o in c.records.offset]
    assert offsets == [0, *(r.offset for r in batch.records), 100, 101]


def c_takes(entry: bytes) -> bool:
    """Whether the C reader consumes ``entry`` whole (compressed entries once given their
    decompressed payload)."""
    from offsets_auditor.reader.native_reader import COMPRESSED, DONE
    from offsets_auditor.records.compression import decompress

    reader = _native.Reader(_native.StringTable())
    next_rel, status = reader.take(entry, 0, len(entry), 0, 0, 1 << 30)
    if status == COMPRESSED:
        start, end, codec, magic = reader.payload()
        try:
            data = decompress(codec, entry[start:end], magic=magic, limit=1 << 28)
        except DecodeError:
            return False
        return int(reader.take_compressed(data, 1)) == DONE
    return int(next_rel) == len(entry)


def test_mixed_segment() -> None:
    chunks, errors = assert_agree(mixed_segment())
    assert [type(e).__name__ for e in errors] == ["ChecksumError", "TruncatedError"]
    magics = [int(m) for c in chunks for m in c.batches.magic]
    # magic 0: 4 plain + gzip wrapper + 3 plain (the one with a bad CRC read all the same);
    # magic 1: 2 ours + 2 kafka-python + gzip wrapper; magic 2: 11 batches (control included)
    assert (magics.count(0), magics.count(1), magics.count(2)) == (8, 5, 11)


@pytest.mark.parametrize("window_bytes", [17, 18, 64, 100, 333, 1024, 4096])
def test_entries_across_window_edges(window_bytes: int) -> None:
    assert_agree(mixed_segment(), window_bytes=window_bytes)


@pytest.mark.parametrize("max_batch_bytes", [30, 100, 150, 250])
def test_entries_over_the_size_limit_are_errors(max_batch_bytes: int) -> None:
    _, errors = assert_agree(mixed_segment(), max_batch_bytes=max_batch_bytes)
    assert any("larger than the" in e.message for e in errors)


@pytest.mark.parametrize("max_chunk_records", [1, 2, 3, 7, 1 << 16])
def test_chunks_split_entries_the_same_way(max_chunk_records: int) -> None:
    """Entries with more records than a chunk holds (a 20-record v2 batch, a gzip wrapper of
    12, a gzip v2 batch of 9) are split over chunks, their rows repeated as ``continued``."""
    data = (
        mixed_segment()[:-30]
        + commits_v2(50, 20)
        + kafka_python_legacy(1, GZIP, 70, 12)
        + kafka_python_v2(GZIP, 82, 9)
    )
    chunks, _ = assert_agree(data, max_chunk_records=max_chunk_records)
    assert all(len(c.records) <= max_chunk_records for c in chunks)
    if max_chunk_records < 20:
        assert any(int(c.batches.continued.sum()) for c in chunks)


def test_what_the_columns_hold() -> None:
    """The reader decodes offset commits into columns and leaves the rest to the schemas."""
    data = (
        legacy(0, commit_key("g", "t", 3), commit_value(1, offset=42, metadata="m"))
        + legacy(1, commit_key(), None)
        + legacy(2, group_metadata_key("grp"), group_metadata_value())
        + legacy(3, commit_key(), commit_value(4))
        + legacy(4, None, commit_value(1))
        + v2_batch(5, [v2_record(0, commit_key(version=0), commit_value(3, leader_epoch=7))])
        + control_batch(6, producer_id=9)
    )
    chunks, errors = assert_agree(data)
    assert not errors
    r = chunks[0].records
    c = chunks[0]
    assert list(r.key_status) == [
        KeyStatus.OK,
        KeyStatus.OK,
        KeyStatus.OK,
        KeyStatus.OK,
        KeyStatus.NULL,
        KeyStatus.OK,
        KeyStatus.CONTROL,
    ]
    assert list(r.value_status) == [
        ValueStatus.OK,
        ValueStatus.NULL,
        ValueStatus.DEFERRED,  # group metadata: the schemas decode it
        ValueStatus.DEFERRED,  # OffsetCommitValue v4 (flexible): likewise
        ValueStatus.DEFERRED,  # a commit value, but its key is null
        ValueStatus.OK,
        ValueStatus.DEFERRED,  # a transaction marker: decoded into control_type instead
    ]
    assert (c.strings[int(r.group[0])], c.strings[int(r.topic[0])], int(r.partition[0])) == (
        b"g",
        b"t",
        3,
    )
    assert (int(r.committed_offset[0]), c.metadata_bytes(0), int(r.value_version[0])) == (
        42,
        b"m",
        1,
    )
    assert c.strings[int(r.group[2])] == b"grp" and int(r.topic[2]) == -1
    assert (int(r.leader_epoch[5]), int(r.key_type[5])) == (7, 0)
    assert (int(r.control_type[6]), int(r.coordinator_epoch[6])) == (1, 3)
    assert bytes(r.digest[4]) == bytes(16)
    assert int(r.expire_timestamp[5]) == -1 and int(r.expire_timestamp[0]) != -1


def test_ints_beyond_a_long_are_refused_by_both() -> None:
    entry = v2_batch(2**63 - 1, [v2_record(5, commit_key(), None)])
    _, errors = assert_agree(entry)
    assert [e.field for e in errors] == ["offsetDelta"]


def test_a_declared_length_of_2_31_allocates_nothing() -> None:
    """A CRC-valid v2 batch declaring 2^31 - 1 records over a few bytes: refused before any
    allocation in proportion to the count."""
    import tracemalloc

    entry = bytearray(v2_batch(0, [v2_record(0, commit_key(), None)]))
    struct.pack_into(">i", entry, 57, 2**31 - 1)
    from tests.support.segments import fix_crcs

    data = fix_crcs(bytes(entry))
    tracemalloc.start()
    _, errors = read(data, Backend.NATIVE, Limits())
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert [e.field for e in errors] == ["recordsCount"]
    assert peak < 4 * 1024 * 1024
