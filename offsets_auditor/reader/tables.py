"""The two tables the rules keep while they fold columns: named columns indexed by a dense id
that grow as ids are added (:class:`GrowingColumns`), and strings interned to dense ids in
first-seen order (:class:`Interner`).

Both serve the per-key and per-group state of the cleaner's facts and the coordinator's replay
(``cleaner.segment_facts``, ``cleaner.partition_scan``, ``groups.delta``, ``groups.replay``):
memory in proportion to the keys or groups, never the records.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, cast

import numpy as np
import numpy.typing as npt

from offsets_auditor import _native
from offsets_auditor.reader.columns import StringTable


class GrowingColumns:
    """Columns ``name -> (dtype, fill)`` of one row per id, each row set to its column's
    ``fill`` until written. :meth:`reserve` makes room for ids ``< size`` (capacity doubles, so
    adding ids one chunk at a time costs amortised constant time per id); ``table[name]`` is
    the whole column (its capacity: rows past the ids in use hold the fill)."""

    def __init__(self, columns: Mapping[str, tuple[Any, Any]]) -> None:
        self._fills = dict(columns)
        self._columns: dict[str, npt.NDArray[Any]] = {
            name: _filled(0, dtype, fill) for name, (dtype, fill) in columns.items()
        }
        self.capacity = 0

    def reserve(self, size: int) -> None:
        if size <= self.capacity:
            return
        capacity = max(size, 2 * self.capacity, 1024)
        for name, old in self._columns.items():
            dtype, fill = self._fills[name]
            new = _filled(capacity, dtype, fill)
            new[: len(old)] = old
            self._columns[name] = new
        self.capacity = capacity

    def __getitem__(self, name: str) -> npt.NDArray[Any]:
        return self._columns[name]

    def names(self) -> tuple[str, ...]:
        return tuple(self._columns)


def _filled(count: int, dtype: Any, fill: Any) -> npt.NDArray[Any]:
    column = np.empty(count, dtype=dtype)
    column[:] = fill
    return column


class Interner:
    """Strings to dense ids in first-seen order (``names[id]`` is the string)."""

    def __init__(self) -> None:
        self._ids: dict[str, int] = {}
        self.names: list[str] = []

    def __len__(self) -> int:
        return len(self.names)

    def id(self, name: str) -> int:
        found = self._ids.get(name)
        if found is None:
            found = self._ids[name] = len(self.names)
            self.names.append(name)
        return found

    def ids(self, names: Sequence[str]) -> npt.NDArray[np.int32]:
        out = np.empty(len(names), dtype=np.int32)
        _native.intern_all(names, self._ids, self.names, out)
        return out


def decoded_texts(
    strings: StringTable, ids: npt.NDArray[Any], malformed: Callable[[bytes], str]
) -> list[str]:
    """String ``ids[i]`` of the table ``strings`` (``reader.columns.StringTable``) as text:
    well-formed UTF-8 decoded in one C call (``StringTable.texts``), which every rule decodes
    alike; the rest by ``malformed`` (Java's rules, or Python's "replace")."""
    if not len(ids):
        return []
    wanted = np.ascontiguousarray(ids, dtype=np.int32)
    texts = strings.texts(wanted)
    if None in texts:
        for i, text in enumerate(texts):
            if text is None:
                texts[i] = malformed(strings[int(wanted[i])])
    return cast(list[str], texts)  # every None replaced
