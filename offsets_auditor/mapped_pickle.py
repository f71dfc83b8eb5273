"""Values written to a file with their numpy arrays as they are, and read back with the arrays
mapped: what crosses between processes through a scratch or cache directory.

A file holds one or more parts, each pickled apart (protocol 5), so that :func:`read` takes
one without unpickling the others. Each part's out-of-band buffers (its numpy arrays) are
written raw, each at a multiple of ``_ALIGN``, and read back as read-only views of the file's
pages (``mmap``): they are never copied into the reading process, and stay pages the kernel can
drop. A file written by :func:`write` is read by this same code (the layout has no version
beyond ``_MAGIC``): its callers key or scope the files to the code that wrote them.

Layout: ``_MAGIC`` and the number of parts (``_HEAD``); per part, its pickle's length and
number of buffers (``_PART``) and each buffer's length (``_LENGTH``); then each part's pickle
and buffers, each at a multiple of ``_ALIGN``.
"""

from __future__ import annotations

import mmap
import pickle
import struct
from pathlib import Path
from typing import Any, Final

_MAGIC: Final = b"OARES002"
_HEAD: Final = struct.Struct("<8sQ")
_PART: Final = struct.Struct("<QQ")
_LENGTH: Final = struct.Struct("<Q")
_ALIGN: Final = 64


class UnreadableError(ValueError):
    """The file is not one :func:`write` wrote whole, or has no such part."""


def write(path: Path, *parts: Any) -> None:
    """Write ``parts`` to ``path`` (created or replaced in place; OSError as it fails)."""
    buffers: list[pickle.PickleBuffer] = []
    index = [_HEAD.pack(_MAGIC, len(parts))]
    sections: list[bytes | memoryview] = []
    try:
        for part in parts:
            mine: list[pickle.PickleBuffer] = []
            data = pickle.dumps(part, protocol=5, buffer_callback=mine.append)
            buffers.extend(mine)
            raws = [b.raw() for b in mine]
            index.append(_PART.pack(len(data), len(raws)))
            index.extend(_LENGTH.pack(raw.nbytes) for raw in raws)
            sections.extend([data, *raws])
        with open(path, "wb") as out:
            out.write(b"".join(index))
            for section in sections:
                out.write(b"\0" * (-out.tell() % _ALIGN))
                out.write(section)
    finally:
        for b in buffers:
            b.release()


def read(path: Path, part: int = 0) -> Any:
    """Part ``part`` of what :func:`write` wrote to ``path``, its arrays read-only views of the
    file's pages (mapped, not read: the kernel pages them in as they are used). OSError when
    the file cannot be opened, :class:`UnreadableError` when it is not whole."""
    with open(path, "rb") as f:
        try:
            mapped = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
        except ValueError:  # an empty file
            raise UnreadableError(f"{path}: empty") from None
    view = memoryview(mapped)
    try:
        magic, count = _HEAD.unpack_from(view)
        if magic != _MAGIC or not 0 <= part < count:
            raise UnreadableError(f"{path}: no part {part}")
        at = _HEAD.size
        sizes: list[list[int]] = []  # per part: its pickle's length, then its buffers'
        for _ in range(count):
            length, buffers = _PART.unpack_from(view, at)
            at += _PART.size
            lengths = [_LENGTH.unpack_from(view, at + i * _LENGTH.size)[0] for i in range(buffers)]
            at += buffers * _LENGTH.size
            sizes.append([length, *lengths])
        for before in sizes[:part]:
            for size in before:
                at += -at % _ALIGN + size
        sections = []
        for size in sizes[part]:
            at += -at % _ALIGN
            if at + size > len(view):
                raise UnreadableError(f"{path}: cut short")
            sections.append(view[at : at + size])
            at += size
        return pickle.loads(sections[0], buffers=sections[1:])
    except (struct.error, pickle.UnpicklingError, EOFError) as error:
        raise UnreadableError(f"{path}: {error}") from None
