"""The decoder's documented errors.

Every failure to decode bytes is one of two kinds, as in dpkt:

- ``TruncatedError``: the bytes end before the structure does (a partial tail after ``kill -9``,
  a cut copy). More bytes would have helped.
- ``CorruptError``: the bytes are all there but wrong (negative length, a varint that never
  ends, trailing bytes after a struct).

A third, ``ChecksumError``, is not a failure to decode: the entry was read, but its stored CRC
does not match its bytes. Kafka's cleaner and coordinator load never check CRCs (no
``ensureValid`` in ``LogCleaner.scala``, ``MemoryRecords.java`` or ``GroupMetadataManager.scala``,
A:0.9.0.1 to A:3.8.0), so its records are kept, as they read them; the error goes with them.

Both carry the field that failed and, where known, the byte position and the file, so a finding
can say exactly where to look. Nothing else escapes the decoder.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True, slots=True)
class Framing:
    """Why no entry can be framed from an error's position to the end of its segment (set by
    the segment walk only): the size the entry declares (its log overhead included; ``None``
    when too few bytes are left to hold it) and the bytes left in the file from there."""

    declared_size: int | None
    bytes_left: int
    #: why the bytes there are no entry header Kafka wrote (an offset outside the segment, a
    #: magic that is no message format), when they say so: then the unframed bytes are not an
    #: entry being written or cut short, but bytes that never were a Kafka entry
    not_an_entry: str | None = None


class DecodeError(Exception):
    """Bytes that could not be decoded. ``position`` is a byte offset: within the file when
    ``file`` is set, otherwise within the buffer that was being decoded. ``framing`` is set
    when nothing after the error can be framed; ``checksum_mismatch`` when the entry's stored
    CRC does not match its bytes either (the bytes changed after they were written)."""

    def __init__(
        self,
        message: str,
        *,
        field: str,
        position: int | None = None,
        file: str | None = None,
        framing: Framing | None = None,
        checksum_mismatch: bool = False,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.field = field
        self.position = position
        self.file = file
        self.framing = framing
        self.checksum_mismatch = checksum_mismatch

    def __reduce__(self) -> tuple[Any, ...]:
        """Copied and pickled whole (the keyword-only arguments would otherwise be lost)."""
        return (_rebuild, (type(self), self.message, self._fields()))

    def _fields(self) -> dict[str, Any]:
        return {
            "field": self.field,
            "position": self.position,
            "file": self.file,
            "framing": self.framing,
            "checksum_mismatch": self.checksum_mismatch,
        }

    def located(self, *, file: str | None = None, base: int = 0) -> DecodeError:
        """The same error, re-anchored: ``position`` shifted by ``base`` (or ``base`` itself when
        the error had no position, e.g. inside compressed bytes), ``file`` set."""
        return self._copy(
            position=base if self.position is None else self.position + base,
            file=file if file is not None else self.file,
        )

    def with_checksum_mismatch(self, checksum: ChecksumError) -> DecodeError:
        """The same error, on an entry whose CRC does not match either (``checksum``)."""
        return self._copy(message=f"{self.message}; {checksum.message}", checksum_mismatch=True)

    def _copy(self, **changes: Any) -> DecodeError:
        fields = {**self._fields(), **changes}
        message = fields.pop("message", self.message)
        return type(self)(message, **fields)

    def __str__(self) -> str:
        where = []
        if self.file is not None:
            where.append(self.file)
        if self.position is not None:
            where.append(f"position {self.position}")
        prefix = f"{' '.join(where)}: " if where else ""
        return f"{prefix}{self.message} (field {self.field})"


def _rebuild(kind: type[DecodeError], message: str, fields: dict[str, Any]) -> DecodeError:
    return kind(message, **fields)


class TruncatedError(DecodeError):
    """The input ends before the structure being decoded does."""


class CorruptError(DecodeError):
    """The input is present but malformed."""


class ChecksumError(CorruptError):
    """The entry was decoded, but the CRC it stores does not match its bytes (see the module
    docstring: the broker reads such an entry as it is)."""


class OverLimitError(CorruptError):
    """An entry larger than the auditor's own limit (``--max-batch-bytes``): skipped unread.
    Not damage: the broker reads it."""


class ControlKeyError(CorruptError):
    """A control record's key that Kafka's ``ControlRecordType.parseTypeId`` throws on (shorter
    than 4 bytes, or a negative version); the message is Kafka's."""


class UnreadableFileError(DecodeError):
    """A segment file the auditor could not open or read (not damage: the broker may read it)."""
