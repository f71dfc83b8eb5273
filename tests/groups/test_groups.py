"""Acceptance: groups recovered from disk are what the real brokers loaded and reported.

Expected values come from each fixture's own files: the broker's OffsetFetch answers and
``kafka-consumer-groups.sh`` output captured by the scenario (``expected-offsets.json``,
``transactions.json``, ``consumer-groups-describe.txt``), the broker's ``server.log``, the
fixture README (``SHARED-README.md``), and Kafka's own ``DumpLogSegments`` output. Scenarios
another run may still be producing are skipped until their files exist.
"""

from __future__ import annotations

import gzip
import json
import os
import re
import shutil
import subprocess
import time
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any, cast

import pytest

from offsets_auditor.audit.group_recovery import plan, recover, replay_partition
from offsets_auditor.cli.main import main
from offsets_auditor.coordinator import coordinator_partition
from offsets_auditor.errors import DecodeError
from offsets_auditor.groups.delta import DeltaBuilder
from offsets_auditor.groups.model import GroupState, GroupStateName, PartitionGroups
from offsets_auditor.groups.replay import GroupsFold
from offsets_auditor.groups.rules import CommitOffsetOf, LoaderRules, LoadStart, loader_rules
from offsets_auditor.logdir import fs
from offsets_auditor.logdir.model import PartitionDir, offsets_partitions, read_log_dir
from offsets_auditor.reader.decode import DecodedRecord, decode_segment
from offsets_auditor.reader.segment import read_segment
from offsets_auditor.records.control import ControlRecord
from offsets_auditor.records.model import BatchHeader, Record
from offsets_auditor.schemas import RecordKey, RecordValue
from tests.support.kafka_dump import read_dump
from tests.support.offsets_segment import BytesSource, encodable, segment_bytes

FIXTURES = Path(__file__).parent.parent / "fixtures"
K23 = FIXTURES / "kafka-2.3.0"
SMALL_GZIP = K23 / "small-gzip"
CLEANER_DIED = FIXTURES / "kafka-0.9.0.1" / "cleaner-died"
COMPACTION = ["compaction-none", "compaction-snappy", "compaction-lz4", "compaction-zstd"]
REPO = Path(__file__).parent.parent.parent


def offsets_partitions_count(fixture: Path) -> int:
    """``offsets.topic.num.partitions`` from the broker config the scenario ran with."""
    for name in ("broker-server.properties", "broker-server-load.properties"):
        path = fixture / name
        if path.exists():
            match = re.search(r"^offsets\.topic\.num\.partitions=(\d+)$", path.read_text(), re.M)
            if match:
                return int(match.group(1))
    raise AssertionError(f"no offsets.topic.num.partitions in {fixture}")


def committed_view(
    groups: list[GroupState] | tuple[GroupState, ...],
) -> dict[str, dict[str, dict[str, object]]]:
    """The OffsetFetch view: group -> {"topic-partition": {"offset", "metadata"}}."""
    return {
        g.group: {
            f"{o.topic}-{o.partition}": {"offset": o.offset, "metadata": o.metadata}
            for o in g.offsets
        }
        for g in groups
    }


def partition_records(part: PartitionDir) -> Iterator[DecodedRecord | DecodeError]:
    """Every decoded record (and problem) of a partition's segments, in offset order."""
    for segment in part.segments:
        with fs.ReadOnlyFile(part.path / segment.log.name) as source:
            yield from decode_segment(source, file=f"{part.name}/{segment.log.name}")


def replay_segment(rules: LoaderRules, records: list[DecodedRecord]) -> PartitionGroups:
    """``records`` written as a real segment (``tests/support/offsets_segment.py``) and replayed
    by what production runs on it: the C reader's chunks into ``DeltaBuilder.add`` (the
    columns' rules for offset commits, the one-by-one rules for the rest), then the fold."""
    source = BytesSource(segment_bytes(records))
    fold = GroupsFold(rules, 0, 1)
    builder = DeltaBuilder(rules, "s.log")
    for item in read_segment(source, file="s.log"):
        assert not isinstance(item, DecodeError), item
        builder.add(item)
    fold.add(builder.result())
    return fold.result()


def replay_records(
    rules: LoaderRules,
    records: list[DecodedRecord],
    *,
    partition: int = 0,
    partitions_count: int = 1,
    per_record: bool = False,
) -> PartitionGroups:
    """``records`` folded as one segment's delta, or (``per_record``) each record as a segment
    of its own: the fold must not care where segments begin."""
    fold = GroupsFold(rules, partition, partitions_count)
    builder = DeltaBuilder(rules, None)
    for record in records:
        builder.add_record(record)
        if per_record:
            fold.add(builder.result())
            builder = DeltaBuilder(rules, None)
    fold.add(builder.result())
    return fold.result()


def history(fixture: Path, version: str, partition: int) -> Iterator[tuple[int, PartitionGroups]]:
    """The loader's conclusion after each record of one offsets partition (small partitions
    only): (offset of the record just replayed, state). Each record is folded as a delta of its
    own, so this also shows that the fold's result does not depend on where deltas begin."""
    part = next(p for p in offsets_partitions(read_log_dir(fixture)) if p.partition == partition)
    rules = loader_rules(version)
    fold = GroupsFold(rules, partition, offsets_partitions_count(fixture.parent))
    for item in partition_records(part):
        if isinstance(item, DecodedRecord):
            builder = DeltaBuilder(rules, item.file)
            builder.add_record(item)
            fold.add(builder.result())
            yield item.record.offset, fold.result()


def group_in(result: PartitionGroups, name: str) -> GroupState | None:
    return next((g for g in result.groups if g.group == name), None)


# -- the per-version loader rules (Kafka source citations in offsets_auditor/groups/rules.py) --

# (case, version, start, transactions, commit_offset_of, unknown key fails the load, Empty state)
RULES = [
    # 1. 0.9: from the first segment, no transactions, unknown keys throw, no Empty state.
    (1, "0.9.0.1", LoadStart.FIRST_SEGMENT, False, CommitOffsetOf.BATCH_BASE_OFFSET, True, False),
    # 2. 0.10.1 introduced the Empty state (readGroupMessageValue: members.isEmpty -> Empty).
    (2, "0.10.1.0", LoadStart.FIRST_SEGMENT, False, CommitOffsetOf.BATCH_BASE_OFFSET, True, True),
    # 3. 0.11 loads from logStartOffset and has transactions, olderThan on batch.baseOffset.
    (3, "0.11.0.0", LoadStart.LOG_START_OFFSET, True, CommitOffsetOf.BATCH_BASE_OFFSET, True, True),
    # 4. 1.1 compares the first record read from the batch (batchBaseOffset = record.offset).
    (
        4,
        "1.1.0",
        LoadStart.LOG_START_OFFSET,
        True,
        CommitOffsetOf.FIRST_RECORD_OF_BATCH,
        True,
        True,
    ),
    # 5. 2.3.0, the fixtures' broker: as 1.1.
    (
        5,
        "2.3.0",
        LoadStart.LOG_START_OFFSET,
        True,
        CommitOffsetOf.FIRST_RECORD_OF_BATCH,
        True,
        True,
    ),
    # 6. 3.5 ignores unknown key versions with a warning instead of failing the load.
    (
        6,
        "3.5.0",
        LoadStart.LOG_START_OFFSET,
        True,
        CommitOffsetOf.FIRST_RECORD_OF_BATCH,
        False,
        True,
    ),
    # 7. 4.0: the new coordinator by default; olderThan compares each record's own offset.
    (7, "4.0.0", LoadStart.LOG_START_OFFSET, True, CommitOffsetOf.RECORD, False, True),
]


@pytest.mark.parametrize(
    ("case", "version", "start", "transactions", "commit_offset_of", "fails", "empty"), RULES
)
def test_loader_rules_per_version(
    case: int,
    version: str,
    start: LoadStart,
    transactions: bool,
    commit_offset_of: CommitOffsetOf,
    fails: bool,
    empty: bool,
) -> None:
    rules = loader_rules(version)
    assert (
        rules.start,
        rules.transactions,
        rules.commit_offset_of,
        rules.unknown_key_fails_load,
        rules.empty_state,
    ) == (start, transactions, commit_offset_of, fails, empty), f"case {case}"


def test_new_coordinator_does_not_exist_before_3_7() -> None:
    with pytest.raises(ValueError, match=r"3\.7"):
        loader_rules("3.6.0", new_coordinator=True)
    assert loader_rules("3.8.0", new_coordinator=True).new_coordinator
    assert not loader_rules("3.8.0").new_coordinator


# -- the replay rules, case by case (records typed as the decoder yields them) -------------------

_POSITIONS = iter(range(10**9))


def rec(
    offset: int,
    key: RecordKey,
    value: RecordValue | None,
    *,
    producer: int | None = None,
    control: str | None = None,
    batch: int | None = None,
) -> DecodedRecord:
    """A decoded record at ``offset``; records sharing ``batch`` share a batch header."""
    header = BatchHeader(
        position=next(_POSITIONS) if batch is None else -batch,
        size=100,
        magic=2,
        base_offset=offset if batch is None else batch,
        last_offset=offset,
        codec=0,
        timestamp_type=0,
        max_timestamp=0,
        crc=0,
        is_transactional=producer is not None,
        is_control=control is not None,
        producer_id=-1 if producer is None else producer,
        producer_epoch=-1 if producer is None else 3,
    )
    record = Record(offset, 0, b"k", None if value is None else b"v", 2)
    marker = (
        None if control is None else ControlRecord(control, {"abort": 0, "commit": 1}[control], 0)
    )
    return DecodedRecord("s.log", header, record, None if control else key, value, marker)


def commit_key(group: str = "g", topic: str = "t", partition: int = 0) -> RecordKey:
    return RecordKey("offset_commit", 1, group, topic, partition)


def commit(offset: int) -> RecordValue:
    return RecordValue(
        3, {"offset": offset, "leader_epoch": -1, "metadata": "", "commit_timestamp": 1}
    )


def metadata(members: int) -> RecordValue:
    member = {
        "member_id": "m",
        "client_id": "c",
        "client_host": "/h",
        "rebalance_timeout": 1,
        "session_timeout": 1,
        "subscription": b"",
        "assignment": {"version": 0, "assigned_partitions": [{"topic": "t", "partitions": [0]}]},
    }
    return RecordValue(
        1,
        {
            "protocol_type": "consumer",
            "generation": 2,
            "protocol": "range",
            "leader": "m",
            "members": [member] * members,
        },
    )


GROUP_KEY = RecordKey("group_metadata", 2, "g")
CG = {"group_id": "g"}
CG_MEMBER = {"group_id": "g", "member_id": "m"}

K, C, NO_METADATA = commit_key, commit, "Empty (no group metadata)"


def marker(offset: int, producer: int, kind: str) -> DecodedRecord:
    return rec(offset, commit_key(), None, producer=producer, control=kind)


def cg(offset: int, record_type: int, name: str, fields: Mapping[str, object]) -> DecodedRecord:
    """A new-coordinator consumer-group record of group "g" (member "m" for member records)."""
    key_fields = CG_MEMBER if record_type in (5, 7, 8) else CG
    key = RecordKey(f"consumer_group_{name}", record_type, "g", fields=key_fields)
    return rec(offset, key, RecordValue(0, fields))


MEMBER = {"client_id": "c", "client_host": "/h", "subscribed_topic_names": ["t"]}

# (case, version, records, expected {group: (state, committed {tp: offset}, pending {tp: offset})})
REPLAY = [
    # 1. The latest commit per (group, topic, partition) wins.
    (1, "2.3.0", [rec(0, K(), C(5)), rec(1, K(), C(7))], {"g": (NO_METADATA, {"t-0": 7}, {})}),
    # 2. A tombstone removes the offset; a group left with nothing is Dead.
    (2, "2.3.0", [rec(0, K(), C(5)), rec(1, K(), None)], {"g": ("Dead", {}, {})}),
    # 3. A transactional commit is pending until its producer's COMMIT marker ...
    (3, "2.3.0", [rec(0, K(), C(5), producer=9)], {"g": (NO_METADATA, {}, {"t-0": 5})}),
    # 4. ... another producer's marker does not touch it ...
    (4, "2.3.0", [rec(0, K(), C(5), producer=9), marker(1, 8, "commit")],
     {"g": (NO_METADATA, {}, {"t-0": 5})}),
    # 5. ... its own COMMIT makes it committed.
    (5, "2.3.0", [rec(0, K(), C(5), producer=9), marker(1, 9, "commit")],
     {"g": (NO_METADATA, {"t-0": 5}, {})}),
    # 6. ABORT drops it; nothing was ever committed, so the loader has no such group at all.
    (6, "2.3.0", [rec(0, K(), C(5), producer=9), marker(1, 9, "abort")], {}),
    # 7. olderThan: a COMMIT does not replace a plain commit written after the transactional one
    (7, "2.3.0", [rec(0, K(), C(5), producer=9), rec(1, K(), C(6)), marker(2, 9, "commit")],
     {"g": (NO_METADATA, {"t-0": 6}, {})}),
    # 8. ... but replaces one written before it.
    (8, "2.3.0", [rec(0, K(), C(6)), rec(1, K(), C(5), producer=9), marker(2, 9, "commit")],
     {"g": (NO_METADATA, {"t-0": 5}, {})}),
    # 9. Classic: a transactional tombstone removes only that producer's pending offset.
    (9, "2.3.0", [rec(0, K(), C(6)), rec(1, K(), C(5), producer=9), rec(2, K(), None, producer=9)],
     {"g": (NO_METADATA, {"t-0": 6}, {})}),
    # 10. New coordinator: a tombstone removes the committed offset AND every pending one.
    (10, "4.0.0", [rec(0, K(), C(6)), rec(1, K(), C(5), producer=9), rec(2, K(), None)],
     {"g": ("Dead", {}, {})}),
    # 11. Group metadata: members -> Stable, none -> Empty (0.10.1+); a tombstone -> Dead.
    (11, "2.3.0", [rec(0, GROUP_KEY, metadata(1))], {"g": ("Stable", {}, {})}),
    (12, "2.3.0", [rec(0, GROUP_KEY, metadata(0))], {"g": ("Empty", {}, {})}),
    (13, "2.3.0", [rec(0, GROUP_KEY, metadata(1)), rec(1, GROUP_KEY, None)],
     {"g": ("Dead", {}, {})}),
    # 14. 0.9: every loaded group is Stable; offsets without metadata have no group (Dead).
    (14, "0.9.0.1", [rec(0, GROUP_KEY, metadata(0))], {"g": ("Stable", {}, {})}),
    (15, "0.9.0.1", [rec(0, K(), C(5))], {"g": ("Dead (no group metadata)", {"t-0": 5}, {})}),
    # 16. 0.9 has no transactions: a transactional batch is an ordinary commit there.
    (16, "0.9.0.1", [rec(0, K(), C(5), producer=9)],
     {"g": ("Dead (no group metadata)", {"t-0": 5}, {})}),
    # 17. Offsets committed after the group's tombstone: the loader creates the group Empty.
    (17, "2.3.0", [rec(0, GROUP_KEY, metadata(1)), rec(1, GROUP_KEY, None), rec(2, K(), C(3))],
     {"g": (NO_METADATA, {"t-0": 3}, {})}),
    # 18. 2.3: olderThan compares the first record read from each batch (rule 4): the pending
    #     commit at 11 sits in a batch whose first record is 10 < 12, so it loses to 12. (Batches
    #     never interleave, so batch base, first record or own offset give the same outcome.)
    (18, "2.3.0", [rec(10, K("g", "u"), C(1), producer=9, batch=10),
                   rec(11, K(), C(5), producer=9, batch=10),
                   rec(12, K(), C(6)), marker(13, 9, "commit")],
     {"g": (NO_METADATA, {"t-0": 6, "u-0": 1}, {})}),
    # 19. New coordinator consumer group: epochs equal and the member stable -> Stable.
    (19, "4.0.0", [cg(0, 3, "metadata", {"epoch": 4}),
                   cg(1, 5, "member_metadata", MEMBER),
                   cg(2, 6, "target_assignment_metadata", {"assignment_epoch": 4}),
                   cg(3, 8, "current_member_assignment", {"member_epoch": 4, "state": 0})],
     {"g": ("Stable", {}, {})}),
    # 20. ... a group epoch above the target assignment epoch -> Assigning.
    (20, "4.0.0", [cg(0, 3, "metadata", {"epoch": 5}), cg(1, 5, "member_metadata", MEMBER)],
     {"g": ("Assigning", {}, {})}),
    # 21. ... a member behind the target assignment epoch -> Reconciling.
    (21, "4.0.0", [cg(0, 3, "metadata", {"epoch": 4}),
                   cg(1, 5, "member_metadata", MEMBER),
                   cg(2, 6, "target_assignment_metadata", {"assignment_epoch": 4}),
                   cg(3, 8, "current_member_assignment", {"member_epoch": 3, "state": 0})],
     {"g": ("Reconciling", {}, {})}),
]  # fmt: skip


@pytest.mark.parametrize(
    "via", ["one-delta", "delta-per-record", "segment-bytes"], ids=lambda v: str(v)
)
@pytest.mark.parametrize(("case", "version", "records", "expected"), REPLAY)
def test_replay_rules(
    case: int,
    version: str,
    records: list[DecodedRecord],
    expected: dict[str, tuple[str, dict[str, int], dict[str, int]]],
    via: str,
) -> None:
    """Each case three ways: typed records one at a time into one delta or a delta each, and
    (``segment-bytes``) written as a real segment and read by the C reader into the columns
    production replays: the table proves the code that runs."""
    rules = loader_rules(version)
    if via == "segment-bytes":
        if not encodable(records):
            pytest.skip("new-coordinator records: no encoder here (replayed one by one anyway)")
        result = replay_segment(rules, records)
    else:
        result = replay_records(rules, records, per_record=via == "delta-per-record")
    got = {
        g.group: (
            g.state.value,
            {f"{o.topic}-{o.partition}": o.offset for o in g.offsets},
            {
                f"{p.offset.topic}-{p.offset.partition}": p.offset.offset
                for p in g.pending_transactional_offsets
            },
        )
        for g in result.groups
    }  # fmt: skip
    assert got == expected, f"case {case}"


def test_unknown_record_types_are_counted_and_what_the_broker_would_do_is_said() -> None:
    """Rule 6: up to 3.4 the loader throws on an unknown key version (a finding); 3.5+ skips."""
    unknown = RecordKey("unknown", 99, None)
    records = [rec(0, unknown, None), rec(1, unknown, None), rec(2, commit_key(), commit(1))]
    for version, findings in (("2.3.0", 1), ("3.5.0", 0)):
        result = replay_records(loader_rules(version), records)
        assert result.unknown_record_types == {99: 2}
        assert [f.kind for f in result.findings] == ["unknown-record-type"] * findings
        assert [g.group for g in result.groups] == ["g"]


# -- kafka-2.3.0/small-gzip ------------------------------------------------------------------


def shared_readme_section(name: str) -> str:
    text = (FIXTURES / "SHARED-README.md").read_text()
    return text.split(f"## {name}\n", 1)[1].split("\n## ", 1)[0]


def test_small_gzip_every_group_the_broker_expired_is_dead() -> None:
    """server.log: "Group X transitioned to Dead" for every group, and those groups' records
    end in tombstones: nothing is left to load."""
    dead = set(
        re.findall(r"Group (\S+) transitioned to Dead", (SMALL_GZIP / "server.log").read_text())
    )
    recovered = recover(SMALL_GZIP / "kafka-logs", "2.3.0", offsets_partitions_count(SMALL_GZIP))
    assert dead and {g.group for g in recovered.groups} == dead
    for group in recovered.groups:
        assert group.state is GroupStateName.DEAD, group
        assert group.offsets == () and group.pending_transactional_offsets == ()
        assert group.removed_at_log_offset is not None
    assert recovered.findings == ()


def test_small_gzip_committed_transaction_commits_and_aborted_one_never_does() -> None:
    """README: 'exactly-once-etl' by 'payments-tx': one committed (offset C), one aborted
    (offset A). Offset by offset through the partition, the loader shows A only as pending,
    C as committed once its COMMIT marker is read, and A never as committed."""
    section = shared_readme_section("kafka-2.3.0/small-gzip")
    match = re.search(
        r"'(\S+)' by transactional id '\S+':\s+one committed \(offset (\d+)\), one aborted"
        r" \(offset (\d+)\)",
        section,
    )
    assert match, section
    group, committed, aborted = match.group(1), int(match.group(2)), int(match.group(3))
    partition = coordinator_partition(group, offsets_partitions_count(SMALL_GZIP))
    seen_committed = seen_pending_aborted = False
    aborted_pending_then_dropped = False
    for _, result in history(SMALL_GZIP / "kafka-logs", "2.3.0", partition):
        state = group_in(result, group)
        if state is None:
            continue
        committed_offsets = {o.offset for o in state.offsets}
        pending_offsets = {p.offset.offset for p in state.pending_transactional_offsets}
        assert aborted not in committed_offsets
        if committed in committed_offsets:
            seen_committed = True
            assert all(o.producer_id is not None for o in state.offsets if o.offset == committed)
        if aborted in pending_offsets:
            seen_pending_aborted = True
        elif seen_pending_aborted:
            aborted_pending_then_dropped = True
    assert seen_committed and seen_pending_aborted and aborted_pending_then_dropped


def test_small_gzip_group_metadata_before_its_tombstone() -> None:
    """server.log: "Group web-analytics transitioned to Dead in generation G": just before
    its group tombstone the loader has the group's last metadata, generation G, Empty (0
    members), and after the tombstone the group is Dead."""
    match = re.search(
        r"Group web-analytics transitioned to Dead in generation (\d+)",
        (SMALL_GZIP / "server.log").read_text(),
    )
    assert match
    generation = int(match.group(1))
    partition = coordinator_partition("web-analytics", offsets_partitions_count(SMALL_GZIP))
    states = [
        group_in(r, "web-analytics")
        for _, r in history(SMALL_GZIP / "kafka-logs", "2.3.0", partition)
    ]
    with_metadata = [s for s in states if s is not None and s.has_group_metadata]
    assert with_metadata
    last = with_metadata[-1]
    assert (last.state, last.generation, last.protocol_type) == (
        GroupStateName.EMPTY,
        generation,
        "consumer",
    )
    final = states[-1]
    assert final is not None and final.state is GroupStateName.DEAD
    assert final.removed_at_log_offset is not None
    assert last.metadata_log_offset is not None
    assert final.removed_at_log_offset > last.metadata_log_offset


# -- kafka-0.9.0.1/cleaner-died --------------------------------------------------------------


def test_cleaner_died_partition_2_agrees_with_kafkas_own_dump() -> None:
    """Kafka 0.9.0.1's DumpLogSegments output of __consumer_offsets-2's first segment, replayed
    as last-commit-wins: the same offsets as ours for the same records."""
    dumped = read_dump(CLEANER_DIED / "dump-offsets-decoder-p2-seg0.txt.gz")
    expected: dict[str, dict[str, int]] = {}
    for record in dumped:
        assert record.key is not None and record.key.startswith("offset::")
        group, topic, partition = record.key[len("offset::") :].rsplit(":", 2)
        if record.payload is None:
            expected.get(group, {}).pop(f"{topic}-{partition}", None)
        else:
            expected.setdefault(group, {})[f"{topic}-{partition}"] = int(
                record.payload.split(":", 1)[0]
            )
    end = dumped[-1].offset + 1
    part = next(
        p for p in offsets_partitions(read_log_dir(CLEANER_DIED / "kafka-logs")) if p.partition == 2
    )
    model = read_log_dir(CLEANER_DIED / "kafka-logs")
    groups_plan = plan(model, loader_rules("0.9.0.1"), offsets_partitions_count(CLEANER_DIED))
    replayed = replay_partition(part, groups_plan, end_offset=end)
    ours = {
        g.group: {k: v["offset"] for k, v in committed_view([g])[g.group].items()}
        for g in replayed.groups
    }
    assert ours == expected
    # 0.9 has no Empty state: offsets without group metadata have no group object at all
    assert {g.state for g in replayed.groups} == {GroupStateName.DEAD_NO_METADATA}


def test_cleaner_died_dead_group_and_expired_offsets() -> None:
    """server.log: "Group G generation N is dead and removed" and "Removed K expired offsets":
    G is Dead (group tombstone); exactly K offset tombstones exist and none of their offsets is
    recovered; other groups keep their last commit, metadata included."""
    log = (CLEANER_DIED / "server.log").read_text()
    dead = re.findall(r"Group (\S+) generation (\d+) is dead and removed", log)
    expired = sum(int(n) for n in re.findall(r"Removed (\d+) expired offsets", log))
    assert dead and expired
    logdir = read_log_dir(CLEANER_DIED / "kafka-logs")
    count = offsets_partitions_count(CLEANER_DIED)
    tombstoned: set[tuple[str, str, int]] = set()
    last: dict[tuple[str, str, int], tuple[int, str]] = {}
    for part in offsets_partitions(logdir):
        for item in partition_records(part):
            if not isinstance(item, DecodedRecord) or item.key is None:
                continue
            if item.key.key_type == "offset_commit":
                k = (str(item.key.group), str(item.key.topic), int(item.key.partition or 0))
                if item.value is None:
                    tombstoned.add(k)
                elif isinstance(item.value, RecordValue):
                    value = item.value.fields
                    last[k] = (cast(int, value["offset"]), cast(str, value["metadata"]))
    assert len(tombstoned) == expired
    recovered = recover(logdir, "0.9.0.1", count)
    by_name = {g.group: g for g in recovered.groups}
    for group, generation in dead:
        assert by_name[group].state is GroupStateName.DEAD
        assert by_name[group].generation is None  # the loader forgot it with the tombstone
        assert int(generation) >= 1
    for group, topic, partition in tombstoned:
        assert by_name[group].offset_for(topic, partition) is None
    for (group, topic, partition), (offset, metadata) in last.items():
        if (group, topic, partition) in tombstoned:
            continue
        o = by_name[group].offset_for(topic, partition)
        assert o is not None and (o.offset, o.metadata) == (offset, metadata)
        assert o.expire_timestamp is not None and o.expire_timestamp > o.commit_timestamp  # v1
    assert any(o.metadata for g in recovered.groups for o in g.offsets)


# -- kafka-2.3.0/compaction-* (the broker's OffsetFetch answers at capture time) ---------------


def compaction_fixture(name: str) -> tuple[Path, dict[str, Any]]:
    fixture = K23 / name
    expected_file = fixture / "expected-offsets.json"
    assert expected_file.exists() and (fixture / "kafka-logs").is_dir(), (
        f"{fixture} is missing: regenerate it (scripts/fixtures/)"
    )
    return fixture, json.loads(expected_file.read_text())


@pytest.mark.parametrize("name", COMPACTION)
def test_compaction_recovered_offsets_equal_the_brokers(name: str) -> None:
    fixture, expected = compaction_fixture(name)
    recovered = recover(fixture / "kafka-logs", "2.3.0", offsets_partitions_count(fixture))
    view = committed_view(recovered.groups)
    broker = expected["broker_committed_offsets"]
    assert {g: o for g, o in view.items() if o} == {g: o for g, o in broker.items() if o}
    for group in expected["expected_expired_groups"]:
        state = recovered.group(group)
        assert state is not None and state.state is GroupStateName.DEAD
    for group, partition in expected["offsets_partition_of_group"].items():
        state = recovered.group(group)
        assert state is not None and state.coordinator_partition == partition
    assert recovered.findings == ()


@pytest.mark.parametrize("name", COMPACTION)
def test_compaction_cleaned_log_loads_the_same_offsets(name: str) -> None:
    """The same log dir after the real cleaner compacted it (kafka-logs-after): compaction
    must not change what the loader concludes."""
    fixture, expected = compaction_fixture(name)
    assert (fixture / "kafka-logs-after").is_dir(), (
        f"{fixture}/kafka-logs-after is missing: regenerate it (scripts/fixtures/)"
    )
    recovered = recover(fixture / "kafka-logs-after", "2.3.0", offsets_partitions_count(fixture))
    view = committed_view(recovered.groups)
    broker = expected["broker_committed_offsets"]
    assert {g: o for g, o in view.items() if o} == {g: o for g, o in broker.items() if o}


def describe_members(path: Path) -> dict[str, dict[str, object]]:
    """Members from ``kafka-consumer-groups.sh --describe --members --verbose`` output."""
    members: dict[str, dict[str, object]] = {}
    lines = path.read_text().splitlines()
    for index, line in enumerate(lines):
        if line.split()[:6] != [
            "GROUP",
            "CONSUMER-ID",
            "HOST",
            "CLIENT-ID",
            "#PARTITIONS",
            "ASSIGNMENT",
        ]:
            continue
        for row in lines[index + 1 :]:
            if not row.strip():
                break
            group, member_id, host, client_id, _count, assignment = row.split(None, 5)
            members[member_id] = {
                "group": group,
                "host": host,
                "client_id": client_id,
                "assignment": sorted(
                    (topic, int(p))
                    for topic, parts in re.findall(r"(\S+?)\(([\d,]*)\)", assignment)
                    for p in parts.split(",")
                    if p
                ),
            }
    return members


@pytest.mark.parametrize("name", COMPACTION)
def test_compaction_live_group_members_match_kafkas_describe(name: str) -> None:
    fixture, expected = compaction_fixture(name)
    described = describe_members(fixture / "consumer-groups-describe.txt")
    assert described
    recovered = recover(fixture / "kafka-logs", "2.3.0", offsets_partitions_count(fixture))
    for group in {str(m["group"]) for m in described.values()}:
        state = recovered.group(group)
        assert state is not None and state.state is GroupStateName.STABLE
        assert expected["broker_listed_groups"][group]["protocol_type"] == state.protocol_type
        ours = {
            m.member_id: {
                "group": group,
                "host": m.client_host,
                "client_id": m.client_id,
                "assignment": sorted((tp.topic, tp.partition) for tp in m.assignment or ()),
            }
            for m in state.members
        }
        assert ours == {k: v for k, v in described.items() if v["group"] == group}
        assert state.leader in ours


# -- kafka-2.3.0/multi-pass: 111,000 keys, before and after the real cleaner ------------------


def dump_offsets(paths: list[Path]) -> dict[str, dict[str, dict[str, object]]]:
    """Kafka's own DumpLogSegments output of a partition's segments, in order, replayed as
    last-commit-wins (only for logs of plain commits: a tombstone fails the check)."""
    view: dict[str, dict[str, dict[str, object]]] = {}
    for path in paths:
        for record in read_dump(path):
            if record.key is None or not record.key.startswith("offset::"):
                continue
            assert record.payload is not None, record  # no tombstones expected here
            match = re.fullmatch(r"(-?\d+)(?::(.*))?", record.payload)
            assert match, record
            group, topic, partition = record.key[len("offset::") :].rsplit(":", 2)
            view.setdefault(group, {})[f"{topic}-{partition}"] = {
                "offset": int(match.group(1)),
                "metadata": match.group(2) or "",
            }
    return view


@pytest.mark.slow
@pytest.mark.parametrize("logs", ["kafka-logs", "kafka-logs-after"])
def test_multi_pass_offsets_equal_the_commits_and_kafkas_dump(logs: str) -> None:
    """committed.json states what every group committed (its rule, with its numbers); Kafka's
    DumpLogSegments of the same partition (dumps/, of kafka-logs) replayed last-wins agrees;
    our recovery of kafka-logs and of the cleaned kafka-logs-after equals both."""
    fixture = K23 / "multi-pass"
    assert (fixture / "committed.json").exists() and (fixture / logs).is_dir(), (
        "multi-pass is missing: regenerate it (scripts/fixtures/)"
    )
    info = json.loads((fixture / "committed.json").read_text())
    rule = re.search(
        r"committed offset i\*(\d+)\+p .*groups with i < (\d+) then committed (\d+)\+i\*(\d+)\+p",
        info["rule"],
    )
    assert rule, info["rule"]
    step, duplicated, dup_base, dup_step = (int(g) for g in rule.groups())
    assert duplicated * info["topic_partitions"] == info["duplicate_commits"]
    expected = {
        group: {
            f"{info['topic']}-{p}": {
                "offset": dup_base + i * dup_step + p if i < duplicated else i * step + p,
                "metadata": info["metadata"][
                    "duplicate_commit" if i < duplicated else "first_commit"
                ],
            }
            for p in range(info["topic_partitions"])
        }
        for i, group in enumerate(info["groups"])
    }
    assert sum(len(v) for v in expected.values()) == info["distinct_keys"]
    recovered = recover(fixture / logs, "2.3.0", offsets_partitions_count(fixture))
    assert {g.coordinator_partition for g in recovered.groups} == {info["offsets_partition"]}
    assert committed_view(recovered.groups) == expected
    partition_dumps = sorted((fixture / "dumps").glob(f"{info['offsets_partition']}-*.txt.gz"))
    if logs == "kafka-logs" and partition_dumps:
        assert dump_offsets(partition_dumps) == expected


# -- kafka-2.3.0/unclean-shutdown: the log as SIGKILL left it, and after the broker's recovery --


def test_unclean_shutdown_torn_log_loads_what_the_broker_kept() -> None:
    """kafka-logs is the log dir as the SIGKILLed broker left it (a torn tail is possible);
    kafka-logs-after is the same dir after the restarted broker recovered it (truncating what
    was not whole) and loaded every offsets partition ("Finished loading offsets and group
    metadata from __consumer_offsets-N" in server-restart.log). Reading the torn dir must give
    the groups the broker loaded: nothing half-written is replayed, nothing whole is lost."""
    fixture = K23 / "unclean-shutdown"
    restart_log = fixture / "server-restart.log"
    assert (fixture / "kafka-logs-after").is_dir() and restart_log.exists(), (
        f"{fixture} is missing: regenerate it (scripts/fixtures/)"
    )
    count = offsets_partitions_count(fixture)
    loaded = re.findall(
        r"Finished loading offsets and group metadata from __consumer_offsets-(\d+)",
        restart_log.read_text(),
    )
    assert sorted(set(map(int, loaded))) == list(range(count))
    torn = recover(fixture / "kafka-logs", "2.3.0", count)
    kept = recover(fixture / "kafka-logs-after", "2.3.0", count)
    assert committed_view(torn.groups) == committed_view(kept.groups)
    assert any(g.offsets for g in kept.groups)
    assert all(f.kind in ("truncated-tail", "corrupt-record") for f in torn.findings), [
        f.to_dict() for f in torn.findings
    ]


# -- kafka-2.3.0/transactions ------------------------------------------------------------------


def transactions_fixture(logs: str = "kafka-logs") -> tuple[Path, dict[str, Any]]:
    fixture = K23 / "transactions"
    info = fixture / "transactions.json"
    assert info.exists() and (fixture / logs).is_dir(), (
        f"{fixture}/{logs} is missing: regenerate it (scripts/fixtures/)"
    )
    return fixture, json.loads(info.read_text())


@pytest.mark.parametrize("logs", ["kafka-logs", "kafka-logs-after"])
def test_transactions_committed_offsets_equal_the_brokers(logs: str) -> None:
    fixture, info = transactions_fixture(logs)
    recovered = recover(fixture / logs, "2.3.0", offsets_partitions_count(fixture))
    view = committed_view(recovered.groups)
    broker = info["broker_committed_offsets_at_end_of_load"]
    assert {g: view.get(g, {}) for g in broker} == broker
    # the aborted transaction's offset is nowhere committed
    group = recovered.group(info["group"])
    assert group is not None
    for tp, aborted in info["aborted_transaction"]["offsets"].items():
        topic, partition = tp.rsplit("-", 1)
        committed = group.offset_for(topic, int(partition))
        assert committed is None or committed.offset != aborted["offset"]


@pytest.mark.parametrize("logs", ["kafka-logs", "kafka-logs-after"])
def test_transactions_hanging_transaction_is_pending_not_committed(logs: str) -> None:
    fixture, info = transactions_fixture(logs)
    hanging = info["hanging_transaction"]
    recovered = recover(fixture / logs, "2.3.0", offsets_partitions_count(fixture))
    group = recovered.group(info["group"])
    assert group is not None
    pending = {
        f"{p.offset.topic}-{p.offset.partition}": {
            "offset": p.offset.offset,
            "metadata": p.offset.metadata,
        }
        for p in group.pending_transactional_offsets
        if p.producer_id == hanging["producer_id"]
    }
    assert pending == hanging["offsets"]
    assert any(
        f.kind == "open-transaction" and f.group == info["group"] for f in recovered.findings
    )
    assert all(
        p.producer_epoch == hanging["producer_epoch"] for p in group.pending_transactional_offsets
    )
    for tp, offset in hanging["offsets"].items():
        topic, partition = tp.rsplit("-", 1)
        committed = group.offset_for(topic, int(partition))
        assert committed is None or committed.offset != offset["offset"]


def dump_transactions(paths: list[Path]) -> tuple[list[tuple[int, int, str]], dict[int, list[str]]]:
    """From Kafka's DumpLogSegments output: every transactional offset-commit record as
    (producer id, offset, "group:topic:partition"), and each producer's end markers in order."""
    records: list[tuple[int, int, str]] = []
    markers: dict[int, list[str]] = {}
    batch: dict[str, str] = {}
    for path in paths:
        with gzip.open(path, "rt", encoding="utf-8") as lines:
            for line in lines:
                if line.startswith("baseOffset:"):
                    batch = dict(re.findall(r"(\w+): (\S+)", line))
                    continue
                if not line.startswith("| offset:") or batch.get("isTransactional") != "true":
                    continue
                producer = int(batch["producerId"])
                marker = re.search(r"endTxnMarker: (\w+)", line)
                if marker:
                    markers.setdefault(producer, []).append(marker.group(1))
                key = re.search(r"\boffset: (\d+) .* key: offset::(\S+)", line)
                if key:
                    records.append((producer, int(key.group(1)), key.group(2)))
    return records, markers


def test_transactions_pending_and_committed_agree_with_kafkas_dump() -> None:
    """Kafka's own dump of the group's partition: the hanging producer's transactional records
    have no end marker, and are exactly our pending offsets (same log offsets); the committed
    transaction's record is the log offset our committed offset comes from."""
    fixture, info = transactions_fixture()
    paths = sorted((fixture / "dumps").glob(f"{info['offsets_partition']}-*.txt.gz"))
    assert paths, f"{fixture}/dumps is missing: regenerate it (scripts/fixtures/)"
    records, markers = dump_transactions(paths)
    hanging, committed = info["hanging_transaction"], info["committed_transaction"]
    assert hanging["producer_id"] not in markers
    assert markers[committed["producer_id"]][0] == "COMMIT"
    recovered = recover(fixture / "kafka-logs", "2.3.0", offsets_partitions_count(fixture))
    group = recovered.group(info["group"])
    assert group is not None
    assert sorted(
        (p.producer_id, p.offset.log_offset, f"{group.group}:{p.offset.topic}:{p.offset.partition}")
        for p in group.pending_transactional_offsets
    ) == sorted(r for r in records if r[0] == hanging["producer_id"])
    for tp, value in committed["offsets"].items():
        topic, partition = tp.rsplit("-", 1)
        ours = group.offset_for(topic, int(partition))
        assert ours is not None and ours.offset == value["offset"]
        first_txn_record = next(
            offset
            for producer, offset, key in records
            if producer == committed["producer_id"] and key == f"{group.group}:{topic}:{partition}"
        )
        assert (ours.log_offset, ours.producer_id) == (first_txn_record, committed["producer_id"])


# -- the command line --------------------------------------------------------------------------


def live_fixture() -> Path:
    """A fixture with a live group with offsets: a compaction scenario when one exists."""
    for name in COMPACTION:
        fixture = K23 / name
        if (fixture / "expected-offsets.json").exists() and (fixture / "kafka-logs").is_dir():
            return fixture
    raise AssertionError("no kafka-2.3.0/compaction-* fixture: regenerate them (scripts/fixtures/)")


def test_cli_groups_json_lists_every_group(capsys: pytest.CaptureFixture[str]) -> None:
    fixture = live_fixture()
    expected = json.loads((fixture / "expected-offsets.json").read_text())
    status = main(["groups", str(fixture / "kafka-logs"), "--kafka-version", "2.3.0", "--json"])
    report = json.loads(capsys.readouterr().out)
    assert status == 0
    listed = {g["group"]: g for g in report["groups"]}
    assert set(listed) == set(expected["offsets_partition_of_group"])
    for name, group in listed.items():
        assert group["coordinator_partition"] == expected["offsets_partition_of_group"][name]
        assert {
            f"{o['topic']}-{o['partition']}": {"offset": o["offset"], "metadata": o["metadata"]}
            for o in group["offsets"]
        } == expected["broker_committed_offsets"][name]
        assert all(isinstance(o["commit_timestamp"], int) for o in group["offsets"])


def test_cli_export_is_the_reset_plan_kafka_reads(capsys: pytest.CaptureFixture[str]) -> None:
    """kafka-consumer-groups.sh 2.3.0 parseResetPlan: split on "\\n", every line
    'topic,partition,offset' (no header, no blank line)."""
    fixture = live_fixture()
    expected = json.loads((fixture / "expected-offsets.json").read_text())
    group, offsets = max(expected["broker_committed_offsets"].items(), key=lambda kv: len(kv[1]))
    status = main(
        ["groups", "export", group, str(fixture / "kafka-logs"), "--kafka-version", "2.3.0"]
    )
    csv = capsys.readouterr().out
    assert status == 0
    assert csv.endswith("\n") and "\r" not in csv
    lines = csv[:-1].split("\n")
    assert all(re.fullmatch(r"[a-zA-Z0-9._-]+,\d+,\d+", line) for line in lines), lines
    assert {f"{t}-{p}": int(o) for t, p, o in (line.split(",") for line in lines)} == {
        tp: v["offset"] for tp, v in offsets.items()
    }
    topic = sorted(offsets)[0].rsplit("-", 1)[0]
    main(["groups", "export", group, str(fixture / "kafka-logs"), "--topic", topic])
    only = capsys.readouterr().out.splitlines()
    assert only and all(line.startswith(f"{topic},") for line in only)


def test_cli_export_and_show_of_a_group_that_is_not_there(
    capsys: pytest.CaptureFixture[str],
) -> None:
    logs = str(SMALL_GZIP / "kafka-logs")
    assert main(["groups", "show", "no-such-group", logs, "--kafka-version", "2.3.0"]) == 1
    # a Dead group has nothing to export: an empty file is no reset plan for the tool
    assert main(["groups", "export", "web-analytics", logs, "--kafka-version", "2.3.0"]) == 1
    captured = capsys.readouterr()
    assert captured.out == ""
    assert "no committed offsets" in captured.err


def test_cli_show_text(capsys: pytest.CaptureFixture[str]) -> None:
    status = main(
        [
            "groups",
            "show",
            "billing",
            str(CLEANER_DIED / "kafka-logs"),
            "--kafka-version",
            "0.9.0.1",
        ]
    )
    out = capsys.readouterr().out
    assert status == 0
    assert out.startswith("group billing: Dead (no group metadata)")
    assert "billing-meta" in out


# -- the real broker takes our export (opt-in) --------------------------------------------------

BROKER = pytest.mark.skipif(
    os.environ.get("OFFSETS_AUDITOR_BROKER_TESTS") != "1",
    reason="drives a real Kafka 2.3.0 broker: set OFFSETS_AUDITOR_BROKER_TESTS=1",
)
ZK_PORT, KAFKA_PORT = "22282", "29292"


def kafka23(work: Path, *args: str, timeout: int = 300) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "ZK_PORT": ZK_PORT, "KAFKA_PORT": KAFKA_PORT, "PHASE": "groups-test"}
    return subprocess.run(
        [str(REPO / "scripts" / "fixtures" / "kafka23.sh"), *args],
        env=env,
        cwd=work,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def offsets_table(text: str, column: str) -> dict[str, int]:
    """``topic-partition -> value`` of one column of a kafka-consumer-groups.sh table."""
    rows: dict[str, int] = {}
    header: list[str] | None = None
    for line in text.splitlines():
        words = line.split()
        if words[:3] == ["GROUP", "TOPIC", "PARTITION"]:
            header = words
            continue
        if header is not None and len(words) >= len(header) - 3 and words[2].isdigit():
            rows[f"{words[1]}-{words[2]}"] = int(words[header.index(column)])
    return rows


def export_plans(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> dict[str, dict[str, Any]]:
    """Our export of every group with committed offsets in the live fixture, and in the
    transactions fixture when it exists: group -> {"plan": file, "ours": {tp: offset},
    "broker": {tp: offset} (what the source broker's OffsetFetch answered)}."""
    sources: list[tuple[Path, dict[str, Any]]] = []
    fixture = live_fixture()
    expected = json.loads((fixture / "expected-offsets.json").read_text())
    sources.append((fixture, expected["broker_committed_offsets"]))
    txn = K23 / "transactions"
    if (txn / "transactions.json").exists() and (txn / "kafka-logs").is_dir():
        info = json.loads((txn / "transactions.json").read_text())
        sources.append((txn, info["broker_committed_offsets_at_end_of_load"]))
    plans: dict[str, dict[str, Any]] = {}
    for source, broker in sources:
        for group, offsets in broker.items():
            if not offsets:
                continue
            logs = str(source / "kafka-logs")
            assert main(["groups", "export", group, logs, "--kafka-version", "2.3.0"]) == 0
            plan = tmp_path / f"{source.name}-{group}.csv"
            plan.write_text(capsys.readouterr().out)
            ours = {
                f"{t}-{p}": int(o)
                for t, p, o in (line.split(",") for line in plan.read_text().splitlines())
            }
            plans[f"{source.name}/{group}"] = {
                "plan": plan,
                "ours": ours,
                "broker": {tp: v["offset"] for tp, v in offsets.items()},
            }
    return plans


@pytest.mark.broker
@BROKER
def test_broker_2_3_0_takes_the_export_for_a_new_group(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Every exported group's plan, fed to the real 2.3.0 kafka-consumer-groups.sh for a NEW
    group id: --dry-run and --execute show our offsets, --describe then shows them committed,
    and Kafka's own --export of the new group is our file, line for line."""
    plans = export_plans(tmp_path, capsys)
    work = tmp_path / "broker"
    work.mkdir()
    bootstrap = f"127.0.0.1:{KAFKA_PORT}"
    started = kafka23(work, "start", str(work))
    assert started.returncode == 0, started.stderr + started.stdout
    try:
        ends: dict[tuple[str, int], int] = {}
        for entry in plans.values():
            for tp, offset in entry["ours"].items():
                topic, partition = tp.rsplit("-", 1)
                key = (topic, int(partition))
                ends[key] = max(ends.get(key, 0), offset)
        for topic in sorted({t for t, _ in ends}):
            count = max(p for t, p in ends if t == topic) + 1
            created = kafka23(
                work, "tool", "kafka-topics.sh", "--bootstrap-server", bootstrap, "--create",
                "--topic", topic, "--partitions", str(count), "--replication-factor", "1",
            )  # fmt: skip
            assert created.returncode == 0, created.stderr
        # enough records that no offset of a plan is above its partition's log end (the tool
        # would clamp it: checkOffsetsRange)
        from kafka import KafkaProducer  # kafka-python, a dev dependency

        producer = KafkaProducer(bootstrap_servers=bootstrap, linger_ms=50)
        for (topic, partition), end in ends.items():
            for i in range(end + 1):
                producer.send(topic, b"r%d" % i, partition=partition)
        producer.flush()
        producer.close()
        stamp = int(time.time())
        # what the parser refuses (so the export never writes it): a header line, a blank line
        some = next(iter(plans.values()))["plan"].read_text()
        for refused in ("topic,partition,offset\n" + some, some + "\n" + some, ""):
            bad = tmp_path / "refused.csv"
            bad.write_text(refused)
            tried = kafka23(
                work, "tool", "kafka-consumer-groups.sh", "--bootstrap-server", bootstrap,
                "--group", f"refused-{stamp}", "--reset-offsets", "--from-file", str(bad),
                "--dry-run",
            )  # fmt: skip
            assert "Executing consumer group command failed" in tried.stdout + tried.stderr
        for name, entry in sorted(plans.items()):
            ours, plan = entry["ours"], entry["plan"]
            assert ours == entry["broker"], name
            new_group = f"{name.split('/')[1]}-recovered-{stamp}"
            base = [
                "kafka-consumer-groups.sh",
                "--bootstrap-server",
                bootstrap,
                "--group",
                new_group,
            ]
            reset = [*base, "--reset-offsets", "--from-file", str(plan)]
            dry = kafka23(work, "tool", *reset, "--dry-run")
            command = f"--group {new_group} --reset-offsets --from-file {plan.name}"
            print(f"$ kafka-consumer-groups.sh {command} --dry-run\n{dry.stdout}{dry.stderr}")
            assert offsets_table(dry.stdout, "NEW-OFFSET") == ours, dry.stderr
            executed = kafka23(work, "tool", *reset, "--execute")
            print(f"$ ... --execute\n{executed.stdout}{executed.stderr}")
            assert offsets_table(executed.stdout, "NEW-OFFSET") == ours, executed.stderr
            described = kafka23(work, "tool", *base, "--describe")
            print(f"$ ... --describe\n{described.stdout}{described.stderr}")
            assert offsets_table(described.stdout, "CURRENT-OFFSET") == ours
            exported = kafka23(
                work, "tool", *base, "--reset-offsets", "--to-current", "--all-topics",
                "--export", "--dry-run",
            )  # fmt: skip
            print(f"$ ... --to-current --all-topics --export --dry-run\n{exported.stdout}")
            kafkas = [line for line in exported.stdout.split("\n") if line]
            assert sorted(kafkas) == sorted(plan.read_text().splitlines())
    finally:
        kafka23(work, "stop", str(work))
        shutil.rmtree(work / "kafka-logs", ignore_errors=True)
