"""Tests for ``offsets_auditor.records.compression``.

Payloads come from an independent encoder (kafka-python's record builders and codecs, plus the
codec libraries' own compressors); each expected value is the uncompressed build of the same
records, so a decoder that merely echoes its input, or drops or reorders bytes, fails.
The Kafka-behaviour tests cite the Kafka (or snappy-java) source they pin down.
"""

from __future__ import annotations

import gzip
import struct
import time
import tracemalloc
import zlib
from collections.abc import Callable, Iterator
from functools import partial
from pathlib import Path

import cramjam
import lz4.block
import lz4.frame
import pytest
import snappy
import xxhash
import zstandard
from hypothesis import given, settings
from hypothesis import strategies as st
from kafka import codec as kafka_codec
from kafka.record.default_records import DefaultRecordBatch, DefaultRecordBatchBuilder
from kafka.record.legacy_records import LegacyRecordBatch, LegacyRecordBatchBuilder

from offsets_auditor.errors import CorruptError
from offsets_auditor.records.compression import Codec, decompress

MiB = 1 << 20
GiB = 1 << 30
LIMIT = 64 * MiB
BATCH_SIZE = 1 << 24
V2_RECORDS_OFFSET = 61  # DefaultRecordBatch header size: records start here
LEGACY_HEADER = {0: struct.Struct(">qiIbb"), 1: struct.Struct(">qiIbbq")}

# --- records like real __consumer_offsets commits ---------------------------------------------


def _string(text: str) -> bytes:
    raw = text.encode()
    return struct.pack(">h", len(raw)) + raw


def offset_commit_key(group: str, topic: str, partition: int) -> bytes:
    """OffsetCommitKey v1: version, group, topic, partition (docs/kafka-internals.md §2.2)."""
    return struct.pack(">h", 1) + _string(group) + _string(topic) + struct.pack(">i", partition)


def offset_commit_value(offset: int, timestamp: int) -> bytes:
    """OffsetCommitValue v1: version, offset, metadata, commit and expire timestamps."""
    return (
        struct.pack(">hq", 1, offset)
        + _string("")
        + struct.pack(">qq", timestamp, timestamp + 86_400_000)
    )


def commit_records(count: int = 24) -> list[tuple[int, int, bytes, bytes | None]]:
    """(offset, timestamp, key, value) for ``count`` commits; the last one is a tombstone."""
    groups = ["payments-etl", "web-analytics", "exactly-once-etl"]
    records: list[tuple[int, int, bytes, bytes | None]] = []
    for i in range(count):
        timestamp = 1_700_000_000_000 + i * 1_000
        key = offset_commit_key(groups[i % 3], f"orders-{i % 2}", i % 4)
        records.append((i, timestamp, key, offset_commit_value(1_000 + 7 * i, timestamp)))
    offset, timestamp, key, _ = records[-1]
    records[-1] = (offset, timestamp, key, None)
    return records


RECORDS = commit_records()

# --- building payloads with kafka-python ------------------------------------------------------


def build_legacy(
    magic: int, codec: int, records: list[tuple[int, int, bytes, bytes | None]]
) -> bytes:
    builder = LegacyRecordBatchBuilder(magic, codec, BATCH_SIZE)
    for offset, timestamp, key, value in records:
        assert builder.append(offset, timestamp, key, value) is not None
    return bytes(builder.build())


def legacy_wrapper_value(built: bytes, magic: int) -> tuple[int, bytes]:
    """(codec bits, value) of the single wrapper message kafka-python built."""
    header = LEGACY_HEADER[magic]
    _, size, _, stored_magic, attributes, *_ = header.unpack_from(built, 0)
    assert stored_magic == magic and size == len(built) - 12
    pos = header.size
    (key_length,) = struct.unpack_from(">i", built, pos)
    pos += 4 + max(key_length, 0)
    (value_length,) = struct.unpack_from(">i", built, pos)
    pos += 4
    assert pos + value_length == len(built)
    return attributes & 0x07, built[pos:]


def parse_legacy_set(data: bytes, magic: int) -> Iterator[tuple[int, bytes | None, bytes | None]]:
    """(offset, key, value) of each entry of an uncompressed legacy message set."""
    header = LEGACY_HEADER[magic]
    pos = 0
    while pos < len(data):
        offset, size, _, entry_magic, attributes, *_ = header.unpack_from(data, pos)
        assert entry_magic == magic and attributes & 0x07 == 0
        end = pos + 12 + size
        field = pos + header.size
        fields: list[bytes | None] = []
        for _ in range(2):
            (length,) = struct.unpack_from(">i", data, field)
            field += 4
            fields.append(None if length < 0 else data[field : field + length])
            field += max(length, 0)
        assert field == end
        yield offset, fields[0], fields[1]
        pos = end


def build_v2(codec: int, records: list[tuple[int, int, bytes, bytes | None]]) -> bytes:
    builder = DefaultRecordBatchBuilder(
        magic=2,
        compression_type=codec,
        is_transactional=False,
        producer_id=-1,
        producer_epoch=-1,
        base_sequence=-1,
        batch_size=BATCH_SIZE,
    )
    for offset, timestamp, key, value in records:
        assert builder.append(offset, timestamp, key, value, []) is not None
    return bytes(builder.build())


def v2_codec(built: bytes) -> int:
    (attributes,) = struct.unpack_from(">h", built, 21)
    return int(attributes) & 0x07


def lz4_hc(descriptor: bytes) -> int:
    return (xxhash.xxh32_intdigest(descriptor) >> 8) & 0xFF


def lz4_frame(data: bytes, **options: object) -> bytes:
    """A Kafka-compatible LZ4 frame (independent blocks) from the lz4 library."""
    return bytes(lz4.frame.compress(data, block_linked=False, **options))


def xerial_chunks(payload: bytes) -> list[int]:
    """Chunk lengths of an xerial stream (test-side parser)."""
    assert payload[:8] == b"\x82SNAPPY\x00"
    pos, lengths = 16, []
    while pos < len(payload):
        (length,) = struct.unpack_from(">i", payload, pos)
        lengths.append(length)
        pos += 4 + length
    assert pos == len(payload)
    return lengths


def gzip_member(
    data: bytes, *, flags: int = 0, extra: bytes = b"", name: bytes = b"", hcrc: int | None = None
) -> bytes:
    """A gzip member with optional header fields, built by hand (RFC 1952)."""
    header = struct.pack("<HBBIBB", 0x8B1F, 8, flags, 0, 0, 255)
    if flags & 0x04:
        header += struct.pack("<H", len(extra)) + extra
    if flags & 0x08:
        header += name + b"\x00"
    if flags & 0x02:
        header += struct.pack("<H", zlib.crc32(header) & 0xFFFF if hcrc is None else hcrc)
    deflater = zlib.compressobj(6, zlib.DEFLATED, -zlib.MAX_WBITS)
    body = deflater.compress(data) + deflater.flush()
    return header + body + struct.pack("<II", zlib.crc32(data), len(data) & 0xFFFFFFFF)


def zstd_streaming(data: bytes) -> bytes:
    """A zstd frame without content size, as zstd-jni's streaming output writes it."""
    compressor = zstandard.ZstdCompressor(write_content_size=False).compressobj()
    frame = compressor.compress(data) + compressor.flush()
    assert zstandard.frame_content_size(frame) == -1
    return frame


def corrupt(call: Callable[[], bytes], *, field: str = "compressed payload") -> CorruptError:
    with pytest.raises(CorruptError) as caught:
        call()
    assert caught.value.field == field
    assert caught.value.position is None
    return caught.value


# --- 1. every format x codec, from kafka-python ----------------------------------------------

LEGACY_CASES = [
    (magic, codec) for magic in (0, 1) for codec in (Codec.GZIP, Codec.SNAPPY, Codec.LZ4)
]


@pytest.mark.parametrize(
    ("magic", "codec"), LEGACY_CASES, ids=lambda v: str(getattr(v, "label", v))
)
def test_legacy_wrapper_value_decompresses_to_the_inner_message_set(
    magic: int, codec: Codec
) -> None:
    built = build_legacy(magic, codec, RECORDS)
    codec_bits, payload = legacy_wrapper_value(built, magic)
    assert codec_bits == codec

    inner = decompress(codec, payload, magic=magic, limit=LIMIT)

    assert inner == build_legacy(magic, Codec.NONE, RECORDS)
    ours = list(parse_legacy_set(inner, magic))
    assert [(o, k, v) for o, _, k, v in RECORDS] == ours
    theirs = list(LegacyRecordBatch(built, magic))
    assert [(r.key, r.value) for r in theirs] == [(k, v) for _, k, v in ours]


@pytest.mark.parametrize("codec", [Codec.GZIP, Codec.SNAPPY, Codec.LZ4, Codec.ZSTD], ids=str)
def test_v2_records_section_decompresses_to_the_uncompressed_records(codec: Codec) -> None:
    built = build_v2(codec, RECORDS)
    assert v2_codec(built) == codec  # kafka-python sends uncompressed if it does not shrink

    records = decompress(codec, memoryview(built)[V2_RECORDS_OFFSET:], magic=2, limit=LIMIT)

    plain = build_v2(Codec.NONE, RECORDS)
    assert records == plain[V2_RECORDS_OFFSET:]
    # kafka-python's reader over our bytes, spliced back under the compressed batch's header
    spliced = bytearray(built[:V2_RECORDS_OFFSET] + records)
    struct.pack_into(">h", spliced, 21, 0)
    struct.pack_into(">i", spliced, 8, len(spliced) - 12)
    decoded = [(r.offset, r.key, r.value) for r in DefaultRecordBatch(spliced)]
    assert decoded == [(o, k, v) for o, _, k, v in RECORDS]
    assert decoded == [(r.offset, r.key, r.value) for r in DefaultRecordBatch(built)]


def test_none_returns_the_payload_bytes() -> None:
    payload = build_v2(Codec.NONE, RECORDS)[V2_RECORDS_OFFSET:]
    result = decompress(Codec.NONE, memoryview(payload), magic=2, limit=len(payload))
    assert type(result) is bytes and result == payload


def test_codec_labels_are_kafka_names() -> None:
    assert [c.label for c in Codec] == ["none", "gzip", "snappy", "lz4", "zstd"]
    assert [int(c) for c in Codec] == [0, 1, 2, 3, 4]


# --- 2. LZ4 header checksum per magic (KafkaLZ4BlockInputStream / Lz4BlockInputStream) --------


def test_kafka_python_writes_the_broken_magic0_hc_and_only_magic0_accepts_it() -> None:
    _, payload = legacy_wrapper_value(build_legacy(0, Codec.LZ4, RECORDS), 0)
    assert payload[4] & 0x08 == 0  # lz4_encode_old_kafka strips the content size
    assert payload[6] == lz4_hc(payload[0:6])  # hash over magic+FLG+BD (KAFKA-3160)
    assert payload[6] != lz4_hc(payload[4:6])

    assert decompress(Codec.LZ4, payload, magic=0, limit=LIMIT) == build_legacy(0, 0, RECORDS)
    error = corrupt(lambda: decompress(Codec.LZ4, payload, magic=1, limit=LIMIT))
    assert "lz4" in error.message and "descriptor" in error.message
    corrupt(lambda: decompress(Codec.LZ4, payload, magic=2, limit=LIMIT))


def test_correct_hc_frame_decodes_under_every_magic() -> None:
    inner = build_legacy(1, Codec.NONE, RECORDS)
    _, payload = legacy_wrapper_value(build_legacy(1, Codec.LZ4, RECORDS), 1)
    assert payload[4] & 0x08  # kafka-python's lz4 frames carry the content size
    assert payload[14] == lz4_hc(payload[4:14])  # FLG, BD, 8-byte content size
    for magic in (0, 1, 2):
        assert decompress(Codec.LZ4, payload, magic=magic, limit=LIMIT) == inner


def test_lz4_magic0_accepts_any_hc_but_requires_the_byte() -> None:
    frame = bytearray(lz4_frame(b"abc" * 100, store_size=False))
    frame[6] ^= 0x5A
    assert decompress(Codec.LZ4, bytes(frame), magic=0, limit=LIMIT) == b"abc" * 100
    corrupt(lambda: decompress(Codec.LZ4, bytes(frame[:6]), magic=0, limit=LIMIT))


def test_lz4_frame_rules_follow_kafka() -> None:
    data = bytes(range(256)) * 600  # > 64 KiB: several blocks
    checked = lz4_frame(data, block_checksum=True, content_checksum=True)
    assert decompress(Codec.LZ4, checked, magic=1, limit=LIMIT) == data
    # block checksums are verified ...
    flipped = bytearray(checked)
    flipped[-8 - 4] ^= 1  # last byte of the last block's checksum (before end mark, content sum)
    corrupt(lambda: decompress(Codec.LZ4, bytes(flipped), magic=1, limit=LIMIT))
    # ... the content checksum is not ("TODO: verify this content checksum")
    unchecked = bytearray(checked)
    unchecked[-1] ^= 0xFF
    assert decompress(Codec.LZ4, bytes(unchecked), magic=1, limit=LIMIT) == data
    corrupt(lambda: decompress(Codec.LZ4, checked[:-1], magic=1, limit=LIMIT))  # but it is read
    # one frame only: bytes after the end mark are ignored; a missing end mark is an error
    plain = lz4_frame(data)
    assert decompress(Codec.LZ4, plain + b"trailing", magic=2, limit=LIMIT) == data
    corrupt(lambda: decompress(Codec.LZ4, plain[:-4], magic=2, limit=LIMIT))
    # dependent blocks are unsupported
    linked = bytes(lz4.frame.compress(data, block_linked=True))
    error = corrupt(lambda: decompress(Codec.LZ4, linked, magic=2, limit=LIMIT))
    assert "dependent" in error.message


def test_lz4_stored_uncompressed_block() -> None:
    data = bytes(range(200))
    flg, bd = 0x60, 0x40
    frame = struct.pack("<IBB", 0x184D2204, flg, bd) + bytes([lz4_hc(bytes([flg, bd]))])
    frame += struct.pack("<I", 0x80000000 | len(data)) + data + struct.pack("<I", 0)
    assert decompress(Codec.LZ4, frame, magic=2, limit=LIMIT) == data
    too_big = frame[:7] + struct.pack("<I", 0x80000000 | (64 * 1024 + 1))
    corrupt(lambda: decompress(Codec.LZ4, too_big, magic=2, limit=LIMIT))


# --- 3. snappy: xerial framing and raw blocks (snappy-java SnappyInputStream 1.1.10.5) -------


def test_xerial_multi_chunk_payload() -> None:
    data = b"".join(
        offset_commit_key(f"g{i}", "orders", i) + offset_commit_value(i, i) for i in range(3000)
    )
    assert len(data) > 3 * 32 * 1024
    payload = kafka_codec.snappy_encode(data)
    assert len(xerial_chunks(payload)) >= 3
    assert decompress(Codec.SNAPPY, payload, magic=2, limit=LIMIT) == data
    assert decompress(Codec.SNAPPY, payload, magic=0, limit=LIMIT) == data


def test_headerless_raw_snappy_block() -> None:
    data = build_legacy(0, Codec.NONE, RECORDS)
    for raw in (snappy.compress(data), bytes(cramjam.snappy.compress_raw(data))):
        assert raw[:8] != b"\x82SNAPPY\x00"
        assert decompress(Codec.SNAPPY, raw, magic=0, limit=LIMIT) == data


def test_xerial_stream_edges() -> None:
    a, b = b"first " * 1000, b"second " * 1000
    first, second = kafka_codec.snappy_encode(a), kafka_codec.snappy_encode(b)
    assert decompress(Codec.SNAPPY, first + second, magic=1, limit=LIMIT) == a + b
    assert decompress(Codec.SNAPPY, first + b"\x00\x01\x02", magic=1, limit=LIMIT) == a
    bad_header = b"\x82SNA" + b"XXXX" + struct.pack(">ii", 1, 1) + b"junk"
    assert decompress(Codec.SNAPPY, first + bad_header, magic=1, limit=LIMIT) == a
    assert decompress(Codec.SNAPPY, first[:16], magic=1, limit=LIMIT) == b""
    corrupt(lambda: decompress(Codec.SNAPPY, first[:-1], magic=1, limit=LIMIT))
    corrupt(lambda: decompress(Codec.SNAPPY, first + b"\x82SNAPPY", magic=1, limit=LIMIT))
    corrupt(
        lambda: decompress(Codec.SNAPPY, first[:16] + b"\xff\xff\xff\xfe", magic=1, limit=LIMIT)
    )
    corrupt(
        lambda: decompress(Codec.SNAPPY, first[:16] + b"\x00\x00\x00\x00", magic=1, limit=LIMIT)
    )
    error = corrupt(lambda: decompress(Codec.SNAPPY, b"", magic=1, limit=LIMIT))
    assert "snappy" in error.message


# --- 4. concatenation: gzip members (GZIPInputStream), zstd frames (zstd-jni) -----------------


def test_concatenated_gzip_members() -> None:
    parts = [b"alpha " * 500, b"", b"gamma " * 300]
    payload = b"".join(gzip.compress(p) for p in parts)
    assert decompress(Codec.GZIP, payload, magic=1, limit=LIMIT) == b"".join(parts)


def test_gzip_trailing_garbage_is_ignored_like_java() -> None:
    data = b"payload " * 100
    member = gzip.compress(data)
    for garbage in (b"\x00", b"\x1f", b"\x1f\x8b", b"\x1f\x8b\x07" + b"\x00" * 20, b"garbage" * 9):
        assert decompress(Codec.GZIP, member + garbage, magic=0, limit=LIMIT) == data


def test_gzip_errors() -> None:
    data = b"payload " * 100
    member = gzip.compress(data)
    for broken in (
        member[:-1],  # trailer cut
        member[:-9],  # inside the deflate stream
        member[:-8] + struct.pack("<II", zlib.crc32(data) ^ 1, len(data)),
        member[:-8] + struct.pack("<II", zlib.crc32(data), len(data) + 1),
        member + member[:20],  # a valid next header, then its body ends
        b"\x1f\x8c" + member[2:],
        b"",
    ):
        error = corrupt(partial(decompress, Codec.GZIP, broken, magic=2, limit=LIMIT))
        assert error.message.startswith("gzip: ")


def test_gzip_header_fields_like_java() -> None:
    data = b"header fields " * 50
    for member in (
        gzip_member(data, flags=0x04, extra=b"xy" * 10),
        gzip_member(data, flags=0x08, name=b"a-file-name" * 40),
        gzip_member(data, flags=0x02 | 0x04 | 0x08, extra=b"e", name=b"n"),
        gzip_member(data, flags=0xE0),  # reserved FLG bits: Java ignores them (zlib would not)
    ):
        assert decompress(Codec.GZIP, member, magic=1, limit=LIMIT) == data
    wrong_hcrc = gzip_member(data, flags=0x02, hcrc=0)
    assert zlib.crc32(wrong_hcrc[:10]) & 0xFFFF != 0
    corrupt(lambda: decompress(Codec.GZIP, wrong_hcrc, magic=1, limit=LIMIT))


def test_concatenated_zstd_frames() -> None:
    a, b = b"one " * 1000, b"two " * 777
    payload = zstd_streaming(a) + zstandard.ZstdCompressor().compress(b) + zstd_streaming(b"")
    assert decompress(Codec.ZSTD, payload, magic=2, limit=LIMIT) == a + b
    skippable = struct.pack("<II", 0x184D2A53, 3) + b"xyz"
    assert decompress(Codec.ZSTD, skippable + zstd_streaming(a), magic=2, limit=LIMIT) == a
    assert decompress(Codec.ZSTD, b"", magic=2, limit=LIMIT) == b""  # zstd-jni: EOF at once


def test_zstd_errors() -> None:
    frame = zstd_streaming(b"zstd " * 1000)
    for broken in (frame[:-1], frame[:5], frame + b"garbage", frame + frame[:4], b"\x00" * 8):
        error = corrupt(partial(decompress, Codec.ZSTD, broken, magic=2, limit=LIMIT))
        assert error.message.startswith("zstd: ")
    checksummed = bytearray(zstandard.ZstdCompressor(write_checksum=True).compress(b"z" * 999))
    checksummed[-1] ^= 1
    corrupt(lambda: decompress(Codec.ZSTD, bytes(checksummed), magic=2, limit=LIMIT))


@pytest.mark.parametrize("magic", [0, 1])
def test_zstd_is_not_allowed_in_legacy_formats(magic: int) -> None:
    frame = zstd_streaming(b"zstd")
    error = corrupt(
        lambda: decompress(Codec.ZSTD, frame, magic=magic, limit=LIMIT), field="compression"
    )
    assert "zstd" in error.message


@pytest.mark.parametrize("codec", [5, 6, 7, -1, 8, 255])
def test_unknown_codec_ids(codec: int) -> None:
    corrupt(lambda: decompress(codec, b"\x00" * 16, magic=2, limit=LIMIT), field="compression")


def test_unknown_magic() -> None:
    corrupt(
        lambda: decompress(Codec.GZIP, gzip.compress(b"x"), magic=3, limit=LIMIT), field="magic"
    )


# --- 5. limits --------------------------------------------------------------------------------

BOUNDARY_DATA = bytes(range(256)) * 300 + b"\x00" * 50_000


def _encode(codec: Codec, data: bytes) -> bytes:
    if codec is Codec.NONE:
        return data
    if codec is Codec.GZIP:
        return bytes(kafka_codec.gzip_encode(data))
    if codec is Codec.SNAPPY:
        return bytes(kafka_codec.snappy_encode(data))
    if codec is Codec.LZ4:
        return bytes(kafka_codec.lz4_encode(data))
    return zstd_streaming(data)


@pytest.mark.parametrize("codec", list(Codec), ids=str)
def test_limit_is_inclusive_and_exceeding_it_is_corrupt(codec: Codec) -> None:
    payload = _encode(codec, BOUNDARY_DATA)
    size = len(BOUNDARY_DATA)
    assert decompress(codec, payload, magic=2, limit=size) == BOUNDARY_DATA
    error = corrupt(lambda: decompress(codec, payload, magic=2, limit=size - 1))
    assert "exceeds the decompression limit" in error.message
    assert error.message.startswith(f"{codec.label}: ")
    corrupt(lambda: decompress(codec, payload, magic=2, limit=0))


def gzip_bomb(size: int) -> bytes:
    """One gzip member of ``size`` zero bytes (a multiple of 1 MiB), built in milliseconds:
    full-flush segments are byte-aligned and state-free, so one segment repeats."""
    deflater = zlib.compressobj(9, zlib.DEFLATED, -zlib.MAX_WBITS)
    segment = deflater.compress(b"\x00" * MiB) + deflater.flush(zlib.Z_FULL_FLUSH)
    body = segment * (size // MiB) + b"\x03\x00"  # final empty fixed-Huffman block
    return struct.pack("<HBBIBB", 0x8B1F, 8, 0, 0, 0, 255) + body + struct.pack("<II", 0, 0)


def zstd_bomb(size: int) -> bytes:
    """A zstd frame of RLE blocks (128 KiB of zeros each) without content size."""
    block = 128 * 1024
    header = struct.pack("<IBB", 0xFD2FB528, 0x00, (17 - 10) << 3)  # window 128 KiB
    blocks = [struct.pack("<I", (block << 3) | (1 << 1))[:3] + b"\x00"] * (size // block)
    last = struct.pack("<I", (block << 3) | (1 << 1) | 1)[:3] + b"\x00"
    return header + b"".join(blocks[:-1]) + last


def lz4_bomb(size: int) -> bytes:
    block = bytes(lz4.block.compress(b"\x00" * (4 * MiB), store_size=False))
    flg, bd = 0x60, 0x70
    header = struct.pack("<IBB", 0x184D2204, flg, bd) + bytes([lz4_hc(bytes([flg, bd]))])
    one = struct.pack("<I", len(block)) + block
    return header + one * (size // (4 * MiB)) + struct.pack("<I", 0)


def snappy_bomb(size: int) -> bytes:
    """A raw snappy block declaring ``size`` bytes (a varint), then copies of zero."""
    varint = bytearray()
    value = size
    while value >= 0x80:
        varint.append(value & 0x7F | 0x80)
        value >>= 7
    varint.append(value)
    return bytes(varint) + b"\x00\x00" + b"\xfe\x01\x00" * 2000


def xerial_bomb(chunks: int) -> bytes:
    chunk = bytes(cramjam.snappy.compress_raw(b"\x00" * 32768))
    return (
        b"\x82SNAPPY\x00"
        + struct.pack(">ii", 1, 1)
        + (struct.pack(">i", len(chunk)) + chunk) * chunks
    )


def test_bombs_are_sane_when_small() -> None:
    """The hand-built bombs are valid streams of zeros (so the big ones test the limit)."""
    assert decompress(
        Codec.GZIP,
        gzip_bomb(2 * MiB)[:-8] + struct.pack("<II", zlib.crc32(b"\0" * 2 * MiB), 2 * MiB),
        magic=2,
        limit=LIMIT,
    ) == b"\x00" * (2 * MiB)
    assert zstandard.ZstdDecompressor().stream_reader(zstd_bomb(MiB)).read() == b"\x00" * MiB
    assert decompress(Codec.ZSTD, zstd_bomb(MiB), magic=2, limit=LIMIT) == b"\x00" * MiB
    assert decompress(Codec.LZ4, lz4_bomb(8 * MiB), magic=2, limit=LIMIT) == b"\x00" * (8 * MiB)
    assert decompress(Codec.SNAPPY, xerial_bomb(3), magic=2, limit=LIMIT) == b"\x00" * 98304


@pytest.mark.parametrize(
    ("codec", "bomb"),
    [
        (Codec.GZIP, lambda: gzip_bomb(GiB)),
        (Codec.GZIP, lambda: gzip.compress(b"\x00" * MiB) * 1024),  # 1024 members
        (Codec.ZSTD, lambda: zstd_bomb(GiB)),
        (Codec.LZ4, lambda: lz4_bomb(GiB)),
        (Codec.SNAPPY, lambda: snappy_bomb(GiB)),
        (Codec.SNAPPY, lambda: xerial_bomb(32 * 1024)),  # 1 GiB in 32 KiB chunks
    ],
    ids=["gzip", "gzip-members", "zstd", "lz4", "snappy-raw", "snappy-xerial"],
)
def test_one_gib_bomb_stops_at_the_limit_with_bounded_memory(
    codec: Codec, bomb: Callable[[], bytes]
) -> None:
    payload = bomb()
    assert len(payload) < 64 * MiB
    tracemalloc.start()
    started = time.monotonic()
    try:
        error = corrupt(lambda: decompress(codec, payload, magic=2, limit=MiB))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    elapsed = time.monotonic() - started
    assert "exceeds the decompression limit" in error.message
    assert peak < 12 * MiB, f"peak traced allocation {peak} bytes"
    assert elapsed < 5.0


def test_many_tiny_members_and_chunks_take_linear_time() -> None:
    started = time.monotonic()
    assert decompress(Codec.GZIP, gzip.compress(b"") * 40_000, magic=2, limit=LIMIT) == b""
    header = b"\x82SNAPPY\x00" + struct.pack(">ii", 1, 1)
    assert decompress(Codec.SNAPPY, header * 40_000, magic=2, limit=LIMIT) == b""
    one = bytes(cramjam.snappy.compress_raw(b"x"))
    tiny_chunks = header + (struct.pack(">i", len(one)) + one) * 40_000
    assert decompress(Codec.SNAPPY, tiny_chunks, magic=2, limit=LIMIT) == b"x" * 40_000
    assert decompress(Codec.ZSTD, zstd_streaming(b"") * 40_000, magic=2, limit=LIMIT) == b""
    assert time.monotonic() - started < 10.0


# --- 6. fuzz: CorruptError or bounded bytes, nothing else --------------------------------------

FUZZ_LIMIT = 256 * 1024
FUZZ_DATA = build_legacy(1, Codec.NONE, RECORDS[:8]) * 3
FUZZ_CASES = {
    (Codec.GZIP, 0): legacy_wrapper_value(build_legacy(0, Codec.GZIP, RECORDS[:8]), 0)[1],
    (Codec.GZIP, 2): kafka_codec.gzip_encode(FUZZ_DATA) + gzip.compress(b"second member"),
    (Codec.SNAPPY, 1): legacy_wrapper_value(build_legacy(1, Codec.SNAPPY, RECORDS[:8]), 1)[1],
    (Codec.SNAPPY, 2): kafka_codec.snappy_encode(FUZZ_DATA, xerial_blocksize=1024),
    (Codec.SNAPPY, 0): snappy.compress(FUZZ_DATA),
    (Codec.LZ4, 0): legacy_wrapper_value(build_legacy(0, Codec.LZ4, RECORDS[:8]), 0)[1],
    (Codec.LZ4, 1): legacy_wrapper_value(build_legacy(1, Codec.LZ4, RECORDS[:8]), 1)[1],
    (Codec.LZ4, 2): lz4_frame(FUZZ_DATA * 40, block_checksum=True, content_checksum=True),
    (Codec.ZSTD, 2): zstd_streaming(FUZZ_DATA)
    + zstandard.ZstdCompressor(write_checksum=True).compress(FUZZ_DATA),
    (Codec.NONE, 2): FUZZ_DATA,
}
FUZZ_SETTINGS = settings(max_examples=150)


def check_outcome(codec: int, payload: bytes, magic: int, limit: int = FUZZ_LIMIT) -> bytes | None:
    try:
        result = decompress(codec, payload, magic=magic, limit=limit)
    except CorruptError as error:
        assert error.field in ("compression", "compressed payload", "magic")
        assert error.position is None
        return None
    assert type(result) is bytes
    assert len(result) <= limit
    return result


def test_fuzz_seeds_are_valid() -> None:
    for (codec, magic), payload in FUZZ_CASES.items():
        assert check_outcome(codec, payload, magic, limit=LIMIT) is not None, (codec, magic)


@pytest.mark.parametrize(("codec", "magic"), list(FUZZ_CASES), ids=lambda v: str(v))
@FUZZ_SETTINGS
@given(data=st.data())
def test_fuzz_truncations_and_bit_flips(codec: Codec, magic: int, data: st.DataObject) -> None:
    payload = bytearray(FUZZ_CASES[(codec, magic)])
    cut = data.draw(st.integers(0, len(payload)), label="cut")
    flips = data.draw(st.lists(st.integers(0, len(payload) * 8 - 1), max_size=6), label="flips")
    for bit in flips:
        payload[bit // 8] ^= 1 << (bit % 8)
    check_outcome(codec, bytes(payload[:cut]), magic)
    check_outcome(
        codec, bytes(payload), magic, limit=data.draw(st.integers(0, 4096), label="limit")
    )
    for other_magic in (0, 1, 2):
        check_outcome(codec, bytes(payload), other_magic)


@FUZZ_SETTINGS
@given(
    codec=st.integers(-2, 9),
    magic=st.integers(-1, 3),
    prefix=st.sampled_from(
        [
            b"",
            b"\x1f\x8b\x08",
            b"\x82SNAPPY\x00\x00\x00\x00\x01\x00\x00\x00\x01",
            b"\x04\x22\x4d\x18",
            b"\x28\xb5\x2f\xfd",
        ]
    ),
    body=st.binary(max_size=600),
)
def test_fuzz_random_bytes(codec: int, magic: int, prefix: bytes, body: bytes) -> None:
    check_outcome(codec, prefix + body, magic)


# --- real broker bytes: gzip v2 batches written by Kafka 2.3.0 (tests/fixtures) ---------------

FIXTURE_LOGS = sorted((Path(__file__).parent.parent / "fixtures" / "kafka-2.3.0").rglob("*.log"))


def v2_batches(segment: bytes) -> Iterator[bytes]:
    pos = 0
    while len(segment) - pos >= 17:
        _, size = struct.unpack_from(">qi", segment, pos)
        if size <= 0 or pos + 12 + size > len(segment) or segment[pos + 16] != 2:
            return
        yield segment[pos : pos + 12 + size]
        pos += 12 + size


def test_real_kafka_gzip_batches_decode_to_their_records() -> None:
    compressed = [
        batch
        for log in FIXTURE_LOGS
        if "kafka-logs" in log.parts
        for batch in v2_batches(log.read_bytes())
        if v2_codec(batch) == Codec.GZIP
    ]
    assert len(compressed) >= 100
    for batch in compressed:
        records = decompress(Codec.GZIP, batch[V2_RECORDS_OFFSET:], magic=2, limit=LIMIT)
        spliced = bytearray(batch[:V2_RECORDS_OFFSET] + records)
        struct.pack_into(">h", spliced, 21, struct.unpack_from(">h", batch, 21)[0] & ~0x07)
        struct.pack_into(">i", spliced, 8, len(spliced) - 12)
        (count,) = struct.unpack_from(">i", batch, 57)
        ours = [(r.offset, r.key, r.value) for r in DefaultRecordBatch(spliced)]
        assert len(ours) == count
        assert ours == [(r.offset, r.key, r.value) for r in DefaultRecordBatch(batch)]
