"""Coordinator load rate, calibrated from the broker's own load times.

After a restart every broker logs how long loading each ``__consumer_offsets`` partition took
("Finished loading offsets ... in N milliseconds", parsed by ``offsets_auditor.restart``). Bytes
read over milliseconds spent, on this broker, is a better basis for the audit's load-time
estimates than any assumed rate.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from offsets_auditor.audit.partition import BrokerAudit
from offsets_auditor.cleaner.config import CleanerConfig
from offsets_auditor.logdir import fs
from offsets_auditor.restart.progress import fold_lines


@dataclass(frozen=True, slots=True)
class LoadRate:
    bytes_per_second: float
    loads: int
    bytes: int
    milliseconds: int
    basis: str


def calibrate(
    loads: Iterable[tuple[int, int]], sizes: Mapping[int, int], source: str
) -> LoadRate | None:
    """The rate from ``(partition, load_ms)`` pairs and the partitions' sizes in bytes; loads
    of empty partitions or of unknown size teach nothing and are left out. ``None`` when no
    load is usable."""
    total_bytes = total_ms = count = 0
    for partition, load_ms in loads:
        size = sizes.get(partition)
        if not size or load_ms <= 0:
            continue
        total_bytes += size
        total_ms += load_ms
        count += 1
    if not count:
        return None
    rate = total_bytes / (total_ms / 1000)
    return LoadRate(
        bytes_per_second=rate,
        loads=count,
        bytes=total_bytes,
        milliseconds=total_ms,
        basis=f"calibrated on this broker: {count} coordinator load(s) in {source} read"
        f" {total_bytes:,} bytes in {total_ms:,} ms = {rate / 1048576:,.2f} MiB/s"
        " (partition sizes as they are on disk now)",
    )


def calibrate_from_server_log(
    server_log: Path, audits: Sequence[BrokerAudit], config: CleanerConfig
) -> LoadRate | None:
    """The broker's own coordinator load times (its last start in ``server_log``) against the
    audited partitions' sizes. Raises ``OSError`` when the log cannot be read."""
    progress = fold_lines(fs.iter_lines(server_log), kafka_version=str(config.kafka_version))
    sizes = {
        p.emulated.partition.partition: p.scan.size_bytes for a in audits for p in a.partitions
    }
    loads = [(x.partition, x.load_ms) for x in progress.coordinator_loads if x.load_ms is not None]
    return calibrate(loads, sizes, str(server_log))
