"""Publishing a run into the publisher's own dir (``HOME``: ``RESULTS/publishers/<name>``):
Parquet tables and a manifest written into ``HOME/.staging/<run_id>``, then renamed to
``HOME/runs/<run_id>`` in one step, then ``LATEST`` replaced (write a temporary file, rename it
over): a reader sees the previous complete run or the new one. Runs beyond the newest ``keep``
are removed only after that. A scan that fails writes ``HOME/failures/<run_id>.json`` the same
way (:func:`record_failure`). Every write stays inside ``HOME``, so any number of publishers
share a results dir without a lock. The layout is ``offsets_auditor.published``.
"""

from __future__ import annotations

import json
import os
import shutil
import time
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from offsets_auditor import published

_TYPES = {
    "int64": pa.int64(),
    "float64": pa.float64(),
    "bool": pa.bool_(),
    "string": pa.string(),
    "list<int64>": pa.list_(pa.int64()),
}


def arrow_schema(table: str) -> pa.Schema:
    """The table's Arrow schema: its row type's fields (``published.TABLES``)."""
    return pa.schema([(name, _TYPES[kind]) for name, kind in published.TABLES[table]])


def to_arrow(table: str, rows: Sequence[object]) -> pa.Table:
    """``rows``, each of the table's row type (``published.ROW_TYPES``), as an Arrow table
    with the published schema."""
    row_type = published.ROW_TYPES[table]
    strangers = {type(row).__name__ for row in rows if type(row) is not row_type}
    if strangers:
        raise TypeError(f"{table} rows are {row_type.__name__}, not {', '.join(strangers)}")
    schema = arrow_schema(table)
    return pa.table(
        [column([getattr(row, f.name) for row in rows], f.type) for f in schema], schema=schema
    )


def column(values: list[Any], kind: pa.DataType) -> pa.Array:
    try:
        return pa.array(values, type=kind)
    except UnicodeEncodeError:
        # names that are not UTF-8 reach here surrogate-escaped; Parquet strings must be UTF-8
        return pa.array([_plain(v) for v in values], type=kind)


def _plain(value: Any) -> Any:
    if isinstance(value, str):
        return value.encode("utf-8", "backslashreplace").decode("utf-8")
    return value


def publish(
    results: Path,
    run_id: str,
    tables: Mapping[str, pa.Table | Iterable[pa.Table]],
    reports: Sequence[Mapping[str, Any]],
    manifest: Mapping[str, Any],
    keep: int,
) -> Path:
    """Write the run and make it the latest; returns its directory. A table given as chunks
    (each with the table's schema) is written one chunk at a time."""
    staging = _staging(results, run_id)
    for name, table in tables.items():
        if isinstance(table, pa.Table):
            pq.write_table(table, staging / f"{name}.parquet", compression="zstd")
        else:
            _write_chunks(name, table, staging / f"{name}.parquet")
    for index, report in enumerate(reports):  # compact, so json's C encoder writes them
        _write_json(staging / published.REPORTS / f"{index}.json", report, indent=None)
    _write_json(staging / published.MANIFEST, manifest)
    return _commit(results, run_id, staging, keep)


def _write_chunks(name: str, chunks: Iterable[pa.Table], path: Path) -> None:
    with pq.ParquetWriter(path, arrow_schema(name), compression="zstd") as writer:
        for chunk in chunks:
            if len(chunk):
                writer.write_table(chunk)


def republish(
    results: Path,
    run_id: str,
    previous: Path,
    segments: pa.Table,
    manifest: Mapping[str, Any],
    keep: int,
) -> Path:
    """Publish the run in ``previous`` again as ``run_id``, with ``segments`` (its segments
    table, now every segment reused) and ``manifest``: the other tables and the reports are
    hard links to the previous run's files (copies where links cannot be made)."""
    staging = _staging(results, run_id)
    for name in published.TABLES:
        if name != "segments":
            _link(previous / f"{name}.parquet", staging / f"{name}.parquet")
    for report in sorted((previous / published.REPORTS).glob("*.json")):
        _link(report, staging / published.REPORTS / report.name)
    pq.write_table(segments, staging / "segments.parquet", compression="zstd")
    _write_json(staging / published.MANIFEST, manifest)
    return _commit(results, run_id, staging, keep)


def _staging(results: Path, run_id: str) -> Path:
    staging = results / published.STAGING / run_id
    shutil.rmtree(staging, ignore_errors=True)
    (staging / published.REPORTS).mkdir(parents=True)
    return staging


def _commit(results: Path, run_id: str, staging: Path, keep: int) -> Path:
    """Rename the staged run into ``runs/``, then point ``LATEST`` at it, then prune."""
    runs = results / published.RUNS
    runs.mkdir(parents=True, exist_ok=True)
    final = runs / run_id
    os.rename(staging, final)
    _fsync_dir(runs)
    latest_tmp = results / f".{published.LATEST}.{run_id}.tmp"
    latest_tmp.write_text(run_id + "\n", encoding="utf-8")
    os.replace(latest_tmp, results / published.LATEST)
    _fsync_dir(results)
    prune_runs(results, keep)
    prune_leftovers(results)
    return final


def _link(source: Path, target: Path) -> None:
    try:
        os.link(source, target)
    except OSError:
        shutil.copyfile(source, target)


def prune_runs(results: Path, keep: int) -> list[str]:
    """Remove all but the newest ``keep`` runs (run ids sort by time); returns those removed."""
    runs = sorted(list_runs(results))
    latest = read_latest(results)
    removed = [r for r in runs[: max(len(runs) - keep, 0)] if r != latest]
    for run_id in removed:
        shutil.rmtree(results / published.RUNS / run_id, ignore_errors=True)
    return removed


#: A run still in ``.staging`` after this long was left by a scan that was killed.
STALE_SECONDS = 6 * 3600


def prune_leftovers(results: Path, now: float | None = None) -> list[Path]:
    """Remove what killed scans left behind: staging dirs and ``LATEST`` temporaries older than
    ``STALE_SECONDS`` (a scan running now, into the same results, keeps its own)."""
    now = time.time() if now is None else now
    candidates = [
        *((results / published.STAGING).glob("*")),
        *results.glob(f".{published.LATEST}.*.tmp"),
    ]
    removed = []
    for path in candidates:
        try:
            if now - path.stat().st_mtime < STALE_SECONDS:
                continue
        except FileNotFoundError:
            continue
        if path.is_dir():
            shutil.rmtree(path, ignore_errors=True)
        else:
            path.unlink(missing_ok=True)
        removed.append(path)
    return removed


def list_runs(results: Path) -> list[str]:
    runs = results / published.RUNS
    if not runs.is_dir():
        return []
    return [p.name for p in runs.iterdir() if (p / published.MANIFEST).is_file()]


def read_latest(results: Path) -> str | None:
    try:
        return (results / published.LATEST).read_text(encoding="utf-8").strip() or None
    except FileNotFoundError:
        return None


def _write_json(path: Path, data: Any, indent: int | None = 1) -> None:
    # json.dumps, not json.dump: only the one-shot form uses json's C encoder (and only
    # without indent); json.dump always runs the pure-Python one
    text = json.dumps(data, indent=indent, default=str)
    with open(path, "w", encoding="utf-8") as out:
        out.write(text)
        out.write("\n")
        out.flush()
        os.fsync(out.fileno())


def _fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def record_failure(home: Path, record: Mapping[str, Any], keep: int) -> Path:
    """Say that a scan failed (``published.FAILURE_FIELDS``): written whole under a temporary
    name, then renamed into ``HOME/failures/``; the newest ``keep`` records are kept."""
    folder = home / published.FAILURES
    folder.mkdir(parents=True, exist_ok=True)
    final = folder / f"{record['run_id']}.json"
    temporary = folder / f".{final.name}.tmp"
    _write_json(temporary, dict(record))
    os.replace(temporary, final)
    for old in sorted(folder.glob("*.json"))[: -max(keep, 1)]:
        old.unlink(missing_ok=True)
    return final
