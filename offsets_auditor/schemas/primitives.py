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
from offsets_auditor.schemas.java_utf8 import java_utf8

INT8: Final = struct.Struct(">b")
INT16: Final = struct.Struct(">h")
UINT16: Final = struct.Struct(">H")
INT32: Final = struct.Struct(">i")
INT64: Final = struct.Struct(">q")
UUID: Final = struct.Struct(">16s")  # two int64 (most significant first); kept as raw bytes

_UNPACK_INT8: Final = INT8.unpack_from
_UNPACK_INT16: Final = INT16.unpack_from
_UNPACK_UINT16: Final = UINT16.unpack_from
_UNPACK_INT32: Final = INT32.unpack_from
_UNPACK_INT64: Final = INT64.unpack_from

MAX_STRING_LENGTH: Final = 0x7FFF
"""Generated readers reject any string longer than this, compact or not (MessageDataGenerator:
"string field X had invalid length")."""

_MAX_UVARINT_BYTES: Final = 5
_MAX_VARLONG_BYTES: Final = 10


def uuid_to_string(raw: bytes) -> str:
    """Kafka's ``org.apache.kafka.common.Uuid.toString``: URL-safe base64 without padding."""
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode("ascii")


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
        if view.ndim != 1 or view.format != "B":
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
    # (each read inlines its bounds check: these run for every field of every record)

    def _truncated(self, size: int, field: str, start: int) -> TruncatedError:
        return TruncatedError(
            f"needs {size} bytes, {self._end - self._pos} left", field=field, position=start
        )

    def _need(self, size: int, field: str, start: int) -> None:
        if size > self._end - self._pos:
            raise self._truncated(size, field, start)

    def int8(self, field: str) -> int:
        pos = self._pos
        if pos + 1 > self._end:
            raise self._truncated(1, field, pos)
        self._pos = pos + 1
        return _UNPACK_INT8(self._buf, pos)[0]  # type: ignore[no-any-return]

    def int16(self, field: str) -> int:
        pos = self._pos
        if pos + 2 > self._end:
            raise self._truncated(2, field, pos)
        self._pos = pos + 2
        return _UNPACK_INT16(self._buf, pos)[0]  # type: ignore[no-any-return]

    def uint16(self, field: str) -> int:
        pos = self._pos
        if pos + 2 > self._end:
            raise self._truncated(2, field, pos)
        self._pos = pos + 2
        return _UNPACK_UINT16(self._buf, pos)[0]  # type: ignore[no-any-return]

    def int32(self, field: str) -> int:
        pos = self._pos
        if pos + 4 > self._end:
            raise self._truncated(4, field, pos)
        self._pos = pos + 4
        return _UNPACK_INT32(self._buf, pos)[0]  # type: ignore[no-any-return]

    def int64(self, field: str) -> int:
        pos = self._pos
        if pos + 8 > self._end:
            raise self._truncated(8, field, pos)
        self._pos = pos + 8
        return _UNPACK_INT64(self._buf, pos)[0]  # type: ignore[no-any-return]

    def uuid(self, field: str) -> str:
        pos = self._pos
        if pos + UUID.size > self._end:
            raise self._truncated(UUID.size, field, pos)
        self._pos = pos + UUID.size
        return uuid_to_string(UUID.unpack_from(self._buf, pos)[0])

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

    def string(self, field: str, compact: bool = False) -> str:
        start, length = self._length(field, compact=compact, wide=False)
        if length < 0:
            raise CorruptError(
                f"non-nullable string has length {length}", field=field, position=start
            )
        return self._string_body(start, length, field)

    def nullable_string(self, field: str, compact: bool = False) -> str | None:
        start, length = self._length(field, compact=compact, wide=False)
        if length < 0:
            return None
        return self._string_body(start, length, field)

    def _string_body(self, start: int, length: int, field: str) -> str:
        begin = self._pos
        if begin + length > self._end:
            raise self._truncated(length, field, start)
        if length > MAX_STRING_LENGTH:
            raise CorruptError(f"string length {length} > 32767", field=field, position=start)
        self._pos = begin + length
        return java_utf8(self._buf[begin : begin + length])

    def bytes_(self, field: str, compact: bool = False) -> bytes:
        start, length = self._length(field, compact=compact, wide=True)
        if length < 0:
            raise CorruptError(
                f"non-nullable bytes have length {length}", field=field, position=start
            )
        return self._bytes_body(start, length, field)

    def nullable_bytes(self, field: str, compact: bool = False) -> bytes | None:
        start, length = self._length(field, compact=compact, wide=True)
        if length < 0:
            return None
        return self._bytes_body(start, length, field)

    def _bytes_body(self, start: int, length: int, field: str) -> bytes:
        begin = self._pos
        if begin + length > self._end:
            raise self._truncated(length, field, start)
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
