"""What one log dir tells of the offsets topic as a whole, for the cluster view
(``offsets_auditor.cluster``): the ``__consumer_offsets`` partitions it holds, the broker's
``offsets.topic.num.partitions`` and where that value came from, and, when the log dir holds a
KRaft ``__cluster_metadata-0``, the topic as that metadata log states it.

Published with the broker's row (``brokers.offsets_partitions_held`` ...) so that the service
can decide the partition count and the coordinators from every broker of a cluster, each
scanned where its disks are. One broker's dirs alone never decide the count.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from offsets_auditor.audit.plan import AuditSettings
from offsets_auditor.cluster.evidence import BrokerEvidence
from offsets_auditor.cluster.kraft_log import METADATA_DIR, KraftReplay, replay
from offsets_auditor.cluster.metadata import PartitionLeadership
from offsets_auditor.findings import Finding
from offsets_auditor.logdir.model import LogDir, held_offsets_partitions

KEY = "offsets.topic.num.partitions"


@dataclass(frozen=True, slots=True)
class TopicEvidence:
    """``evidence`` as the cluster rules take it; ``kraft`` the replay of the log dir's
    ``__cluster_metadata-0`` (``None`` when it has none)."""

    evidence: BrokerEvidence
    kraft: KraftReplay | None

    def findings(self) -> tuple[Finding, ...]:
        """What the metadata log's replay could not read, placed in the log dir."""
        if self.kraft is None:
            return ()
        return tuple(_placed(f) for f in self.kraft.findings)

    def to_json(self) -> dict[str, Any]:
        e = self.evidence
        return {
            "partitions_held": sorted(e.partitions_held),
            "num_partitions": e.offsets_topic_partitions,
            "num_partitions_origin": e.config_origin.value,
            "kraft_metadata": None if self.kraft is None else kraft_json(self.kraft),
        }


def topic_evidence(model: LogDir, settings: AuditSettings) -> TopicEvidence:
    """The evidence of ``model`` given the operator's settings: a broker config counts when
    one was given (``--broker-config``), or when ``--set`` gives the key."""
    overrides = dict(settings.overrides)
    config: dict[str, str] | None = None
    if settings.properties or KEY in overrides:
        config = {**dict(settings.properties), **overrides}
    evidence = BrokerEvidence.from_scan(
        str(model.path),
        broker_id=model.broker_id,
        cluster_id=model.cluster_id,
        partitions_held=held_offsets_partitions(model),
        config=config,
    )
    metadata = model.partition(METADATA_DIR)
    kraft = None if metadata is None else replay(metadata.path)
    return TopicEvidence(evidence, kraft)


def kraft_json(kraft: KraftReplay) -> dict[str, Any]:
    """The replay as JSON: ``exists`` is False when the log states no offsets topic (not
    created yet, or the log is cut short: ``read_to`` says how far it goes)."""
    meta = kraft.metadata
    return {
        "exists": meta is not None and meta.exists,
        "partitions": [] if meta is None else [leadership_json(p) for p in meta.partitions],
        "detail": None if meta is None else meta.detail,
        "read_to": kraft.read_to,
        "snapshot": kraft.snapshot,
    }


def leadership_json(p: PartitionLeadership) -> dict[str, Any]:
    return {
        "partition": p.partition,
        "leader": p.leader,
        "replicas": list(p.replicas),
        "isr": list(p.isr),
        "leader_epoch": p.leader_epoch,
    }


def _placed(f: Finding) -> Finding:
    file = (
        f.file if f.file is None or f.file.startswith(METADATA_DIR) else f"{METADATA_DIR}/{f.file}"
    )
    return Finding(f.kind, f.severity, f.detail, file, f.position, f.field, METADATA_DIR, f.group)
