"""A published table's columns, read off its row type: each field of the frozen row dataclass
is a column, in field order, and its annotation gives the column's type. One definition, so
``TABLES``, the Arrow schemas, the Spark DDL and the API's models cannot drift apart.

Types: ``int`` -> ``int64``, ``float`` -> ``float64``, ``bool`` -> ``bool``, ``str`` ->
``string``, ``tuple[int, ...]`` -> ``list<int64>``; ``X | None`` is ``X`` (every column may be
null in a published table: a reader of an older run reads the columns added since as null).
"""

from __future__ import annotations

import dataclasses
import types
import typing
from typing import Any, Final

#: Python type of a field (``None`` taken away) -> the contract's column type
COLUMN_TYPES: Final[dict[Any, str]] = {
    int: "int64",
    float: "float64",
    bool: "bool",
    str: "string",
    tuple[int, ...]: "list<int64>",
}

Columns = tuple[tuple[str, str], ...]


def column_type(annotation: Any) -> str:
    """The contract's type of a field annotated ``annotation`` (``X`` or ``X | None``)."""
    if isinstance(annotation, types.UnionType) or typing.get_origin(annotation) is typing.Union:
        kinds = [a for a in typing.get_args(annotation) if a is not type(None)]
        if len(kinds) != 1:
            raise TypeError(f"a column has one type, not {annotation}")
        annotation = kinds[0]
    try:
        return COLUMN_TYPES[annotation]
    except KeyError:
        raise TypeError(f"no column type for {annotation}") from None


def columns_of(row_type: type) -> Columns:
    """``((column, type), ...)`` of a row dataclass, in field order."""
    hints = typing.get_type_hints(row_type)
    return tuple((f.name, column_type(hints[f.name])) for f in dataclasses.fields(row_type))
