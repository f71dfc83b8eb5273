"""Helpers of the broker-logs tests: a fixture's emulation and its broker's own history."""

from __future__ import annotations

from pathlib import Path

from offsets_auditor.audit.partition import BrokerAudit
from offsets_auditor.audit.stages import audit_at
from offsets_auditor.broker_logs.history import CleanerHistory
from offsets_auditor.broker_logs.reading import read_history
from offsets_auditor.broker_logs.server_log import broker_starts
from offsets_auditor.cleaner.config import cleaner_config
from offsets_auditor.logdir import fs
from offsets_auditor.logdir.meta_properties import parse_java_properties
from tests.conftest import FIXTURES


def version_of(fixture: Path) -> str:
    return next(p.name for p in [fixture, *fixture.parents] if p.name.startswith("kafka-"))[6:]


def emulate(log_dir: Path, properties: Path, version: str) -> BrokerAudit:
    """The audit of ``log_dir`` as the broker configured by ``properties`` (its version given),
    with the clock a minute after the newest segment was written (as the broker's own run)."""
    config = cleaner_config(parse_java_properties(properties.read_text()), {}, version)
    now = max(int(p.stat().st_mtime * 1000) for p in log_dir.rglob("*.log")) + 60_000
    return audit_at(log_dir, config, now, with_groups=False)


def history(*paths: Path) -> CleanerHistory:
    found, read = read_history(list(paths))
    assert not read.problems, read.problems
    return found


def load_order(server_log: Path) -> list[tuple[str, int]]:
    """The broker's load order at its last start (its "Completed load of log" lines)."""
    return list(broker_starts(fs.iter_lines(server_log)).load_order)


__all__ = ["FIXTURES", "emulate", "history", "load_order", "version_of"]
