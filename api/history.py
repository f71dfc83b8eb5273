"""The kept runs (``RESULTS/runs/``), for ``GET /runs`` and the rules that need more than one
run (``OffsetsCleanerStuck``). A published run never changes, so each is read once: its manifest
and a few columns of its partitions table."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from api.results import UnreadableRun, cluster_key, read_table
from offsets_auditor import published

#: a partition across runs: (cluster_id, broker_id, log_dir, partition)
PartitionKey = tuple[str, int | None, str, int]

_TREND_COLUMNS = [
    "cluster_id",
    "broker_id",
    "log_dir",
    "partition",
    "cleaner_checkpoint",
    "cleanable_bytes",
    "size_bytes",
    "outcome",
]


@dataclass(frozen=True, slots=True)
class RunTrend:
    """What one kept run says, enough for trends: its manifest (None when unreadable) and,
    per partition, (cleaner checkpoint, dirty bytes, size bytes, outcome)."""

    run_id: str
    manifest: dict[str, Any] | None
    partitions: dict[PartitionKey, tuple[int | None, int | None, int | None, str | None]]
    error: str | None = None


def partition_key(row: dict[str, Any]) -> PartitionKey:
    return (cluster_key(row["cluster_id"]), row["broker_id"], row["log_dir"], row["partition"])


def read_trend(run_dir: Path) -> RunTrend:
    try:
        manifest = json.loads((run_dir / published.MANIFEST).read_text(encoding="utf-8"))
        rows = read_table(run_dir, "partitions", _TREND_COLUMNS).to_pylist()
    except (OSError, ValueError, UnreadableRun) as error:
        return RunTrend(run_dir.name, None, {}, str(error))
    return RunTrend(
        run_dir.name,
        manifest,
        {
            partition_key(r): (
                r["cleaner_checkpoint"],
                r["cleanable_bytes"],
                r["size_bytes"],
                r["outcome"],
            )
            for r in rows
        },
    )


class RunHistory:
    """The kept runs, oldest first, each read once (runs are immutable once published)."""

    def __init__(self, results: Path) -> None:
        self.results = results
        self._read: dict[str, RunTrend] = {}

    def runs(self) -> list[RunTrend]:
        runs_dir = self.results / published.RUNS
        try:
            ids = sorted(p.name for p in runs_dir.iterdir() if (p / published.MANIFEST).is_file())
        except OSError:
            ids = []
        for run_id in ids:
            if run_id not in self._read:
                self._read[run_id] = read_trend(runs_dir / run_id)
        for gone in set(self._read) - set(ids):
            del self._read[gone]
        return [self._read[r] for r in ids]
