"""``__consumer_offsets`` as a KRaft cluster's metadata log on disk states it.

A KRaft broker or controller keeps the cluster metadata in ``<metadata.log.dir>/
__cluster_metadata-0``: ``<base>.log`` segments of v2 record batches and, once the log has been
snapshotted, ``<endOffset:%020d>-<epoch:%010d>.checkpoint`` files (A:3.9
``raft/src/main/java/org/apache/kafka/snapshot/Snapshots.java``) holding the whole state as of
``endOffset`` (exclusive), in the same batch format. The state is the newest snapshot plus the
log's records from its end offset on (A:3.9 ``KafkaRaftClient`` loads the latest snapshot, then
replays the log).

:func:`replay` folds the records that describe the offsets topic (:mod:`.kraft_records`) into
one :class:`~offsets_auditor.cluster.metadata.OffsetsTopicMetadata`, as
``PartitionRegistration.merge`` applies them (A:3.9 ``metadata/src/main/java/org/apache/kafka/
metadata/PartitionRegistration.java``): a ``PartitionChangeRecord`` replaces the fields it
carries, and a new leader (anything but ``NO_LEADER_CHANGE``, -2) bumps the leader epoch by one.
Records between ``BeginTransactionRecord`` (apiKey 23) and ``AbortTransactionRecord`` (25) are
dropped, as the metadata loader drops an aborted metadata transaction (KIP-868, 3.6+).

What the disk cannot say: the newest records may be above the quorum's high watermark (written
by a leader but never committed), so a copy's tail can be ahead of what the cluster applied;
and a copy taken from a broker that stopped long ago is that old. :class:`KraftReplay` says the
offset read up to and the snapshot used, so the reader can judge.

Files are read through ``offsets_auditor.logdir.fs`` (read-only, ``pread``), one window at a time.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Final

from offsets_auditor.cluster import kraft_records as kr
from offsets_auditor.cluster.metadata import (
    MetadataSource,
    OffsetsTopicMetadata,
    PartitionLeadership,
)
from offsets_auditor.constants import OFFSETS_TOPIC
from offsets_auditor.errors import DecodeError
from offsets_auditor.findings import Finding, FindingKind, Severity
from offsets_auditor.logdir import fs
from offsets_auditor.reader.columns import Chunk
from offsets_auditor.reader.options import Backend
from offsets_auditor.reader.segment import read_segment

METADATA_DIR: Final = "__cluster_metadata-0"
_SNAPSHOT: Final = re.compile(r"^(\d{20})-(\d{10})\.checkpoint$")
_SEGMENT: Final = re.compile(r"^(\d{20})\.log$")
_BEGIN_TRANSACTION: Final = 23
_END_TRANSACTION: Final = 24
_ABORT_TRANSACTION: Final = 25


@dataclass(frozen=True, slots=True)
class KraftReplay:
    """What a metadata log says of the offsets topic. ``metadata`` is ``None`` when the log
    has nothing to say (no file, or no record of the topic); ``read_to`` is the offset after the
    last record read (``None``: none read); ``snapshot`` the snapshot file started from;
    ``findings`` what could not be read (file, byte position)."""

    metadata: OffsetsTopicMetadata | None
    read_to: int | None
    snapshot: str | None
    findings: tuple[Finding, ...]


@dataclass
class _State:
    """The offsets topic as replayed so far (one instance per replay)."""

    topic_id: str | None = None
    partitions: dict[int, PartitionLeadership] = field(default_factory=dict)
    #: records of an open metadata transaction, applied at its end, dropped at its abort
    pending: list[kr.TopicMetadataRecord] | None = None

    def apply(self, record: kr.TopicMetadataRecord) -> None:
        if self.pending is not None:
            self.pending.append(record)
        else:
            self._apply(record)

    def _apply(self, record: kr.TopicMetadataRecord) -> None:
        if isinstance(record, kr.TopicRecord):
            if record.name == OFFSETS_TOPIC and record.topic_id != self.topic_id:
                self.topic_id, self.partitions = record.topic_id, {}
        elif record.topic_id != self.topic_id:
            return
        elif isinstance(record, kr.RemoveTopicRecord):
            self.topic_id, self.partitions = None, {}
        elif isinstance(record, kr.PartitionRecord):
            self.partitions[record.partition_id] = PartitionLeadership(
                record.partition_id, record.leader, record.replicas, record.isr, record.leader_epoch
            )
        elif isinstance(record, kr.PartitionChangeRecord):
            current = self.partitions.get(record.partition_id)
            if current is None:
                return  # a change to a partition never registered: nothing to merge into
            epoch = current.leader_epoch
            leader = current.leader
            if record.leader != kr.NO_LEADER_CHANGE:
                leader = record.leader
                epoch = None if epoch is None else epoch + 1
            self.partitions[record.partition_id] = replace(
                current,
                leader=leader,
                leader_epoch=epoch,
                isr=current.isr if record.isr is None else record.isr,
                replicas=current.replicas if record.replicas is None else record.replicas,
            )

    def transaction(self, api_key: int) -> None:
        if api_key == _BEGIN_TRANSACTION:
            self.pending = []
        elif api_key == _END_TRANSACTION and self.pending is not None:
            pending, self.pending = self.pending, None
            for record in pending:
                self._apply(record)
        elif api_key == _ABORT_TRANSACTION:
            self.pending = None


def replay(metadata_dir: Path) -> KraftReplay:
    """Replay ``metadata_dir`` (a ``__cluster_metadata-0`` directory): the newest snapshot,
    then every segment record from the snapshot's end offset on."""
    findings: list[Finding] = []
    try:
        listing = fs.list_dir(metadata_dir)
    except OSError as error:
        return KraftReplay(None, None, None, (_unreadable(metadata_dir.name, error),))
    snapshots = sorted(
        (int(m.group(1)), int(m.group(2)), info)
        for info in listing
        if (m := _SNAPSHOT.match(info.name)) and not info.is_dir
    )
    segments = sorted(
        (int(m.group(1)), info)
        for info in listing
        if (m := _SEGMENT.match(info.name)) and not info.is_dir
    )
    state = _State()
    read_to: int | None = None
    snapshot_name = None
    start = 0
    if snapshots:
        start, _epoch, info = snapshots[-1]
        snapshot_name = info.name
        read_to = _read_file(info, 0, state, findings) or start
    elif segments and segments[0][0] > 0:
        findings.append(
            Finding(
                FindingKind.METADATA_LOG_INCOMPLETE,
                Severity.WARNING,
                f"{METADATA_DIR} starts at offset {segments[0][0]} and holds no snapshot: the"
                " records before it are gone, so the offsets topic may be stated in part only",
                file=segments[0][1].name,
            )
        )
    for _base, info in segments:
        last = _read_file(info, start, state, findings)
        if last is not None:
            read_to = max(read_to or 0, last)
    if state.topic_id is None:
        return KraftReplay(None, read_to, snapshot_name, tuple(findings))
    where = f"{metadata_dir} read to offset {read_to}" + (
        f" from snapshot {snapshot_name}" if snapshot_name else ""
    )
    metadata = OffsetsTopicMetadata(
        source=MetadataSource.KRAFT_LOG,
        exists=True,
        partitions=tuple(state.partitions[p] for p in sorted(state.partitions)),
        detail=where,
    )
    return KraftReplay(metadata, read_to, snapshot_name, tuple(findings))


def _read_file(info: fs.FileInfo, start: int, state: _State, findings: list[Finding]) -> int | None:
    """Apply every record of one file from offset ``start`` on; the offset after the last one
    read (``None``: none)."""
    last: int | None = None
    try:
        with fs.open_as_listed(info.path, info.identity, info.size) as source:
            for item in read_segment(source, file=info.name, backend=Backend.PYTHON, digests=False):
                if isinstance(item, DecodeError):
                    findings.append(_decode_finding(info.name, item))
                    continue
                last = _apply_chunk(item, info.name, start, state, findings, last)
    except OSError as error:
        findings.append(_unreadable(info.name, error))
    return last


def _apply_chunk(
    chunk: Chunk, file: str, start: int, state: _State, findings: list[Finding], last: int | None
) -> int | None:
    records = chunk.records
    control = chunk.batches.control
    positions = chunk.batches.position
    for row in range(len(records)):
        offset = int(records.offset[row])
        batch = int(records.batch[row])
        last = offset + 1
        if offset < start or control[batch]:
            continue
        value = chunk.value_bytes(row)
        if value is None:
            continue
        try:
            if _transaction_marker(value, state):
                continue
            record = kr.decode(value)
        except DecodeError as error:
            findings.append(
                Finding(
                    FindingKind.METADATA_RECORD_UNDECODABLE,
                    Severity.WARNING,
                    f"metadata record at offset {offset}: {error.message}",
                    file=file,
                    position=int(positions[batch]),
                    field=error.field,
                )
            )
            continue
        if record is not None:
            state.apply(record)
    return last


def _transaction_marker(value: bytes, state: _State) -> bool:
    """Begin/End/AbortTransactionRecord (frame 1, apiKey 23-25: one byte each as varints)."""
    if (
        len(value) >= 2
        and value[0] == kr.FRAME_VERSION
        and value[1]
        in (
            _BEGIN_TRANSACTION,
            _END_TRANSACTION,
            _ABORT_TRANSACTION,
        )
    ):
        state.transaction(value[1])
        return True
    return False


def _decode_finding(file: str, error: DecodeError) -> Finding:
    return Finding(
        FindingKind.METADATA_LOG_UNDECODABLE,
        Severity.WARNING,
        error.message,
        file=file,
        position=error.position,
        field=error.field,
    )


def _unreadable(name: str, error: OSError) -> Finding:
    return Finding(
        FindingKind.METADATA_LOG_UNREADABLE,
        Severity.WARNING,
        f"cannot read {name}: {error.strerror or error}",
        file=name,
    )
