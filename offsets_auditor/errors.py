"""The decoder's documented errors.

Every failure to decode bytes is one of two kinds, as in dpkt:

- ``TruncatedError``: the bytes end before the structure does (a partial tail after ``kill -9``,
  a cut copy). More bytes would have helped.
- ``CorruptError``: the bytes are all there but wrong (CRC mismatch, negative length, a varint
  that never ends, trailing bytes after a struct).

Both carry the field that failed and, where known, the byte position and the file, so a finding
can say exactly where to look. Nothing else escapes the decoder.
"""

from __future__ import annotations


class DecodeError(Exception):
    """Bytes that could not be decoded. ``position`` is a byte offset: within the file when
    ``file`` is set, otherwise within the buffer that was being decoded."""

    def __init__(
        self,
        message: str,
        *,
        field: str,
        position: int | None = None,
        file: str | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.field = field
        self.position = position
        self.file = file

    def located(self, *, file: str | None = None, base: int = 0) -> DecodeError:
        """The same error, re-anchored: ``position`` shifted by ``base`` (or ``base`` itself when
        the error had no position, e.g. inside compressed bytes), ``file`` set."""
        return type(self)(
            self.message,
            field=self.field,
            position=base if self.position is None else self.position + base,
            file=file if file is not None else self.file,
        )

    def __str__(self) -> str:
        where = []
        if self.file is not None:
            where.append(self.file)
        if self.position is not None:
            where.append(f"position {self.position}")
        prefix = f"{' '.join(where)}: " if where else ""
        return f"{prefix}{self.message} (field {self.field})"


class TruncatedError(DecodeError):
    """The input ends before the structure being decoded does."""


class CorruptError(DecodeError):
    """The input is present but malformed."""
