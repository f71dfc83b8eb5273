"""Findings: everything the auditor has to tell an operator, as one typed record.

A finding is data, not an exception: bad input is normal input here, so decoding, the log-dir
reader and every check report what they found and keep going.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from enum import StrEnum


class Severity(StrEnum):
    """How urgent a finding is. The audit's exit status is the highest severity found:
    0 for none or ``info``, 1 for ``warning``, 2 for ``critical``."""

    INFO = "info"
    WARNING = "warning"
    CRITICAL = "critical"

    @property
    def exit_status(self) -> int:
        return {"info": 0, "warning": 1, "critical": 2}[self.value]


@dataclass(frozen=True, slots=True)
class Finding:
    """One thing worth telling.

    ``kind`` is a stable kebab-case identifier (``corrupt-record``, ``truncated-tail``,
    ``corrupt-index``, ``cleaner-thread-death`` ...) that alerts and tests can match on; ``detail``
    is the human sentence, quoting Kafka's own message where the broker has one. ``file`` is
    relative to the log dir when one is known; ``position`` is a byte position in that file.
    ``partition`` is the partition directory name, e.g. ``__consumer_offsets-3``.
    """

    kind: str
    severity: Severity
    detail: str
    file: str | None = None
    position: int | None = None
    field: str | None = None
    partition: str | None = None
    group: str | None = None

    def to_dict(self) -> dict[str, object]:
        data = asdict(self)
        data["severity"] = self.severity.value
        return data


def exit_status(findings: list[Finding]) -> int:
    """0 healthy, 1 findings at warning level, 2 critical."""
    return max((f.severity.exit_status for f in findings), default=0)


def broker_label(broker_id: int | None, log_dir: str) -> str:
    """How a log dir's broker is named in text: ``broker 3 (/data/kafka-logs)``, or, when its
    ``meta.properties`` gives no ``broker.id`` (a copy without it), ``the broker of
    /data/kafka-logs (no broker.id)``: never ``broker None``."""
    if broker_id is None:
        return f"the broker of {log_dir} (no broker.id)"
    return f"broker {broker_id} ({log_dir})"
