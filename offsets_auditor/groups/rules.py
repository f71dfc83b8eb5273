"""How each broker version's coordinator loads a ``__consumer_offsets`` partition, as data.

Every rule below was read in Kafka's source (``A:<tag>`` = apache/kafka at that tag; paths
relative to the repository root; ``GMM`` = the classic ``GroupMetadataManager.scala``, under
``core/src/main/scala/kafka/coordinator/`` up to 0.10.x and ``.../coordinator/group/`` from
0.11):

1. Where the load starts. A:0.9.0.1 and A:0.10.1.0 ``GMM.loadGroupsForPartition``:
   ``log.logSegments.head.baseOffset``. A:0.11.0.0 .. A:3.8.0 ``GMM.doLoadGroupsAndOffsets``:
   ``log.logStartOffset`` (batches wholly below it are not read).
2. Latest record wins per (group, topic, partition); a null value removes it (all versions).
   Group metadata: latest record wins, a tombstone removes the group (all versions).
3. Transactions (A:0.11.0.0+): records of a transactional batch go to
   ``pendingOffsets[producerId]``; a tombstone there removes only that producer's pending
   entry. A control batch's first record decides: COMMIT moves the producer's pending
   offsets into the committed set, replacing an existing one only if it ``olderThan`` the
   pending one (``GroupMetadata.scala`` ``CommitRecordMetadataAndOffset.olderThan``:
   ``appendedBatchOffset.get < that.appendedBatchOffset.get``); then the producer's pending
   set is dropped whatever the control type (ABORT, or anything else).
4. The offset ``olderThan`` compares (``appendedBatchOffset``): A:0.11.0.0, A:1.0.0
   ``Some(batch.baseOffset)``; A:1.1.0 .. A:3.8.0 the offset of the first record read from
   the batch (``batchBaseOffset = Some(record.offset)``, which differs from the batch's base
   offset once the cleaner removed the batch's first records).
5. State (A:0.10.1.0+ ``GMM.readGroupMessageValue``): ``if (members.isEmpty) Empty else
   Stable``; groups with offsets but no group metadata are created ``Empty``
   (A:2.3.0 ``new GroupMetadata(groupId, Empty, time)``; A:0.10.1.0 ``new GroupMetadata(groupId)``
   whose default state is ``Empty``). A:0.9.0.1 / A:0.10.0.1 ``GroupMetadata``: every loaded
   group starts ``Stable``; offsets without a group have no group object (DescribeGroup:
   ``Dead``).
6. Unknown key versions: up to A:3.4.0 ``GMM.readMessageKey`` throws (``Unknown group
   metadata message version``; A:0.9.0.1 ``KafkaException("Unknown offset schema version")``),
   which aborts the whole partition's load ("Error loading offsets from ..."). A:3.5.0+
   warns "Unknown message key with version N ... Ignoring it." and goes on.
7. The new coordinator (A:3.7.0+ when ``group.coordinator.new.enable``; default in 4.0;
   A:3.8.0 ``core/.../group/CoordinatorLoaderImpl.scala``, ``group-coordinator/.../
   OffsetMetadataManager.java``): ``replay(record.offset(), batch.producerId, ...)``: the
   offset ``olderThan`` compares is the record's own offset; a commit is transactional when
   ``producerId != NO_PRODUCER_ID``; a tombstone removes the committed offset AND the pending
   ones of every open transaction of the group; control records: COMMIT/ABORT only, every
   record of the control batch; a COMMIT replaces an existing offset only if the pending
   one's record offset is greater; unknown record types are skipped with a warning.
8. Where the load ends: A:0.9.0.1 / A:0.10.1.0 the high watermark (``getHighWatermark``);
   A:0.11.0.0+ the log end offset (A:2.3.0 ``logEndOffset``). We replay every whole record
   on disk, which is the log end offset (and, for a single replica, the high watermark too).
9. A record the load cannot read (an exception out of the load loop). A:0.9.0.1 / A:0.10.0.1
   ``GMM.loadGroupsForPartition`` puts each offset into the cache as it reads it
   (``putOffset``) and adds the groups after the loop: the offsets read before the exception
   stay, no group metadata is loaded; logged "Error in loading offsets from
   [__consumer_offsets,N]" (a ``TopicAndPartition``). A:0.10.1.0 collects ``loadedOffsets``
   and applies them after the loop: nothing of the partition is loaded (same log line);
   A:0.10.2.0 .. A:3.8.0 likewise, logged "Error loading offsets from
   __consumer_offsets-N". In every classic version the ``finally`` adds the partition to
   ``ownedPartitions``: the coordinator answers for its groups with what was loaded, and a
   consumer that finds no committed offset starts from ``auto.offset.reset``. The new
   coordinator (A:3.8.0 ``CoordinatorRuntime``) logs "Failed to load metadata from ... due
   to ..." and the partition's coordinator goes to FAILED: its groups get NOT_COORDINATOR.
10. An entry that runs past the end of a segment that is not the last (a partial write, or a
   damaged size field too large). A:0.9.0.1 .. A:0.10.1.x: ``FileMessageSet.searchFor`` returns
   that entry's position (its offset is the one the load asks for next); the load reads no
   whole message there, its offset does not move, and it asks again, forever: the partition
   never finishes loading, and every offsets partition scheduled after it on this broker waits
   behind it (the manager's scheduler has one thread; its groups get NOT_COORDINATOR_FOR_GROUP).
   A:0.10.2.0+: ``FileRecords.searchForOffsetWithSize`` finds no whole entry there
   (``FileLogInputStream.nextBatch`` returns null past the end) and ``Log.read`` moves on to the
   next segment: the load finishes without the rest of that segment. Both seen on real brokers
   (tests/fixtures/kafka-*/corrupt-segments).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from offsets_auditor.versions import KafkaVersion


class LoadStart(StrEnum):
    FIRST_SEGMENT = "first-segment"
    LOG_START_OFFSET = "log-start-offset"


class LoadFailure(StrEnum):
    """What an exception out of the load leaves (rule 9)."""

    KEEPS_OFFSETS_READ = "keeps-offsets-read"
    LOADS_NOTHING = "loads-nothing"
    COORDINATOR_FAILS = "coordinator-fails"


class CommitOffsetOf(StrEnum):
    """Which offset stands for a commit in ``olderThan`` comparisons (rules 4 and 7)."""

    BATCH_BASE_OFFSET = "batch-base-offset"
    FIRST_RECORD_OF_BATCH = "first-record-of-batch"
    RECORD = "record"


@dataclass(frozen=True, slots=True)
class LoaderRules:
    """The load semantics of one broker version (see the module docstring, rules 1-7)."""

    version: KafkaVersion
    start: LoadStart
    transactions: bool
    commit_offset_of: CommitOffsetOf
    unknown_key_fails_load: bool
    empty_state: bool
    new_coordinator: bool
    load_failure: LoadFailure = LoadFailure.LOADS_NOTHING
    #: rule 10: a partial entry mid-log stalls the load for good (else the load skips the rest
    #: of its segment)
    partial_entry_stalls_load: bool = False

    def load_error(self, partition: int) -> str:
        """The line the broker logs when the load of ``partition`` throws (rule 9)."""
        if self.new_coordinator:
            return f"Failed to load metadata from __consumer_offsets-{partition} with epoch ..."
        if not self.version.at_least("0.10.2"):
            return f"Error in loading offsets from [__consumer_offsets,{partition}]"
        return f"Error loading offsets from __consumer_offsets-{partition}"

    def after_load_error(self) -> str:
        """What the coordinator serves after the load threw (rule 9)."""
        if self.load_failure is LoadFailure.COORDINATOR_FAILS:
            return (
                "the partition's coordinator fails: its groups get NOT_COORDINATOR until"
                " leadership moves"
            )
        if self.load_failure is LoadFailure.KEEPS_OFFSETS_READ:
            return (
                "the offsets read before it stay loaded, later ones and all group metadata do"
                " not; the coordinator serves the partition anyway, so a consumer whose offset"
                " was not loaded starts from auto.offset.reset"
            )
        return (
            "nothing of the partition is loaded, yet the coordinator serves it: every group"
            " coordinated here has no committed offsets, and its consumers start from"
            " auto.offset.reset"
        )

    @property
    def label(self) -> str:
        coordinator = "new coordinator" if self.new_coordinator else "classic coordinator"
        return f"Kafka {self.version} ({coordinator})"


def loader_rules(version: KafkaVersion | str, new_coordinator: bool | None = None) -> LoaderRules:
    """The loader of ``version``. ``new_coordinator``: whether the KIP-848 coordinator runs;
    ``None`` means the version's default (off before 4.0, on from 4.0; it exists from 3.7).
    """
    v = KafkaVersion.parse(version) if isinstance(version, str) else version
    new = v.at_least("4.0") if new_coordinator is None else new_coordinator
    if new and not v.at_least("3.7"):
        raise ValueError(f"Kafka {v} has no new group coordinator (it came in 3.7)")
    if new:
        commit_offset_of = CommitOffsetOf.RECORD
    elif v.at_least("1.1"):
        commit_offset_of = CommitOffsetOf.FIRST_RECORD_OF_BATCH
    else:
        commit_offset_of = CommitOffsetOf.BATCH_BASE_OFFSET
    return LoaderRules(
        version=v,
        start=LoadStart.LOG_START_OFFSET if v.at_least("0.11") else LoadStart.FIRST_SEGMENT,
        transactions=v.at_least("0.11"),
        commit_offset_of=commit_offset_of,
        unknown_key_fails_load=not new and not v.at_least("3.5"),
        empty_state=v.at_least("0.10.1"),
        new_coordinator=new,
        partial_entry_stalls_load=not new and not v.at_least("0.10.2"),
        load_failure=LoadFailure.COORDINATOR_FAILS
        if new
        else LoadFailure.LOADS_NOTHING
        if v.at_least("0.10.1")
        else LoadFailure.KEEPS_OFFSETS_READ,
    )
