"""Bounds-checked reads of Kafka's protocol primitives over a ``memoryview``.

Grammar (docs/kafka-internals.md §2.1; A:3.9 ``clients/src/main/java/org/apache/kafka/common/
protocol/types/Type.java``, ``ByteBufferAccessor.java``, ``ByteUtils.java``; generated readers:
C:v8.1.0 ``generator/src/main/java/org/apache/kafka/message/MessageDataGenerator.java``)::

    int8 | int16 | int32 | int64 | uint16     big-endian, fixed width
    uuid            := int64 msb, int64 lsb  (rendered as Kafka's base64 ``Uuid.toString``)
    string          := int16 N, N bytes UTF-8           (N = -1: null, if nullable)
    bytes           := int32 N, N bytes                  (N = -1: null, if nullable)
    array           := int32 N, N elements               (N = -1: null, if nullable)
    compact string  := uvarint N+1, N bytes UTF-8        (0: null, if nullable)
    compact bytes   := uvarint N+1, N bytes
    compact array   := uvarint N+1, N elements
    uvarint         := 1-5 bytes, 7 bits each, low group first; the value is a Java ``int``
    tagged fields   := uvarint count, count * (uvarint tag, uvarint size, size bytes)

Every length is checked against the bytes that remain BEFORE anything is sliced or allocated, so a
length of 2^31-1 raises :class:`TruncatedError` at once. ``position`` in every error is the offset,
within the buffer handed to :class:`Reader`, where the failing field starts.
"""

from __future__ import annotations

import base64
import struct
from typing import Final

from offsets_auditor.errors import CorruptError, TruncatedError

INT8: Final = struct.Struct(">b")
INT16: Final = struct.Struct(">h")
UINT16: Final = struct.Struct(">H")
INT32: Final = struct.Struct(">i")
INT64: Final = struct.Struct(">q")
UUID: Final = struct.Struct(">16s")  # two int64 (most significant first); kept as raw bytes

MAX_STRING_LENGTH: Final = 0x7FFF
"""Generated readers reject any string longer than this, compact or not (MessageDataGenerator:
"string field X had invalid length")."""

_MAX_UVARINT_BYTES: Final = 5
_MAX_VARLONG_BYTES: Final = 10


def uuid_to_string(raw: bytes) -> str:
    """Kafka's ``org.apache.kafka.common.Uuid.toString``: URL-safe base64 without padding."""
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode("ascii")


def java_utf8(raw: bytes | memoryview) -> str:
    """``new String(bytes, StandardCharsets.UTF_8)``: never fails; malformed input becomes U+FFFD.

    Well-formed UTF-8 decodes as usual. For malformed input Python's ``errors="replace"`` does NOT
    match the JDK (it replaces per maximal subpart; the JDK turns an encoded surrogate
    ``ED A0 80`` into one U+FFFD, ``ED A0`` + non-continuation into one, etc.), so the JDK's rules
    are re-implemented in :func:`_jdk_utf8_replace` (behaviour of OpenJDK 17's
    ``String.decodeUTF8_UTF16``; checked on random inputs against OpenJDK 17 and 25)."""
    data = bytes(raw)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return _jdk_utf8_replace(data)


_REPLACEMENT: Final = "\ufffd"


def _continuation(byte: int) -> bool:
    return byte & 0xC0 == 0x80


def _bad_second_of_3(lead: int, second: int) -> bool:
    """E0 must be followed by A0-BF (no overlong); any lead needs a continuation byte."""
    return (lead == 0xE0 and second & 0xE0 == 0x80) or not _continuation(second)


def _bad_second_of_4(lead: int, second: int) -> bool:
    """F0 needs 90-BF, F4 needs 80-8F, any lead needs a continuation byte."""
    return (
        (lead == 0xF0 and not 0x90 <= second <= 0xBF)
        or (lead == 0xF4 and second & 0xF0 != 0x80)
        or not _continuation(second)
    )


def _jdk_utf8_replace(data: bytes) -> str:
    """The JDK's UTF-8 decoding with replacement (see :func:`java_utf8`)."""
    out: list[str] = []
    size = len(data)
    index = 0
    while index < size:
        lead = data[index]
        index += 1
        if lead < 0x80:
            out.append(chr(lead))
        elif 0xC2 <= lead <= 0xDF:  # two bytes
            if index < size and _continuation(data[index]):
                out.append(chr(((lead & 0x1F) << 6) | (data[index] & 0x3F)))
                index += 1
            else:
                out.append(_REPLACEMENT)
        elif 0xE0 <= lead <= 0xEF:  # three bytes
            if index + 1 < size:
                second, third = data[index], data[index + 1]
                if _bad_second_of_3(lead, second):
                    out.append(_REPLACEMENT)  # the lead alone
                elif not _continuation(third):
                    out.append(_REPLACEMENT)  # lead + second
                    index += 1
                else:
                    code = ((lead & 0x0F) << 12) | ((second & 0x3F) << 6) | (third & 0x3F)
                    out.append(_REPLACEMENT if 0xD800 <= code <= 0xDFFF else chr(code))
                    index += 2
                continue
            out.append(_REPLACEMENT)
            if index < size and _bad_second_of_3(lead, data[index]):
                continue
            break  # a valid but incomplete sequence ends the input
        elif 0xF0 <= lead <= 0xF7:  # four bytes
            if index + 2 < size:
                second, third, fourth = data[index], data[index + 1], data[index + 2]
                code = (
                    ((lead & 0x07) << 18)
                    | ((second & 0x3F) << 12)
                    | ((third & 0x3F) << 6)
                    | (fourth & 0x3F)
                )
                if (
                    _continuation(second)
                    and _continuation(third)
                    and _continuation(fourth)
                    and 0x10000 <= code <= 0x10FFFF
                ):
                    out.append(chr(code))
                    index += 3
                    continue
                out.append(_REPLACEMENT)
                if lead > 0xF4 or _bad_second_of_4(lead, second):
                    continue  # the lead alone
                index += 1 if not _continuation(third) else 2
                continue
            out.append(_REPLACEMENT)
            if lead > 0xF4 or (index < size and _bad_second_of_4(lead, data[index])):
                continue
            index += 1
            if index < size and not _continuation(data[index]):
                continue
            break  # a valid but incomplete sequence ends the input
        else:  # 80-C1, F8-FF
            out.append(_REPLACEMENT)
    return "".join(out)


def _int32(value: int) -> int:
    """Wrap to a Java ``int``."""
    value &= 0xFFFFFFFF
    return value - 0x100000000 if value & 0x80000000 else value


class Reader:
    """A cursor over ``buffer[start:end]``; every read checks the bounds first.

    Errors carry ``position`` relative to the start of ``buffer`` (not of ``start``), so a
    sub-reader over a tagged field still reports where in the record the problem is."""

    __slots__ = ("_buf", "_end", "_pos")

    def __init__(self, buffer: bytes | memoryview, start: int = 0, end: int | None = None) -> None:
        view = buffer if isinstance(buffer, memoryview) else memoryview(buffer)
        if view.ndim != 1 or view.format not in ("B", "b", "c"):
            view = view.cast("B")
        self._buf = view
        self._pos = start
        self._end = len(view) if end is None else end

    @property
    def position(self) -> int:
        return self._pos

    @property
    def remaining(self) -> int:
        return self._end - self._pos

    def fork(self) -> Reader:
        """An independent reader at the same position (to try another layout)."""
        return Reader(self._buf, self._pos, self._end)

    def sub_reader(self, size: int, field: str) -> Reader:
        """A reader over the next ``size`` bytes; this reader skips past them."""
        self._need(size, field, self._pos)
        sub = Reader(self._buf, self._pos, self._pos + size)
        self._pos += size
        return sub

    def expect_end(self, field: str) -> None:
        """Raise :class:`CorruptError` if any byte is left unread."""
        if self._pos != self._end:
            raise CorruptError(
                f"{self._end - self._pos} unexpected trailing bytes",
                field=field,
                position=self._pos,
            )

    # -- fixed width -------------------------------------------------------------------------

    def _need(self, size: int, field: str, start: int) -> None:
        if size > self._end - self._pos:
            raise TruncatedError(
                f"needs {size} bytes, {self._end - self._pos} left", field=field, position=start
            )

    def _fixed(self, layout: struct.Struct, field: str) -> int:
        start = self._pos
        self._need(layout.size, field, start)
        (value,) = layout.unpack_from(self._buf, start)
        self._pos = start + layout.size
        return int(value)

    def int8(self, field: str) -> int:
        return self._fixed(INT8, field)

    def int16(self, field: str) -> int:
        return self._fixed(INT16, field)

    def uint16(self, field: str) -> int:
        return self._fixed(UINT16, field)

    def int32(self, field: str) -> int:
        return self._fixed(INT32, field)

    def int64(self, field: str) -> int:
        return self._fixed(INT64, field)

    def uuid(self, field: str) -> str:
        start = self._pos
        self._need(UUID.size, field, start)
        (raw,) = UUID.unpack_from(self._buf, start)
        self._pos = start + UUID.size
        return uuid_to_string(raw)

    def raw(self, size: int, field: str) -> bytes:
        start = self._pos
        self._need(size, field, start)
        self._pos = start + size
        return bytes(self._buf[start : start + size])

    # -- varints -----------------------------------------------------------------------------

    def unsigned_varint(self, field: str) -> int:
        """An unsigned varint of at most 5 bytes, as Kafka's ``ByteUtils.readUnsignedVarint``:
        the result is the low 32 bits, returned as a non-negative Python int."""
        start = self._pos
        value = 0
        for index in range(_MAX_UVARINT_BYTES):
            if self._pos >= self._end:
                raise TruncatedError("varint ends early", field=field, position=start)
            byte = self._buf[self._pos]
            self._pos += 1
            value |= (byte & 0x7F) << (7 * index)
            if not byte & 0x80:
                return value & 0xFFFFFFFF
        raise CorruptError("varint longer than 5 bytes", field=field, position=start)

    def varlong(self, field: str) -> int:
        """A zig-zag signed varlong of at most 10 bytes (``ByteUtils.readVarlong``)."""
        start = self._pos
        value = 0
        for index in range(_MAX_VARLONG_BYTES):
            if self._pos >= self._end:
                raise TruncatedError("varlong ends early", field=field, position=start)
            byte = self._buf[self._pos]
            self._pos += 1
            value |= (byte & 0x7F) << (7 * index)
            if not byte & 0x80:
                value &= 0xFFFFFFFFFFFFFFFF
                return (value >> 1) ^ -(value & 1)
        raise CorruptError("varlong longer than 10 bytes", field=field, position=start)

    def _compact_length(self, field: str) -> int:
        """``readUnsignedVarint() - 1`` in Java ``int`` arithmetic (negative means null)."""
        return _int32(_int32(self.unsigned_varint(field)) - 1)

    # -- variable length ---------------------------------------------------------------------

    def _length(self, field: str, *, compact: bool, wide: bool) -> tuple[int, int]:
        start = self._pos
        if compact:
            return start, self._compact_length(field)
        return start, (self.int32(field) if wide else self.int16(field))

    def string(self, field: str, *, compact: bool = False) -> str:
        start, length = self._length(field, compact=compact, wide=False)
        if length < 0:
            raise CorruptError(
                f"non-nullable string has length {length}", field=field, position=start
            )
        return self._string_body(start, length, field)

    def nullable_string(self, field: str, *, compact: bool = False) -> str | None:
        start, length = self._length(field, compact=compact, wide=False)
        if length < 0:
            return None
        return self._string_body(start, length, field)

    def _string_body(self, start: int, length: int, field: str) -> str:
        self._need(length, field, start)
        if length > MAX_STRING_LENGTH:
            raise CorruptError(f"string length {length} > 32767", field=field, position=start)
        begin = self._pos
        self._pos = begin + length
        return java_utf8(self._buf[begin : begin + length])

    def bytes_(self, field: str, *, compact: bool = False) -> bytes:
        start, length = self._length(field, compact=compact, wide=True)
        if length < 0:
            raise CorruptError(
                f"non-nullable bytes have length {length}", field=field, position=start
            )
        return self._bytes_body(start, length, field)

    def nullable_bytes(self, field: str, *, compact: bool = False) -> bytes | None:
        start, length = self._length(field, compact=compact, wide=True)
        if length < 0:
            return None
        return self._bytes_body(start, length, field)

    def _bytes_body(self, start: int, length: int, field: str) -> bytes:
        self._need(length, field, start)
        begin = self._pos
        self._pos = begin + length
        return bytes(self._buf[begin : begin + length])

    def array_length(
        self, field: str, *, compact: bool = False, nullable: bool = False, element_size: int = 1
    ) -> int | None:
        """An array's element count, checked against the bytes left (each element needs at
        least ``element_size`` bytes) before the caller builds anything. ``None`` = null."""
        start, count = self._length(field, compact=compact, wide=True)
        if count < 0:
            if nullable:
                return None
            raise CorruptError(f"non-nullable array has count {count}", field=field, position=start)
        if count * max(element_size, 1) > self.remaining:
            raise TruncatedError(
                f"array of {count} elements, {self.remaining} bytes left",
                field=field,
                position=start,
            )
        return count

    def tagged_fields(self, field: str) -> list[tuple[int, Reader]]:
        """A tagged-field section: ``[(tag, reader over its bytes)]`` in the order written.

        The caller decodes the tags it knows and keeps the rest raw (``Reader.raw``)."""
        start = self._pos
        count = self.unsigned_varint(f"{field}._tagged_fields")
        if count * 2 > self.remaining:  # each needs at least a tag and a size byte
            raise TruncatedError(
                f"{count} tagged fields, {self.remaining} bytes left",
                field=f"{field}._tagged_fields",
                position=start,
            )
        fields: list[tuple[int, Reader]] = []
        for _ in range(count):
            tag = self.unsigned_varint(f"{field}._tagged_fields.tag")
            size_at = self._pos
            size = _int32(self.unsigned_varint(f"{field}._tagged_fields[{tag}].size"))
            if size < 0:
                raise CorruptError(
                    f"tagged field {tag} has size {size}",
                    field=f"{field}._tagged_fields[{tag}]",
                    position=size_at,
                )
            fields.append((tag, self.sub_reader(size, f"{field}._tagged_fields[{tag}]")))
        return fields
