"""Today's cleaner emulation equals the oracle (``tests/support/reference_cleaner.py``, the
per-record emulation of ``aa82d94``) on synthetic partitions, and the audit does not depend on
the record reader.

1. The synthetic entries are what they say: every kind decodes (or is refused) as intended.
2. Property: on random partitions (``tests/support/synthetic_partitions.py``: several segments,
   v0/v1 messages and gzip wrappers, v2 batches plain, gzip, idempotent and transactional from
   several producers, COMMIT/ABORT markers across segment boundaries, hanging transactions,
   emptied batches, odd control records, corrupt entries, gaps, truncated tails, checkpoints)
   for every modelled era, with offset maps of a few slots (multi-pass, maps full mid-segment,
   thread deaths), both dirty ratios, small ``segment.bytes`` (grouping), per-segment mtimes
   and short delete retentions (delete horizons), and both compaction lags, every pass, the
   failure, every selection, the map need and the size after cleaning are the same.
3. The synthetic setup does reach what the property is for (each case a hand-built partition).
4. The discrepancies this oracle found, each with its minimal partition, fixed: the emulation
   equals the oracle on them, and the oracle does what Kafka does. The property leaves out
   negative offsets (a flipped sign bit in a base offset, outside the CRC): there the oracle
   applies the 2.3.0 retention rule to every era, where Kafka up to 2.2 did not (the emulation
   follows Kafka, ``behaviour.retains_from_found_offset``).
5. The full ``audit --json`` document is the same with the Python reference reader and the C
   reader, on every real log dir and on synthetic ones.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any
from unittest import mock

import pytest
from hypothesis import event, given, settings
from hypothesis import strategies as st

from offsets_auditor.audit.partition import emulate_partition
from offsets_auditor.audit.report import report_json
from offsets_auditor.audit.stages import audit_at
from offsets_auditor.cleaner import windows as cleaner_windows
from offsets_auditor.cleaner.config import LONG_MAX, CleanerConfig, cleaner_config
from offsets_auditor.errors import DecodeError
from offsets_auditor.logdir.meta_properties import parse_java_properties
from offsets_auditor.logdir.model import offsets_partitions, read_log_dir
from offsets_auditor.reader.decode import decode_segment
from offsets_auditor.reader.options import Backend
from offsets_auditor.reader.reading import ReadOptions
from offsets_auditor.reader.segment import BytesSource
from offsets_auditor.records.control import control_key_problem
from offsets_auditor.versions import KafkaVersion
from tests.conftest import FIXTURES
from tests.support import reference_cleaner as ref
from tests.support.synthetic_partitions import (
    KINDS,
    NOW_MS,
    ODD_CONTROLS,
    UNKNOWN_TYPE_CONTROL,
    Entry,
    Partition,
    encode,
    entries,
    partitions,
    write_partition,
)

VERSIONS = (
    "0.9.0.1",
    "0.10.0.1",
    "0.10.1.0",
    "0.10.1.1",
    "1.1.0",
    "2.3.0",
    "2.4.0",
    "2.4.1",
    "2.5.0",
    "3.0.0",
    "3.9.0",
)


def config(
    version: str,
    slots: int = 1000,
    *,
    ratio: float = 0.01,
    segment_bytes: int = 10**8,
    retention: int = 86_400_000,
    min_lag: int = 0,
    max_lag: int = LONG_MAX,
) -> CleanerConfig:
    """A cleaner whose one thread's offset map has ``slots`` slots (``maxDesiredMapSize`` is
    90% of it)."""
    return CleanerConfig(
        kafka_version=KafkaVersion.parse(version),
        dedupe_buffer_size=slots * 24,
        min_cleanable_ratio=ratio,
        segment_bytes=segment_bytes,
        delete_retention_ms=retention,
        min_compaction_lag_ms=min_lag,
        max_compaction_lag_ms=max_lag,
    )


def both(log_dir: Path, cfg: CleanerConfig) -> tuple[ref.Emulated, dict[str, Any]]:
    """The oracle's emulation of the log dir's one partition, and today's (comparable)."""
    (old,) = ref.emulate_log_dir(log_dir, cfg, NOW_MS).values()
    logdir = read_log_dir(log_dir, cfg.kafka_version)
    (partition,) = offsets_partitions(logdir)
    new = emulate_partition(partition, cfg, NOW_MS)
    assert new is not None
    return old, ref.comparable(new)


@contextlib.contextmanager
def windows_of(records: int | None) -> Iterator[None]:
    """The cleaner's rules read ``records`` records at a time (None: as by default)."""
    if records is None:
        yield
        return
    with mock.patch.object(cleaner_windows, "WINDOW_RECORDS", records):
        yield


def assert_same(log_dir: Path, cfg: CleanerConfig) -> ref.Emulated:
    old, new = both(log_dir, cfg)
    assert new == ref.comparable(old)
    return old


# -- 1. the entries -------------------------------------------------------------------------------


#: kind -> (offsets of its records, entries (batches) they are in, offsets it takes), written
#: at offset 100 with 3 records; crc-flip kinds are read all the same, with a ChecksumError
SHAPES: dict[str, tuple[list[int], int, int]] = {
    "v0": ([100, 101, 102], 3, 3),
    "v1": ([100, 101, 102], 3, 3),
    "v0-gzip": ([100, 101, 102], 1, 3),
    "v1-gzip": ([100, 101, 102], 1, 3),
    "v2": ([100, 101, 102], 1, 3),
    "v2-gzip": ([100, 101, 102], 1, 3),
    "v2-idempotent": ([100, 101, 102], 1, 3),
    "v2-txn": ([100, 101, 102], 1, 3),
    "v2-txn-gzip": ([100, 101, 102], 1, 3),
    "marker": ([100], 1, 1),
    "txn+marker": ([100, 101, 102, 103], 2, 4),
    "empty": ([], 0, 3),
    "empty-control": ([], 0, 1),
    "odd-control": ([100], 1, 1),
    "crc-flip": ([100], 1, 1),
    "crc-flip-v2": ([100, 101, 102], 1, 3),
    "v2-offset-negative": ([-101, -100, -99], 1, 0),
    "v2-offset-ahead": ([1100, 1101, 1102], 1, 0),
}


@pytest.mark.parametrize("kind", sorted(set(KINDS)))
def test_each_synthetic_entry_reads_as_intended(kind: str) -> None:
    """Each kind of entry decodes to the records it was meant to hold, with both readers (the
    emulations compare nothing if a kind silently turned into a corrupt entry)."""
    data, taken = encode(Entry(kind, ((1, False), (2, True), (3, False)), odd=1), 100, False)
    items = {
        backend: list(decode_segment(BytesSource(data), backend=backend)) for backend in Backend
    }
    assert [repr(i) for i in items[Backend.PYTHON]] == [repr(i) for i in items[Backend.NATIVE]]
    records = [i for i in items[Backend.PYTHON] if not isinstance(i, DecodeError)]
    errors = [i for i in items[Backend.PYTHON] if isinstance(i, DecodeError)]
    offsets, batches, takes = SHAPES[kind]
    assert [r.record.offset for r in records] == offsets
    assert len({r.batch.position for r in records}) == batches
    assert taken == takes
    assert [type(e).__name__ for e in errors] == (
        ["ChecksumError"] if kind.startswith("crc-flip") else []
    ), errors


# -- 2. the property ------------------------------------------------------------------------------

#: every kind and odd control record but those of the known discrepancies (section 4)
SOUND_ENTRIES = entries(
    kinds=tuple(k for k in KINDS if k != "v2-offset-negative"),
    # a control key ControlRecordType.parse refuses stops Kafka's cleaner; the oracle predates
    # that (tests/audit/test_damage.py covers it)
    odd_controls=tuple(
        i for i, (key, _) in enumerate(ODD_CONTROLS) if control_key_problem(key) is None
    ),
)


def note_coverage(old: ref.Emulated, spec: Partition, log_dir: Path) -> None:
    """What this example reaches (``pytest --hypothesis-show-statistics`` counts them)."""
    bases = {int(p.stem) for p in (log_dir / "__consumer_offsets-0").glob("*.log")}
    passes = old.passes
    event(f"passes: {min(len(passes), 3)}{'+' if len(passes) >= 3 else ''}")
    if old.failure is not None:
        event("thread death" if old.failure.kills_thread else "partition marked uncleanable")
        if "messages in segment" in old.failure.message:
            event("thread death: 0.9 segment span")
    if any(p.map_full and p.end_offset not in bases for p in passes):
        event("map full mid-segment")
    for name, counter in (
        ("aborted records dropped", "aborted_dropped"),
        ("tombstones dropped past the delete horizon", "tombstones_dropped"),
        ("markers dropped", "markers_dropped"),
        ("keyless records dropped", "invalid_dropped"),
    ):
        if any(getattr(p, counter) for p in passes):
            event(name)
    if old.retained_empty_batches:
        event("empty batch kept for a producer")
    if old.largest_group > 1:
        event("segments grouped")
    if old.initial.blocked_by != "active segment":
        event(f"blocked by {old.initial.blocked_by}")
    if spec.checkpoint is not None:
        event("cleaner checkpoint")


@settings(max_examples=120)
@given(
    spec=partitions(SOUND_ENTRIES),
    version=st.sampled_from(VERSIONS),
    slots=st.one_of(st.integers(2, 8), st.integers(9, 40)),  # maxDesiredMapSize 1 to 36
    ratio=st.sampled_from([0.01, 0.5]),
    segment_bytes=st.sampled_from([300, 2048, 10**8]),
    retention=st.sampled_from([0, 0, 5_000, 86_400_000]),
    min_lag=st.sampled_from([0, 0, 10**9 - 300]),
    max_lag=st.sampled_from([LONG_MAX, LONG_MAX, 10**9 - 100]),
    window=st.sampled_from([None, None, 1, 2, 3, 5]),
)
def test_the_emulation_equals_the_oracle_on_synthetic_partitions(
    tmp_path_factory: pytest.TempPathFactory,
    spec: Partition,
    version: str,
    slots: int,
    ratio: float,
    segment_bytes: int,
    retention: int,
    min_lag: int,
    max_lag: int,
    window: int | None,
) -> None:
    """``window``: records the cleaner's rules read at a time (``cleaner.windows``), when not
    the default: windows that split segments between any two batches."""
    log_dir = write_partition(tmp_path_factory.mktemp("synthetic"), spec)
    cfg = config(
        version,
        slots,
        ratio=ratio,
        segment_bytes=segment_bytes,
        retention=retention,
        min_lag=min_lag,
        max_lag=max_lag,
    )
    with windows_of(window):
        old = assert_same(log_dir, cfg)
    note_coverage(old, spec, log_dir)


# -- 3. what the synthetic partitions reach -------------------------------------------------------


def v2(*keys: int, kind: str = "v2", producer: int = 0, tombstones: bool = False) -> Entry:
    return Entry(kind, tuple((k, tombstones) for k in keys), producer=producer)


FIVE_KEYS = tuple(v2(0, 1, 2, 3, 4) for _ in range(6))

#: name -> (partition, config, what the oracle's result shows). Each is also compared with today's
#: emulation, so the property's comparison is known to cover it.
REACHED: dict[str, tuple[Partition, CleanerConfig, Callable[[ref.Emulated], bool]]] = {
    # 4 slots -> 3 entries: 5 distinct keys cannot be mapped at once, so several passes
    "multi-pass": (
        Partition((FIVE_KEYS, FIVE_KEYS, (Entry("v0"),)), (0, 0, 0)),
        config("2.3.0", 4),
        lambda e: len(e.passes) > 1,
    ),
    # 0.10.1+: the map fills in the middle of the first segment and the pass ends there
    "map full mid-segment": (
        Partition((FIVE_KEYS, FIVE_KEYS, (Entry("v0"),)), (0, 0, 0)),
        config("2.4.1", 4),
        lambda e: e.passes[0].map_full and e.passes[0].end_offset not in (0, 30, 60),
    ),
    # 0.9: a segment spanning 30 offsets when the map holds 3 kills the thread (require fails)
    "thread death": (
        Partition((FIVE_KEYS, (Entry("v0"),)), (0, 0)),
        config("0.9.0.1", 4),
        lambda e: (
            e.failure is not None
            and e.failure.kills_thread
            and "messages in segment" in e.failure.message
        ),
    ),
    # a transaction begun in one segment and aborted in the next: its batches are discarded
    "aborted transaction dropped": (
        Partition(
            (
                (v2(1, 2), v2(3, 4, kind="v2-txn"), v2(5, kind="v2-txn-gzip")),
                (Entry("marker", commit=False), v2(6)),
                (v2(7),),
            ),
            (0, 0, 0),
        ),
        config("2.3.0"),
        lambda e: e.passes[0].aborted_dropped == 3 and e.passes[0].markers_dropped == 0,
    ),
    # two producers' transactions interleaved in one segment, closed in the next: producer 8
    # commits, producer 7 aborts (4 records dropped; its last batch stays, empty, as the last
    # of an active producer)
    "interleaved transactions": (
        Partition(
            (
                (
                    v2(1, 2, kind="v2-txn", producer=0),
                    v2(3, kind="v2-txn", producer=1),
                    v2(4, 5, kind="v2-txn", producer=0),
                ),
                (Entry("marker", producer=1), v2(6), Entry("marker", producer=0, commit=False)),
                (v2(7),),
            ),
            (0, 0, 0),
        ),
        config("2.3.0"),
        lambda e: (
            e.passes[0].aborted_dropped == 4
            and e.passes[0].end_records == 4
            and e.retained_empty_batches == 1
        ),
    ),
    # a producer's last batch loses its record (key 1 is written again later) but stays, empty
    "empty batch retained": (
        Partition(((v2(1, kind="v2-idempotent"),), (v2(1),), (v2(2),)), (0, 0, 0)),
        config("2.3.0"),
        lambda e: e.retained_empty_batches == 1 and e.passes[0].end_bytes == 61 + 118,
    ),
    # segments 0-1 are clean (checkpoint 2) and the last clean one is 10^8 ms newer than
    # segment 0, more than delete.retention.ms: segment 0's tombstone goes
    "tombstone dropped past the delete horizon": (
        Partition(
            ((v2(1, tombstones=True),), (v2(2),), (v2(3, 4),), (v2(5),)),
            (0, 10**8, 10**8, 0),
            checkpoint=2,
        ),
        config("2.3.0", retention=1_000),
        lambda e: e.passes[0].tombstones_dropped == 1 and e.passes[0].delete_horizon_ms > 0,
    ),
}


@pytest.mark.parametrize("name", list(REACHED))
def test_the_synthetic_setup_reaches(name: str, tmp_path: Path) -> None:
    spec, cfg, reached = REACHED[name]
    old = assert_same(write_partition(tmp_path, spec), cfg)
    assert reached(old), old


# -- 4. discrepancies found and fixed ------------------------------------------------------------

#: name -> (partition, config, what the oracle does, as Kafka's cleaner does). The emulation
#: differed on each until it was fixed (the comment says where it went wrong).
KNOWN: dict[str, tuple[Partition, CleanerConfig, Callable[[ref.Emulated], bool]]] = {
    # A control record of type -1 (ControlRecordType.UNKNOWN's id) is an unknown control type:
    # Kafka's onControlBatchRead answers `case _ => false`, so the batch is not discarded and
    # its record is filtered like any other (kept: its key is not in the map, its value is not
    # null). The emulation kept the first control record's type in a column where -1 also
    # meant "no record" (segment_facts.NO_CONTROL_RECORD), so it took the batch for an empty
    # one and discards it (markers_dropped 1, 78 bytes gone; with the producer's last epoch it
    # keeps it empty and counts an aborted record instead).
    "control record of type -1": (
        Partition(
            (
                (v2(1, 2), Entry("odd-control", odd=UNKNOWN_TYPE_CONTROL)),
                (v2(1, 3, kind="v2-idempotent"),),
                (v2(1),),
            ),
            (0, 1_000, 1_000),
            checkpoint=3,
        ),
        config("2.3.0", retention=0),
        lambda e: e.passes[0].markers_dropped == 0 and e.size_after_cleaning == 489,
    ),
    # A negative offset (the base offset field is outside the CRC: a flipped sign bit is not
    # seen) in a dirty segment, its key not in the map. Kafka from 2.3.0 keeps a record only
    # when `record.offset() >= foundOffset`, foundOffset being -1 for a key not in the map, so
    # -2 is dropped (aa82d94: `offset < map.get(key)`, for every era from 0.10.1). The
    # emulation tested `found >= 0 and offset < found` in every era, as Kafka did up to 2.2
    # (apache/kafka#6590 dropped `foundOffset >= 0` as redundant for valid offsets): kept. It
    # now follows each version (behaviour.retains_from_found_offset).
    "negative offset, key not in the map": (
        Partition(((Entry("v2-offset-negative", gap=1),), ()), (0, 0)),
        config("2.4.1"),
        lambda e: e.passes[0].end_records == 0 and e.size_after_cleaning == 0,
    ),
    # The same key put at 0, then at -2 (a negative base offset), then at 1: one key, one map
    # entry. The map (an offset per key id, -1 meaning absent) took the key holding -2 for
    # an absent one and counted it again: 2 entries, the map filled one key early.
    "negative offset, key put twice": (
        Partition(((Entry("v0"), Entry("v2-offset-negative")), (Entry("v0"),), ()), (0, 0, 0)),
        config("0.9.0.1", 3),
        lambda e: e.passes[0].map_entries == 1,
    ),
    # Offsets out of order (a batch claiming offset 1001 in the middle of the segment, then
    # 1, 2, 3): Kafka's cleaner moves aborted transactions into its ongoing set as it reads
    # each batch (consumeAbortedTxnsUpTo(batch.lastOffset), for every batch), so the 1001 batch
    # brings in the transaction aborted at 3 and the stray ABORT marker at 1 takes it out: the
    # transaction's batch at 2 is then mapped (the map is full: the pass ends at 2, then 3
    # passes). The emulation did it only at transactional and control batches (equal
    # while offsets increase): the batch at 2 is discarded as aborted, one pass to 4.
    "offsets out of order across an aborted transaction": (
        Partition(
            (
                (
                    Entry("v0"),
                    Entry("v2-offset-ahead"),
                    Entry("marker", commit=False),
                    Entry("txn+marker", commit=False),
                ),
                (),
            ),
            (0, 0),
        ),
        config("1.1.0", 2),
        lambda e: [(p.start_offset, p.end_offset) for p in e.passes] == [(0, 1), (1, 2), (2, 4)],
    ),
}


@pytest.mark.parametrize("name", list(KNOWN))
def test_the_oracle_does_what_kafka_does_on_the_known_discrepancies(
    name: str, tmp_path: Path
) -> None:
    spec, cfg, kafka = KNOWN[name]
    (old,) = ref.emulate_log_dir(write_partition(tmp_path, spec), cfg, NOW_MS).values()
    assert kafka(old), old


@pytest.mark.parametrize("name", list(KNOWN))
def test_the_emulation_equals_the_oracle_on_the_discrepancies_it_had(
    name: str, tmp_path: Path
) -> None:
    spec, cfg, _ = KNOWN[name]
    assert_same(write_partition(tmp_path, spec), cfg)


@pytest.mark.parametrize("window", [1, 2, 3])
@pytest.mark.parametrize("name", [*REACHED, *KNOWN])
def test_the_emulation_equals_the_oracle_in_small_windows(
    name: str, window: int, tmp_path: Path
) -> None:
    """Every hand-built case (a map full mid-segment, transactions, several passes...) with
    the cleaner's rules reading a few records at a time."""
    spec, cfg, _ = REACHED.get(name) or KNOWN[name]
    with windows_of(window):
        assert_same(write_partition(tmp_path, spec), cfg)


# -- 5. either reader, the same audit -------------------------------------------------------------

LOG_DIRS = sorted(FIXTURES.glob("kafka-*/*/kafka-logs*"))


def audit_document(log_dir: Path, cfg: CleanerConfig, backend: Backend) -> str:
    audit = audit_at(log_dir, cfg, NOW_MS, read=ReadOptions(backend=backend))
    return json.dumps(report_json([audit]), sort_keys=True)


@pytest.mark.parametrize("log_dir", LOG_DIRS, ids=[str(d.relative_to(FIXTURES)) for d in LOG_DIRS])
def test_the_audit_is_the_same_with_either_reader_on_real_log_dirs(log_dir: Path) -> None:
    fixture = log_dir.parent
    properties = parse_java_properties((fixture / "broker-server.properties").read_text())
    cfg = cleaner_config(properties, {}, fixture.parent.name.removeprefix("kafka-"))
    assert audit_document(log_dir, cfg, Backend.PYTHON) == audit_document(
        log_dir, cfg, Backend.NATIVE
    )


@pytest.mark.parametrize("log_dir", LOG_DIRS, ids=[str(d.relative_to(FIXTURES)) for d in LOG_DIRS])
def test_the_audit_is_the_same_in_small_windows_on_real_log_dirs(log_dir: Path) -> None:
    """The real brokers' partitions (damaged ones among them) audited with the cleaner's rules
    reading 2 records at a time, as by default."""
    fixture = log_dir.parent
    properties = parse_java_properties((fixture / "broker-server.properties").read_text())
    cfg = cleaner_config(properties, {}, fixture.parent.name.removeprefix("kafka-"))
    default = audit_document(log_dir, cfg, Backend.NATIVE)
    with windows_of(2):
        assert audit_document(log_dir, cfg, Backend.NATIVE) == default


@settings(max_examples=15)
@given(
    spec=partitions(),
    version=st.sampled_from(VERSIONS),
    slots=st.integers(2, 40),
)
def test_the_audit_is_the_same_with_either_reader_on_synthetic_partitions(
    tmp_path_factory: pytest.TempPathFactory, spec: Partition, version: str, slots: int
) -> None:
    log_dir = write_partition(tmp_path_factory.mktemp("readers"), spec)
    cfg = config(version, slots, segment_bytes=2048)
    assert audit_document(log_dir, cfg, Backend.PYTHON) == audit_document(
        log_dir, cfg, Backend.NATIVE
    )


@pytest.mark.parametrize("name", [*REACHED, *KNOWN])
def test_the_audit_is_the_same_with_either_reader_on_the_hand_built_partitions(
    name: str, tmp_path: Path
) -> None:
    spec, cfg, _ = REACHED.get(name) or KNOWN[name]
    log_dir = write_partition(tmp_path, spec)
    assert audit_document(log_dir, cfg, Backend.PYTHON) == audit_document(
        log_dir, cfg, Backend.NATIVE
    )


@settings(max_examples=60)
@given(
    spec=partitions(),
    version=st.sampled_from(VERSIONS),
    slots=st.integers(2, 40),
    window=st.integers(1, 4),
)
def test_the_audit_is_the_same_in_small_windows_on_damaged_synthetic_partitions(
    tmp_path_factory: pytest.TempPathFactory, spec: Partition, version: str, slots: int, window: int
) -> None:
    """Corrupt entries among the sound ones: where the map's reads stop decides whether the
    cleaner reaches the damage, whatever the windows."""
    log_dir = write_partition(tmp_path_factory.mktemp("windows"), spec)
    cfg = config(version, slots, segment_bytes=2048)
    default = audit_document(log_dir, cfg, Backend.NATIVE)
    with windows_of(window):
        assert audit_document(log_dir, cfg, Backend.NATIVE) == default
