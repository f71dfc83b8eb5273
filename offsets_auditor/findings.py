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


class FindingKind(StrEnum):
    """Every kind of finding, by where it comes from. The values are the stable kebab-case
    names that the published ``findings`` table, the API, the alerts and the tests match on:
    renaming one is a change of the published contract."""

    # the log dir and its files (logdir/)
    UNREADABLE_FILE = "unreadable-file"
    MISSING_FILE = "missing-file"
    MISSING_CHECKPOINT = "missing-checkpoint"
    UNEXPECTED_FILE = "unexpected-file"
    CHANGED_WHILE_READ = "changed-while-read"
    MALFORMED_CHECKPOINT = "malformed-checkpoint"
    MALFORMED_META_PROPERTIES = "malformed-meta-properties"
    MALFORMED_CLEAN_SHUTDOWN_FILE = "malformed-clean-shutdown-file"
    # damaged bytes in a segment (audit/damage.py)
    CORRUPT_SEGMENT = "corrupt-segment"
    CORRUPT_RECORD = "corrupt-record"
    CHECKSUM_MISMATCH = "checksum-mismatch"
    TRUNCATED_TAIL = "truncated-tail"
    OVERSIZED_ENTRY = "oversized-entry"
    # what the group loader stumbles on (groups/)
    UNKNOWN_RECORD_TYPE = "unknown-record-type"
    UNKNOWN_VALUE_VERSION = "unknown-value-version"
    MISPLACED_GROUP = "misplaced-group"
    PARTITION_COUNT_GUESSED = "partition-count-guessed"
    # the cleaner's emulation (cleaner/, audit/): ``cleaner-`` and an ``Outcome``'s value
    CLEANER_THREAD_DEATH = "cleaner-thread-death"
    CLEANER_MULTI_PASS = "cleaner-multi-pass"
    CLEANER_SINGLE_PASS = "cleaner-single-pass"
    CLEANER_NOT_ELIGIBLE = "cleaner-not-eligible"
    CLEANER_NOTHING_TO_CLEAN = "cleaner-nothing-to-clean"
    CLEANER_BLOCKED = "cleaner-blocked"
    CLEANER_DISABLED = "cleaner-disabled"
    CLEANER_ORDER_UNCERTAIN = "cleaner-order-uncertain"
    CLEANER_VERDICT_DEPENDS_ON_VERSION = "cleaner-verdict-depends-on-version"
    SEGMENT_OFFSET_OVERFLOW = "segment-offset-overflow"
    HANGING_TRANSACTION = "hanging-transaction"
    OPEN_TRANSACTION = "open-transaction"
    PARTITION_SKEW = "partition-skew"
    OFFSETS_PARTITION_COUNT_MISMATCH = "offsets-partition-count-mismatch"
    # the broker's next start (startup/)
    BROKER_RUNNING = "broker-running"
    UNCLEAN_SHUTDOWN = "unclean-shutdown"
    CORRUPT_INDEX = "corrupt-index"
    MISSING_INDEX = "missing-index"
    INDEX_LOAD_FAILURE = "index-load-failure"
    LEFTOVER_FILE = "leftover-file"
    STARTUP_DEPENDS_ON_VERSION = "startup-depends-on-version"
    # the broker's version (version_detection/)
    VERSION_MISMATCH = "version-mismatch"
    VERSION_EVIDENCE_CONFLICT = "version-evidence-conflict"
    # more than one log dir (audit/replicas.py)
    DUPLICATE_BROKER_ID = "duplicate-broker-id"
    REPLICA_DIVERGENCE = "replica-divergence"
    # a KRaft metadata log (cluster/)
    METADATA_LOG_INCOMPLETE = "metadata-log-incomplete"
    METADATA_LOG_UNDECODABLE = "metadata-log-undecodable"
    METADATA_LOG_UNREADABLE = "metadata-log-unreadable"
    METADATA_RECORD_UNDECODABLE = "metadata-record-undecodable"
    # the broker's own logs (broker_logs/)
    CLEANER_THREAD_DIED = "cleaner-thread-died"
    PARTITION_UNCLEANABLE = "partition-uncleanable"
    PREDICTION_DIFFERS = "prediction-differs"
    CLEANER_FALLING_BEHIND = "cleaner-falling-behind"
    LOG_ROTATING_TOO_FAST = "log-rotating-too-fast"
    UNREADABLE_LOG = "unreadable-log"
    TRUNCATED_LOG = "truncated-log"


@dataclass(frozen=True, slots=True)
class Finding:
    """One thing worth telling.

    ``kind`` is one :class:`FindingKind`, a stable kebab-case name that alerts and tests can
    match on; ``detail``
    is the human sentence, quoting Kafka's own message where the broker has one. ``file`` is
    relative to the log dir when one is known; ``position`` is a byte position in that file.
    ``partition`` is the partition directory name, e.g. ``__consumer_offsets-3``.
    """

    kind: FindingKind
    severity: Severity
    detail: str
    file: str | None = None
    position: int | None = None
    field: str | None = None
    partition: str | None = None
    group: str | None = None

    def to_dict(self) -> dict[str, object]:
        data = asdict(self)
        data["kind"] = self.kind.value
        data["severity"] = self.severity.value
        return data


def exit_status(findings: list[Finding]) -> int:
    """0 healthy, 1 findings at warning level, 2 critical."""
    return max((f.severity.exit_status for f in findings), default=0)
