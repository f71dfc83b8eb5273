"""The benchmark segments (``benchmarks/generate.py``) are what a broker writes: checked with an
independent reader (kafka-python's ``MemoryRecords``) and with ours, on small samples."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest
from kafka.record.memory_records import MemoryRecords

from benchmarks.generate import SEGMENTS, ensure_segments, write_segment
from offsets_auditor.logdir import fs
from offsets_auditor.reader.options import Backend
from offsets_auditor.reader.summary import SegmentTotals, summarize_segment
from offsets_auditor.schemas import decode_key, decode_value

SAMPLE_BYTES = 256 * 1024


@pytest.fixture(scope="module")
def samples(tmp_path_factory: pytest.TempPathFactory) -> dict[int, Path]:
    return ensure_segments(tmp_path_factory.mktemp("bench"), SAMPLE_BYTES)


@pytest.mark.parametrize("magic", [spec.magic for spec in SEGMENTS])
def test_kafka_python_reads_every_record(samples: dict[int, Path], magic: int) -> None:
    data = samples[magic].read_bytes()
    assert SAMPLE_BYTES - 4096 < len(data) <= SAMPLE_BYTES
    records = MemoryRecords(data)
    expected_offset = 0
    batches = tombstones = 0
    while (batch := records.next_batch()) is not None:
        batches += 1
        assert batch.magic == magic
        assert batch.validate_crc()
        assert batch.compression_type == 0
        count = 0
        for record in batch:
            count += 1
            assert record.offset == expected_offset
            expected_offset += 1
            key = decode_key(record.key)
            assert key.key_type == "offset_commit" and key.version == 1
            assert key.group and key.topic and key.partition is not None
            if record.value is None:
                tombstones += 1
                continue
            value = decode_value(key, record.value)
            assert value.version in ((1,) if magic == 0 else (1, 3))
        assert 1 <= count <= (1 if magic == 0 else 20)
    assert records.valid_bytes() == len(data)  # nothing left over: whole entries only
    assert 0 < tombstones < expected_offset * 0.1
    assert batches > 100


@pytest.mark.parametrize("backend", list(Backend))
@pytest.mark.parametrize("magic", [spec.magic for spec in SEGMENTS])
def test_our_readers_read_them_without_errors(
    samples: dict[int, Path], magic: int, backend: Backend
) -> None:
    with fs.ReadOnlyFile(samples[magic]) as source:
        items = list(summarize_segment(source, backend=backend))
    totals = items[-1]
    assert isinstance(totals, SegmentTotals)
    assert len(items) == 1 and totals.errors == 0
    assert totals.valid_bytes == samples[magic].stat().st_size
    assert totals.magics == {str(magic): totals.batches}


def test_generation_is_deterministic(tmp_path: Path) -> None:
    digests = set()
    for name in ("a.log", "b.log"):
        write_segment(tmp_path / name, 2, 64 * 1024)
        digests.add(hashlib.sha256((tmp_path / name).read_bytes()).hexdigest())
    assert len(digests) == 1
