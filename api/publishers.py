"""The publishers of a results dir (``offsets_auditor.published``): every scan that publishes
keeps its runs, ``LATEST`` and failure records under ``RESULTS/publishers/<name>/``, and a
results dir written before publishers existed is the publisher ``""``. Read-only listings; a
publisher's files change only by atomic renames, so what is listed is whole."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from api.results import iso_seconds
from offsets_auditor import published


@dataclass(frozen=True, slots=True)
class Failure:
    """A scan that did not publish (``HOME/failures/<run_id>.json``)."""

    run_id: str
    publisher: str
    failed_at: float
    log_dirs: tuple[str, ...]
    exit_status: int
    reason: str

    def to_json(self) -> dict[str, Any]:
        return {
            "run_id": self.run_id,
            "publisher": self.publisher,
            "failed_at": self.failed_at,
            "log_dirs": list(self.log_dirs),
            "exit_status": self.exit_status,
            "reason": self.reason,
        }


@dataclass(frozen=True, slots=True)
class Publisher:
    name: str
    home: Path

    def latest_id(self) -> str | None:
        """The run ``LATEST`` names, else the newest in ``runs/``."""
        try:
            named = (self.home / published.LATEST).read_text(encoding="utf-8").strip()
        except OSError:
            named = ""
        if named:
            return named
        ids = self.run_ids()
        return ids[-1] if ids else None

    def run_ids(self) -> list[str]:
        """The complete runs, oldest first (run ids sort by time)."""
        try:
            runs = (self.home / published.RUNS).iterdir()
            return sorted(p.name for p in runs if (p / published.MANIFEST).is_file())
        except OSError:
            return []

    def run_dir(self, run_id: str) -> Path:
        return self.home / published.RUNS / run_id

    def failures(self) -> list[Failure]:
        """Its failure records, oldest first; a damaged record is skipped (it is rewritten
        whole by a rename, so only a hand-made file can be damaged)."""
        try:
            paths = sorted((self.home / published.FAILURES).glob("*.json"))
        except OSError:
            return []
        found = []
        for path in paths:
            try:
                record = json.loads(path.read_text(encoding="utf-8"))
                found.append(
                    Failure(
                        run_id=str(record["run_id"]),
                        publisher=self.name,
                        failed_at=iso_seconds(str(record["failed_at"])),
                        log_dirs=tuple(str(d) for d in record.get("log_dirs") or ()),
                        exit_status=int(record["exit_status"]),
                        reason=str(record["reason"]),
                    )
                )
            except (OSError, ValueError, KeyError, TypeError):
                continue
        return sorted(found, key=lambda f: f.failed_at)


def publishers(results: Path) -> list[Publisher]:
    """Every publisher of ``results``, by name (the publisher ``""`` first when the results
    dir also holds runs of before publishers)."""
    found = []
    if (results / published.RUNS).is_dir() or (results / published.LATEST).is_file():
        found.append(Publisher("", results))
    try:
        homes = sorted((results / published.PUBLISHERS).iterdir())
    except OSError:
        homes = []
    for home in homes:
        if home.is_dir() and published.PUBLISHER_NAME.fullmatch(home.name):
            found.append(Publisher(home.name, home))
    return found
