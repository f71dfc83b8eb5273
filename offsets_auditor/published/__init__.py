"""What a scan publishes, and how: the contract between the Spark job (writer) and the service
(reader). Plain Python, no framework: the tables, each with its frozen row type
(``published.rows``: the columns and their types are read off its fields, ``TABLES``), and
the layout of the results dir. The scan builds the rows from the audit's own types
(``offsets_auditor.audit.rows``); the groups table column by column from the groups
themselves (``published.groups``).

Layout of ``RESULTS`` (``offsets-auditor scan --out RESULTS --publisher P``), each publisher
under ``RESULTS/publishers/P/`` (``HOME`` below):

    HOME/LATEST                    the id of the newest complete run (replaced atomically)
    HOME/runs/<run_id>/            one complete run (renamed into place when whole)
        manifest.json              MANIFEST_FIELDS; "schema_version": SCHEMA_VERSION
        <table>.parquet            one per TABLES entry (a run of an older scan lacks the
                                   tables and columns added since: ADDED_TABLES, ADDED_COLUMNS)
        reports/<n>.json           the audit report of input n (the JSON of ``audit --json``
                                   less ``groups``: those are the groups table's alone)
    HOME/failures/<run_id>.json    a scan that failed (FAILURE_FIELDS), written atomically
    HOME/.staging/<run_id>/        a run being written (never read)
    HOME/cache/                    per-segment results reused by the next scan

A reader lists ``runs/`` or reads ``LATEST``; it never sees a partial run, since a run's dir
appears by one ``rename`` once every file in it is written.
"""

from __future__ import annotations

import re
from dataclasses import fields
from pathlib import Path
from typing import Final

from offsets_auditor.published.columns import Columns, columns_of
from offsets_auditor.published.rows import (
    ADDED,
    BrokerRow,
    CleaningRow,
    FindingRow,
    GroupRow,
    IndexRow,
    PartitionRow,
    SegmentRow,
    Where,
)

#: Bumped when a column changes meaning or disappears (new columns do not bump it).
SCHEMA_VERSION: Final = 1

#: The results dir: ``RESULTS/publishers/<publisher>/`` per scan that publishes (one per broker
#: host when each broker is scanned where its disks are; one for a scan of many log dirs), each
#: with the layout below, written by that scan alone: no lock is shared between publishers. A
#: results dir of before publishers (``RESULTS/runs/``...) is read as the publisher ``""``.
PUBLISHERS: Final = "publishers"
LATEST: Final = "LATEST"
RUNS: Final = "runs"
STAGING: Final = ".staging"
CACHE: Final = "cache"
MANIFEST: Final = "manifest.json"
REPORTS: Final = "reports"
#: ``failures/<run id>.json``: a scan that could not publish says when, for which log dirs and
#: why (:data:`FAILURE_FIELDS`)
FAILURES: Final = "failures"
FAILURE_FIELDS: Final = ("run_id", "publisher", "failed_at", "log_dirs", "exit_status", "reason")

#: A publisher's name: what ``scan --publisher`` takes (a directory name on every filesystem).
PUBLISHER_NAME: Final = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,99}")
#: A cluster id ``scan --cluster-id`` takes. Kafka's are URL-safe base64 of a random UUID (2.3.0
#: ``CoreUtils.generateUuidAsBase64``: ``Base64.getUrlEncoder.withoutPadding``), so they may
#: begin with ``_`` or ``-``; never a path component (the default publisher puts
#: ``broker-<id>.`` before it).
CLUSTER_ID: Final = re.compile(r"[A-Za-z0-9._-]{1,100}")


def publisher_home(results: Path, publisher: str) -> Path:
    """Where ``publisher`` keeps its runs, ``LATEST``, failures and cache (``""``: the results
    dir itself, as before publishers)."""
    return results / PUBLISHERS / publisher if publisher else results


#: table -> its row type
ROW_TYPES: Final[dict[str, type]] = {
    "brokers": BrokerRow,
    "partitions": PartitionRow,
    "segments": SegmentRow,
    "indexes": IndexRow,
    "groups": GroupRow,
    "findings": FindingRow,
    "cleanings": CleaningRow,
}

#: table -> ((column, type), ...), read off its row type (``published.columns``). Types:
#: int64, float64, bool, string, list<int64>; every column may be null.
TABLES: Final[dict[str, Columns]] = {name: columns_of(row) for name, row in ROW_TYPES.items()}

#: Tables added since schema version 1: a run of an older scan has none (read as empty).
ADDED_TABLES: Final = ("cleanings",)

#: Columns added since their table was first published (``SCHEMA_VERSION`` unchanged): a run
#: published before has none of them, and a reader takes them as null (the fields made with
#: ``rows.added``).
ADDED_COLUMNS: Final[dict[str, frozenset[str]]] = {
    name: frozenset(f.name for f in fields(row) if f.metadata.get(ADDED))
    for name, row in ROW_TYPES.items()
    if any(f.metadata.get(ADDED) for f in fields(row))
}

#: The manifest's fields (see ``manifest``).
MANIFEST_FIELDS: Final = (
    "schema_version",
    "run_id",
    "publisher",
    "started_at",
    "finished_at",
    "duration_seconds",
    "inputs",
    "config",
    "counts",
    "reuse",
    "tables",
    "exit_status",
)


#: The columns saying where a row comes from (``rows.Where``), first in every table that has them.
WHERE_COLUMNS: Final = tuple(f.name for f in fields(Where))
