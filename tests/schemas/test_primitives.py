"""The bounds-checked reader: Kafka's primitive encodings, and failing safely on bad lengths."""

from __future__ import annotations

import struct

import pytest

from offsets_auditor.errors import CorruptError, TruncatedError
from offsets_auditor.schemas.java_utf8 import java_utf8
from offsets_auditor.schemas.primitives import Reader

from .wire import b, ca, cb, cs, i16, i32, s, tags, uvarint


def test_fixed_width_big_endian() -> None:
    raw = struct.pack(">bhHiq", -2, -300, 65000, -70000, -(2**40))
    reader = Reader(raw)
    assert reader.int8("f") == -2
    assert reader.int16("f") == -300
    assert reader.uint16("f") == 65000
    assert reader.int32("f") == -70000
    assert reader.int64("f") == -(2**40)
    assert reader.remaining == 0
    reader.expect_end("f")


def test_uuid_is_kafka_base64() -> None:
    # Expected strings printed by Java: Base64.getUrlEncoder().withoutPadding() (Uuid.toString).
    assert (
        Reader(bytes((i * 17 + 3) & 0xFF for i in range(16))).uuid("f") == "AxQlNkdYaXqLnK2-z-DxAg"
    )
    assert Reader(bytes(15) + b"\x01").uuid("f") == "AAAAAAAAAAAAAAAAAAAAAQ"
    assert Reader(b"\xfb" * 16).uuid("f") == "-_v7-_v7-_v7-_v7-_v7-w"


@pytest.mark.parametrize(
    ("encoded", "value"),
    [
        (b"\x00", 0),
        (b"\x7f", 127),
        (b"\x80\x01", 128),
        (b"\xff\xff\xff\xff\x0f", 0xFFFFFFFF),
        (b"\x96\x01", 150),
    ],
)
def test_unsigned_varint(encoded: bytes, value: int) -> None:
    reader = Reader(encoded)
    assert reader.unsigned_varint("f") == value
    assert reader.remaining == 0


def test_unsigned_varint_longer_than_five_bytes_is_corrupt() -> None:
    with pytest.raises(CorruptError) as error:
        Reader(b"\x00" + b"\x80" * 5 + b"\x01", 1).unsigned_varint("X.count")
    assert error.value.field == "X.count"
    assert error.value.position == 1


def test_unsigned_varint_cut_is_truncated() -> None:
    with pytest.raises(TruncatedError):
        Reader(b"\x80\x80").unsigned_varint("f")


@pytest.mark.parametrize(("encoded", "value"), [(b"\x00", 0), (b"\x01", -1), (b"\x02", 1)])
def test_varlong_zigzag(encoded: bytes, value: int) -> None:
    assert Reader(encoded).varlong("f") == value


def test_strings_classic_and_compact() -> None:
    reader = Reader(s("héllo") + s(None) + cs("ab") + cs(None) + cs(""))
    assert reader.string("a") == "héllo"
    assert reader.nullable_string("b") is None
    assert reader.string("c", compact=True) == "ab"
    assert reader.nullable_string("d", compact=True) is None
    assert reader.string("e", compact=True) == ""


def test_null_in_non_nullable_string_is_corrupt_with_position() -> None:
    with pytest.raises(CorruptError) as error:
        Reader(b"\x00\x00" + s(None), 2).string("GroupMetadataKey.group")
    assert (error.value.field, error.value.position) == ("GroupMetadataKey.group", 2)


def test_bytes_classic_and_compact() -> None:
    reader = Reader(b(b"\x00\x01") + b(None) + cb(b"xyz") + cb(None))
    assert reader.bytes_("a") == b"\x00\x01"
    assert reader.nullable_bytes("b") is None
    assert reader.bytes_("c", compact=True) == b"xyz"
    assert reader.nullable_bytes("d", compact=True) is None


def test_huge_lengths_raise_truncated_before_allocating() -> None:
    # 2^31-1 bytes announced, 4 present: must fail at once (no 2 GiB allocation).
    with pytest.raises(TruncatedError) as error:
        Reader(i32(2**31 - 1) + b"abcd").bytes_("f")
    assert error.value.position == 0
    with pytest.raises(TruncatedError):
        Reader(i16(0x7FFF) + b"abcd").string("f")
    with pytest.raises(TruncatedError):
        Reader(uvarint(2**31 - 1) + b"abcd").bytes_("f", compact=True)
    with pytest.raises(TruncatedError):
        Reader(i32(2**31 - 1) + b"abcd").array_length("f", element_size=4)
    with pytest.raises(TruncatedError):
        Reader(ca(2**31 - 2) + b"abcd").array_length("f", compact=True)


def test_array_count_checked_against_element_size() -> None:
    # 2 int32 elements need 8 bytes; 7 are left.
    with pytest.raises(TruncatedError):
        Reader(i32(2) + b"\x00" * 7).array_length("f", element_size=4)
    assert Reader(i32(2) + b"\x00" * 8).array_length("f", element_size=4) == 2


def test_null_arrays() -> None:
    assert Reader(i32(-1)).array_length("f", nullable=True) is None
    assert Reader(ca(None)).array_length("f", compact=True, nullable=True) is None
    with pytest.raises(CorruptError):
        Reader(i32(-1)).array_length("f")


def test_compact_string_longer_than_32767_is_corrupt() -> None:
    # Kafka's generated readers: "string field X had invalid length".
    with pytest.raises(CorruptError):
        Reader(uvarint(0x8000 + 1) + b"a" * 0x8000).string("f", compact=True)


def test_tagged_fields_section() -> None:
    reader = Reader(tags((0, b"\x01\x02"), (7, b"")) + b"rest")
    section = reader.tagged_fields("X")
    assert [(tag, body.raw(body.remaining, "f")) for tag, body in section] == [
        (0, b"\x01\x02"),
        (7, b""),
    ]
    assert reader.remaining == 4


def test_tagged_field_bigger_than_the_rest_is_truncated() -> None:
    with pytest.raises(TruncatedError):
        Reader(uvarint(1) + uvarint(0) + uvarint(100) + b"abc").tagged_fields("X")


def test_expect_end_reports_trailing_bytes() -> None:
    reader = Reader(b"\x00\x01\xff")
    reader.int16("f")
    with pytest.raises(CorruptError) as error:
        reader.expect_end("OffsetCommitKey")
    assert error.value.position == 2


def test_memoryview_input_with_offset() -> None:
    view = memoryview(b"xx" + s("grp"))[2:]
    assert Reader(view).string("f") == "grp"


# Expected outputs printed by OpenJDK 17 (`new String(bytes, StandardCharsets.UTF_8)`, as UTF-16
# hex). Most of these differ from Python's bytes.decode("utf-8", "replace").
JDK_UTF8 = [
    ("e1edbf", "fffdfffd"),
    ("e1eda0", "fffdfffd"),
    ("eda0", "fffd"),
    ("edbf", "fffd"),
    ("eda0c2", "fffdfffd"),
    ("eda090", "fffd"),
    ("edbf80", "fffd"),
    ("c0e0e1eda0", "fffdfffdfffdfffd"),
    ("e0ededa0bf", "fffdfffdfffd"),
    ("eda0f0", "fffdfffd"),
    ("bf9ff0edbf", "fffdfffdfffdfffd"),
    ("eda080f8", "fffdfffd"),
    ("edbff8f09f", "fffdfffdfffd"),
    ("e190eda0c2", "fffdfffdfffd"),
    ("bfc2edbf", "fffdfffdfffd"),
    ("f0eda0bf", "fffdfffd"),
    ("f0c0eda0e0", "fffdfffdfffdfffd"),
    ("a09fedbf", "fffdfffdfffd"),
    ("c0a0f4edbf", "fffdfffdfffdfffd"),
    ("e0eda09080", "fffdfffdfffd"),
    ("909feda0f8", "fffdfffdfffdfffd"),
    ("c2c2edbf", "fffdfffdfffd"),
    ("e0a0c0eda0", "fffdfffdfffd"),
    ("edbfe1c2a0", "fffdfffd00a0"),
    ("eda080", "fffd"),
    ("e282", "fffd"),
    ("f09f98", "fffd"),
    ("f09f9880", "d83dde00"),
    ("c0af", "fffdfffd"),
    ("f4908080", "fffdfffdfffdfffd"),
    ("e08080", "fffdfffdfffd"),
    ("41ff42", "0041fffd0042"),
]


@pytest.mark.parametrize(("raw_hex", "utf16_hex"), JDK_UTF8)
def test_invalid_utf8_decodes_like_java(raw_hex: str, utf16_hex: str) -> None:
    decoded = java_utf8(bytes.fromhex(raw_hex))
    assert decoded.encode("utf-16-be", "surrogatepass").hex() == utf16_hex


def test_invalid_utf8_in_a_string_field_never_raises() -> None:
    raw = i16(3) + b"\xed\xa0\x80"
    assert Reader(raw).string("f") == "\ufffd"


def test_signed_byte_memoryview_is_read_as_unsigned_bytes() -> None:
    view = memoryview(bytearray(uvarint(300) + cs("é"))).cast("b")
    reader = Reader(view)
    assert reader.unsigned_varint("f") == 300
    assert reader.string("g", compact=True) == "é"
