"""The published tables' contract: the columns and their types read off the row types, and
the columns the service reads are columns of them."""

from __future__ import annotations

import ast
from dataclasses import dataclass, fields
from pathlib import Path

import pytest

from offsets_auditor import published
from offsets_auditor.groups.model import CommittedOffset
from offsets_auditor.published.columns import column_type, columns_of
from offsets_auditor.published.groups import GROUP_COLUMNS, GROUP_HEAD, OFFSET_COLUMNS

API = Path(__file__).resolve().parents[2] / "api"

#: string keys the service reads that are no column of a published table: its own answers,
#: the manifest, failure records, the live cluster's metadata, request parts, route paths
NOT_COLUMNS = {
    "accept",
    "advertised.listeners",
    "body",
    "brokers",
    "cleanings",
    "clusters",
    "config",
    "coordinator",
    "data_age_seconds",
    "duration_seconds",
    "exists",
    "failed_at",
    "findings",
    "finished_at",
    "host",
    "in_isr",
    "in_run",
    "indexes",
    "isr",
    "java_hash_code",
    "key",
    "known_from",
    "leader",
    "listeners",
    "live",
    "loading",
    "loc",
    "log_dirs",
    "log_offset_r",
    "msg",
    "offset_r",
    "offsets",
    "open_findings",
    "partitions_source",
    "partitions_uncertain",
    "port",
    "properties",
    "publisher",
    "publishers",
    "raw_path",
    "reasons",
    "replicas",
    "replicas_not_scanned",
    "run_finished_at",
    "run_id",
    "schema_version",
    "type",
}


def keys_read(source: str) -> set[str]:
    """The string keys a module reads: ``x["key"]`` and ``x.get("key")``."""
    found = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant):
            found.add(node.slice.value)
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "get"
            and node.args
            and isinstance(node.args[0], ast.Constant)
        ):
            found.add(node.args[0].value)
    return {k for k in found if isinstance(k, str) and not k.startswith("/")}


def test_the_columns_the_service_reads_are_published() -> None:
    """A column renamed in its row type, and still read by its old name in ``api/``, fails
    here (the service reads the tables as Arrow and dicts, by name)."""
    columns = {c for table in published.TABLES.values() for c, _ in table}
    read = set().union(*(keys_read(p.read_text()) for p in API.rglob("*.py")))
    assert read - columns - NOT_COLUMNS == set()
    assert read >= NOT_COLUMNS, "a key no longer read: take it out of NOT_COLUMNS"


def test_the_check_sees_a_renamed_column() -> None:
    columns = {c for table in published.TABLES.values() for c, _ in table}
    read = keys_read('def f(p):\n    return p["outcome"], p.get("verdikt")\n')
    assert read - columns == {"verdikt"}


def test_columns_are_read_off_the_fields() -> None:
    @dataclass(frozen=True)
    class Row:
        a: int
        b: str | None
        c: tuple[int, ...] | None
        d: float
        e: bool | None

    assert columns_of(Row) == (
        ("a", "int64"),
        ("b", "string"),
        ("c", "list<int64>"),
        ("d", "float64"),
        ("e", "bool"),
    )
    with pytest.raises(TypeError):
        column_type(int | str)
    with pytest.raises(TypeError):
        column_type(list[str])


def test_every_table_opens_with_where_its_rows_come_from() -> None:
    for name, columns in published.TABLES.items():
        names = [c for c, _ in columns]
        assert names[:3] == ["input", "log_dir", "broker_id"], name
        assert len(names) == len(set(names)), name
    assert published.WHERE_COLUMNS == ("input", "log_dir", "broker_id", "cluster_id")


def test_the_added_columns_are_those_of_the_runs_before_them() -> None:
    """The columns a run of schema version 1 published before them lacks (read as null)."""
    assert set(published.ADDED_COLUMNS) == {"brokers", "partitions"}
    assert "offsets_partitions_held" in published.ADDED_COLUMNS["brokers"]
    assert "load_model" in published.ADDED_COLUMNS["brokers"]
    assert "last_cleaning_json" in published.ADDED_COLUMNS["partitions"]
    assert "partition" not in published.ADDED_COLUMNS["partitions"]
    for name, added in published.ADDED_COLUMNS.items():
        assert added <= {c for c, _ in published.TABLES[name]}


def test_the_groups_columns_are_laid_out_as_group_columns_fills_them() -> None:
    assert CommittedOffset._fields == OFFSET_COLUMNS
    assert (*GROUP_HEAD, *OFFSET_COLUMNS, "pending") == GROUP_COLUMNS
    assert [f.name for f in fields(published.rows.GroupRow)][4:] == list(GROUP_COLUMNS)
