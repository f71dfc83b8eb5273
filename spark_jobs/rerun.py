"""A rescan with nothing changed: the latest run published again, nothing read or folded.

A run's results are a function of its inputs: every file under each log dir (its name, size,
inode, modification and change times), the broker's own logs read beside it (its server log, its
cleaner log and that log's rotated files: ``audit.plan.broker_log_files``), whether a broker
holds its ``.lock`` (a broker killed changes no file), the options, and the code. ``run_key``
digests them all, taken before anything is read, so that a file changing while the scan reads it
makes the next key differ. The time of the scan is left out: it matters only where a partition's
outcome reads the clock (a compaction lag, an open transaction's age;
``PartitionOutcome.reads_clock``), and the manifest records whether any did. A scan whose key is
the latest run's, and whose clock did not matter or has not moved, republishes that run
(``publish.republish``) instead of scanning.

The key is strict on purpose: on a running broker its checkpoint files are rewritten every few
seconds, so a live log dir is scanned every time (its unchanged segments still come from the
cache); a copy of one, or a stopped broker's, is republished until something changes.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import xxhash

from offsets_auditor import published
from offsets_auditor.broker_logs.files import rotated_set
from offsets_auditor.broker_logs.reading import find_cleaner_log
from offsets_auditor.logdir.fs import probe_lock
from offsets_auditor.logdir.layout import LOCK_FILE
from offsets_auditor.logdir.liveness import judge
from offsets_auditor.logdir.server_log import find_server_log, log_dir_parent
from spark_jobs import publish


def run_key(log_dirs: Sequence[Path], options: Any, code: str) -> str:
    """The digest of what a scan of ``log_dirs`` with ``options`` (a ``ScanOptions``) by
    ``code`` depends on, less the time of the scan."""
    digest = xxhash.xxh3_128()
    digest.update(code.encode())
    digest.update(repr(replace(options, now_ms=None, keep=0)).encode("utf-8", "backslashreplace"))
    for log_dir in log_dirs:
        digest.update(b"\0log dir\0" + os.fsencode(log_dir))
        # a broker killed leaves its files as they were: only its lock tells (logdir.liveness)
        digest.update(judge(probe_lock(log_dir / LOCK_FILE)).state.encode())
        for entry in _tree(log_dir):
            digest.update(entry)
        for path in broker_logs(log_dir, options):
            digest.update(b"\0broker log\0" + _stat_entry(path))
    return digest.hexdigest()


def broker_logs(log_dir: Path, options: Any) -> list[Path]:
    """The broker's logs a scan of ``log_dir`` may read (given, or where the plan looks for
    them), the cleaner log with its rotated files: what the plan reads is among them."""
    server = options.server_logs.get(log_dir) or find_server_log(log_dir)
    found: list[Path] = [server] if server is not None else []
    cleaner = tuple(options.cleaner_logs.get(log_dir, ()))
    if not cleaner:
        beside = (
            find_cleaner_log(server.parent, ("",))
            if server is not None
            else find_cleaner_log(log_dir_parent(log_dir))
        )
        cleaner = (beside,) if beside is not None else ()
    for path in cleaner:
        found.extend([info.path for info in rotated_set(path)] or [path])
    return found


def _stat_entry(path: Path) -> bytes:
    try:
        st = os.stat(path)
    except OSError as error:
        return os.fsencode(path) + f"\0missing {error.errno}".encode()
    fields = (st.st_size, st.st_ino, st.st_mtime_ns, st.st_ctime_ns)
    return os.fsencode(path) + b"\0" + repr(fields).encode()


def _tree(root: Path) -> list[bytes]:
    """Every entry under ``root`` with its stat fields, sorted by path (unreadable dirs are an
    entry of their own: they change the key when they become readable)."""
    entries: list[bytes] = []
    pending = [root]
    while pending:
        directory = pending.pop()
        try:
            listing = list(os.scandir(directory))
        except OSError as error:
            entries.append(f"{directory}\0unreadable {error.errno}".encode())
            continue
        for entry in listing:
            try:
                st = entry.stat(follow_symlinks=False)
            except OSError:
                continue  # gone since listed: a change the next listing sees
            if entry.is_dir(follow_symlinks=False):
                pending.append(Path(entry.path))
            fields = (st.st_mode, st.st_size, st.st_ino, st.st_mtime_ns, st.st_ctime_ns)
            entries.append(os.fsencode(entry.path) + b"\0" + repr(fields).encode())
    return sorted(entries)


def reusable(results: Path, key: str, now_ms: int) -> tuple[Path, dict[str, Any]] | None:
    """The latest run and its manifest, when it was made from the inputs ``key`` digests and
    its outcomes hold at ``now_ms``."""
    latest = publish.read_latest(results)
    if latest is None:
        return None
    run_dir = results / published.RUNS / latest
    try:
        manifest = json.loads((run_dir / published.MANIFEST).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    reuse = manifest.get("reuse") or {}
    if reuse.get("run_key") != key:
        return None
    if reuse.get("reads_clock", True) and reuse.get("now_ms") != now_ms:
        return None
    return run_dir, manifest


def republish(
    results: Path,
    run_id: str,
    previous: tuple[Path, dict[str, Any]],
    started: str,
    finished: str,
    duration: float,
    keep: int,
) -> tuple[Path, dict[str, Any]]:
    """Publish the ``previous`` run again as ``run_id``; returns the new run's dir and
    manifest."""
    run_dir, manifest = previous
    segments = pq.read_table(run_dir / "segments.parquet")
    segments = segments.set_column(
        segments.schema.get_field_index("reused"),
        "reused",
        pa.array([True] * segments.num_rows, type=pa.bool_()),
    )
    reuse, counts = manifest["reuse"], manifest["counts"]
    new_manifest = {
        **manifest,
        "run_id": run_id,
        "started_at": started,
        "finished_at": finished,
        "duration_seconds": round(duration, 3),
        "reuse": {
            **reuse,
            "segments_reused": counts["segments"],
            "segments_read": 0,
            "bytes_reused": counts["bytes"],
            "bytes_read": 0,
            "run_reused": run_dir.name,
        },
    }
    final = publish.republish(results, run_id, run_dir, segments, new_manifest, keep)
    return final, new_manifest
