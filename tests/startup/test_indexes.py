"""Index sanity checks per Kafka version, verdicts for whole log dirs, and recovery plans.

Every table row carries the reason, from Kafka's source, why its expected result is right.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from offsets_auditor.logdir.model import LogDir, read_log_dir
from offsets_auditor.startup.indexes import (
    ABORTED_TXN,
    OFFSET_ENTRY,
    TIME_ENTRY,
    Check,
    IndexKind,
    IndexVerdict,
    Verdict,
    index_verdicts,
    offset_index_check,
    time_index_check,
    txn_index_check,
)
from offsets_auditor.startup.recovery import recovery_plan, unflushed_segments
from offsets_auditor.versions import KafkaVersion

P = "/data/kafka-logs/t-0/00000000000000000100.index"
T = "/data/kafka-logs/t-0/00000000000000000100.timeindex"
X = "/data/kafka-logs/t-0/00000000000000000100.txnindex"
BASE = 100


def v(text: str) -> KafkaVersion:
    return KafkaVersion.parse(text)


def offsets(*relative: int) -> bytes:
    return b"".join(OFFSET_ENTRY.pack(r, 4096 * i) for i, r in enumerate(relative))


def times(*entries: tuple[int, int]) -> bytes:
    return b"".join(TIME_ENTRY.pack(ts, rel) for ts, rel in entries)


def txns(*entries: tuple[int, int, int, int, int]) -> bytes:
    return b"".join(ABORTED_TXN.pack(*e) for e in entries)


def check_offset(data: bytes, version: str) -> Check:
    """As the broker sees the file: entries = length // 8, last entry = last whole slot."""
    n = len(data) // 8
    last = data[(n - 1) * 8 : n * 8] if n else b""
    return offset_index_check(len(data), last, BASE, v(version), P)


def check_time(data: bytes, version: str) -> Check:
    n = len(data) // 12
    first = data[:12] if n else b""
    last = data[(n - 1) * 12 : n * 12] if n else b""
    return time_index_check(len(data), first, last, BASE, v(version), T)


ZERO_TAIL = offsets(5, 9) + bytes(8 * 6)  # 2 real entries, then a preallocated zero tail
ZERO_TAIL_MSG = "the last offset is 100"

# (case, version, bytes, passed, exception, message)
OFFSET_CASES = [
    # 1. An empty (trimmed, never written) index: entries == 0 passes in every version.
    ("empty", "0.9.0.1", b"", True, None, None),
    # 2. Real increasing entries, last relative offset 9 > 0.
    ("entries", "0.9.0.1", offsets(5, 9), True, None, None),
    # 3. 0.9.0.1 OffsetIndex: the whole length counts, the last slot is zeros ->
    #    lastOffset == baseOffset, and `require(entries == 0 || lastOffset > baseOffset)` fails.
    (
        "zero tail 0.9",
        "0.9.0.1",
        ZERO_TAIL,
        False,
        "IllegalArgumentException",
        f"requirement failed: Corrupt index found, index file ({P}) has non-zero size but the "
        "last offset is 100 and the base offset is 100",
    ),
    # 4. 0.10.1.0 reworded: "which is no larger than the base offset" (same condition).
    (
        "zero tail 0.10.1",
        "0.10.1.0",
        ZERO_TAIL,
        False,
        "IllegalArgumentException",
        f"requirement failed: Corrupt index found, index file ({P}) has non-zero size but the "
        "last offset is 100 which is no larger than the base offset 100.",
    ),
    # 5. 1.1.0: CorruptIndexException, "no greater than".
    (
        "zero tail 1.1",
        "1.1.0",
        ZERO_TAIL,
        False,
        "CorruptIndexException",
        f"Corrupt index found, index file ({P}) has non-zero size but the last offset is 100 "
        "which is no greater than the base offset 100.",
    ),
    # 6. 2.0.0 relaxed the condition to lastOffset < baseOffset: a zero tail passes.
    ("zero tail 2.0", "2.0.0", ZERO_TAIL, True, None, None),
    # 7. A whole preallocated, never-written file is all zero slots: same as 3 before 2.0.
    ("all zeros 0.9", "0.9.0.1", bytes(64), False, "IllegalArgumentException", None),
    ("all zeros 2.3", "2.3.0", bytes(64), True, None, None),
    # 8. Last offset below base (relative -1) fails from 2.0.0 too; 3.5.0's Java text drops
    #    the parentheses around the path.
    (
        "below base 2.3",
        "2.3.0",
        offsets(5, -1),
        False,
        "CorruptIndexException",
        f"Corrupt index found, index file ({P}) has non-zero size but the last offset is 99 "
        "which is less than the base offset 100.",
    ),
    (
        "below base 3.9",
        "3.9",
        offsets(5, -1),
        False,
        "CorruptIndexException",
        f"Corrupt index found, index file {P} has non-zero size but the last offset is 99 "
        "which is less than the base offset 100.",
    ),
    # 9. Length 12: one whole entry (rel 5 passes the first check), then `len % 8 != 0`.
    #    0.9.0.1 prints file.getName here (not the absolute path).
    (
        "length 12 0.9",
        "0.9.0.1",
        offsets(5) + b"\0\0\0\1",
        False,
        "IllegalArgumentException",
        "requirement failed: Index file 00000000000000000100.index is corrupt, found 12 bytes "
        "which is not positive or not a multiple of 8.",
    ),
    (
        "length 12 0.10.1",
        "0.10.1.0",
        offsets(5) + b"\0\0\0\1",
        False,
        "IllegalArgumentException",
        f"requirement failed: Index file {P} is corrupt, found 12 bytes which is not positive "
        "or not a multiple of 8.",
    ),
    (
        "length 12 2.3",
        "2.3.0",
        offsets(5) + b"\0\0\0\1",
        False,
        "CorruptIndexException",
        f"Index file {P} is corrupt, found 12 bytes which is neither positive nor a multiple of 8.",
    ),
    # 10. Length 12 whose only whole slot is zeros: the last-offset check runs first.
    ("length 12 zero slot", "0.9.0.1", bytes(12), False, None, ZERO_TAIL_MSG),
    # 11. Length 4: no whole entry, so only the length check can fail.
    ("length 4", "2.0.0", b"\0\0\0\5", False, "CorruptIndexException", "found 4 bytes"),
]


@pytest.mark.parametrize(
    ("case", "version", "data", "passed", "exception", "message"),
    OFFSET_CASES,
    ids=[c[0] for c in OFFSET_CASES],
)
def test_offset_index_check(
    case: str,
    version: str,
    data: bytes,
    passed: bool,
    exception: str | None,
    message: str | None,
) -> None:
    result = check_offset(data, version)
    assert result.passed is passed, case
    if exception is not None:
        assert result.exception == exception
    if message is not None:
        assert result.message is not None and message in result.message
        if len(message) > 40:
            assert result.message == message


TIME_OK = times((1000, 1), (2000, 2))
TIME_ZERO_TAIL = TIME_OK + bytes(12 * 3)

TIME_CASES = [
    # 1. Increasing timestamps, offsets >= base.
    ("entries", "0.10.1.0", TIME_OK, True, None, None),
    # 2. 0.10.1.0 TimeIndex: zero tail -> last timestamp 0 < first 1000 -> require fails.
    (
        "zero tail 0.10.1",
        "0.10.1.0",
        TIME_ZERO_TAIL,
        False,
        "IllegalArgumentException",
        f"requirement failed: Corrupt time index found, time index file ({T}) has non-zero "
        "size but the last timestamp is 0 which is no larger than the first timestamp 1000",
    ),
    # 3. 1.1.0+: "less than", CorruptIndexException; unlike the offset index, 2.0 did not
    #    relax this one, so a zero tail is still corrupt in 2.2.
    (
        "zero tail 2.2",
        "2.2.0",
        TIME_ZERO_TAIL,
        False,
        "CorruptIndexException",
        f"Corrupt time index found, time index file ({T}) has non-zero size but the last "
        "timestamp is 0 which is less than the first timestamp 1000",
    ),
    # 4. Timestamps out of order (no zeros involved) fail the same check.
    ("out of order", "2.2.0", times((5000, 1), (4000, 2)), False, None, "last timestamp is 4000"),
    # 5. A never-written preallocated file: first ts 0, last ts 0, last offset == base: passes.
    ("all zeros", "1.0.0", bytes(12 * 4), True, None, None),
    # 6. Last offset below base: "smaller than" (0.10.1.0) / "less than" (1.1.0+).
    (
        "below base 0.10.1",
        "0.10.1.0",
        times((1000, 1), (2000, -5)),
        False,
        None,
        "last offset is 95 which is smaller than the first offset 100",
    ),
    (
        "below base 2.2",
        "2.2.0",
        times((1000, 1), (2000, -5)),
        False,
        None,
        "last offset is 95 which is less than the first offset 100",
    ),
    # 7. Length not a multiple of 12.
    (
        "length 13 1.0",
        "1.0.0",
        TIME_OK[:12] + b"\0",
        False,
        "IllegalArgumentException",
        f"requirement failed: Time index file {T} is corrupt, found 13 bytes which is not "
        "positive or not a multiple of 12.",
    ),
    (
        "length 13 3.9",
        "3.9",
        TIME_OK[:12] + b"\0",
        False,
        "CorruptIndexException",
        f"Time index file {T} is corrupt, found 13 bytes which is neither positive nor a "
        "multiple of 12.",
    ),
]


@pytest.mark.parametrize(
    ("case", "version", "data", "passed", "exception", "message"),
    TIME_CASES,
    ids=[c[0] for c in TIME_CASES],
)
def test_time_index_check(
    case: str,
    version: str,
    data: bytes,
    passed: bool,
    exception: str | None,
    message: str | None,
) -> None:
    result = check_time(data, version)
    assert result.passed is passed, case
    if exception is not None:
        assert result.exception == exception
    if message is not None:
        assert result.message is not None and message in result.message


LOW = txns((0, 7, 40, 50, 60))  # lastOffset 50 < start offset 100
ABORTED = "AbortedTxn(version=0, producerId=7, firstOffset=40, lastOffset=50, lastStableOffset=60)"

TXN_CASES = [
    # 1. lastOffset >= start offset passes; a partial trailing entry is never read
    #    (hasNext: channel.position - position >= 34).
    ("ok", "2.3.0", txns((0, 7, 140, 150, 160)) + b"\xff" * 10, True, None, None),
    # 2. 0.11.0.0: bare `require(abortedTxn.lastOffset >= startOffset)`.
    ("low 0.11", "0.11.0.0", LOW, False, "IllegalArgumentException", "requirement failed"),
    # 3. 1.0.0 added a message; 1.1.0 CorruptIndexException; 2.3.0 names the index file.
    (
        "low 1.0",
        "1.0.0",
        LOW,
        False,
        "IllegalArgumentException",
        f"requirement failed: Last offset of aborted transaction {ABORTED} is less than start "
        "offset 100",
    ),
    (
        "low 2.2",
        "2.2.0",
        LOW,
        False,
        "CorruptIndexException",
        f"Last offset of aborted transaction {ABORTED} is less than start offset 100",
    ),
    (
        "low 2.3",
        "2.3.0",
        LOW,
        False,
        "CorruptIndexException",
        f"Last offset of aborted transaction {ABORTED} in index {X} is less than start offset 100",
    ),
    # 4. AbortedTxn.version is buffer.get(0): a first byte of 1 is "version 1" -> KafkaException,
    #    which the loader does not catch.
    (
        "version 2.3",
        "2.3.0",
        txns((0x0100, 7, 140, 150, 160)),
        False,
        "KafkaException",
        f"Unexpected aborted transaction version 1 in transaction index {X}, current version is 0",
    ),
    (
        "version 2.2",
        "2.2.0",
        txns((0x0100, 7, 140, 150, 160)),
        False,
        "KafkaException",
        "Unexpected aborted transaction version 1, current version is 0",
    ),
    # 5. ...but int16 0x00FF has first byte 0, and 0xFF.. is byte -1 (signed): both pass.
    ("second byte", "2.3.0", txns((0x00FF, 7, 140, 150, 160)), True, None, None),
    ("negative byte", "2.3.0", txns((-1, 7, 140, 150, 160)), True, None, None),
]


@pytest.mark.parametrize(
    ("case", "version", "data", "passed", "exception", "message"),
    TXN_CASES,
    ids=[c[0] for c in TXN_CASES],
)
def test_txn_index_check(
    case: str,
    version: str,
    data: bytes,
    passed: bool,
    exception: str | None,
    message: str | None,
) -> None:
    result = txn_index_check(data, BASE, v(version), X)
    assert result.passed is passed, case
    assert result.exception == exception
    if message is not None:
        assert result.message == message


# --- real, cleanly shut down log dirs ----------------------------------------------------------


def test_real_0901_every_index_ok(cleaner_died: Path) -> None:
    logdir = read_log_dir(cleaner_died / "kafka-logs", v("0.9.0.1"))
    verdicts = index_verdicts(logdir, v("0.9.0.1"))
    # 0.9 checks the .index of every segment (10 segments in 7 partitions), no time/txn index
    assert len(verdicts) == 10
    assert {x.verdict for x in verdicts} == {Verdict.OK}
    assert {x.kind for x in verdicts} == {IndexKind.OFFSET}
    assert "__consumer_offsets-3/00000000000000036320.index" in {x.file for x in verdicts}
    assert all(not plan.recoveries for plan in recovery_plan(logdir, v("0.9.0.1")))


def test_real_230_nothing_corrupt(small_gzip: Path) -> None:
    logdir = read_log_dir(small_gzip / "kafka-logs", v("2.3.0"))
    verdicts = index_verdicts(logdir, v("2.3.0"))
    by_verdict: dict[Verdict, list[IndexVerdict]] = {}
    for x in verdicts:
        by_verdict.setdefault(x.verdict, []).append(x)
    # 2.3.0 only checks the .txnindex at load; the one in this dir is fine
    assert [x.file for x in by_verdict[Verdict.OK]] == [
        "__consumer_offsets-2/00000000000000001448.txnindex"
    ]
    assert set(by_verdict) == {Verdict.OK, Verdict.NOT_CHECKED}
    # ...and every offset/time index would also pass 2.3.0's own sanityCheck
    # (what DumpLogSegments --index-sanity-check runs), and the pre-2.3 loaders' checks
    for older in ("1.1.0", "2.2.0"):
        assert {x.verdict for x in index_verdicts(logdir, v(older))} == {Verdict.OK}
    assert all(not plan.recoveries for plan in recovery_plan(logdir, v("2.3.0")))


# --- hand-built dirs: which files the next start calls corrupt -------------------------------


def _build(root: Path, files: dict[str, bytes], recovery: str | None = None) -> LogDir:
    logs = root / "kafka-logs"
    logs.mkdir(parents=True, exist_ok=True)
    (logs / "meta.properties").write_text("version=0\nbroker.id=1\n")
    if recovery is not None:
        (logs / "recovery-point-offset-checkpoint").write_text(recovery)
    for name, data in files.items():
        path = logs / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    return read_log_dir(logs)


def _verdicts(logdir: LogDir, version: str) -> dict[str, tuple[Verdict, str]]:
    return {x.file: (x.verdict, x.reason) for x in index_verdicts(logdir, v(version))}


SEG0 = "t-0/00000000000000000000"
SEG1 = "t-0/00000000000000000010"
SEG2 = "t-0/00000000000000000020"

CRASHED = {
    # a rolled segment, trimmed at roll: fine everywhere
    f"{SEG0}.log": b"a" * 100,
    f"{SEG0}.index": offsets(3),
    f"{SEG0}.timeindex": times((1000, 3)),
    # the active segment after kill -9: both indexes still preallocated, zero-filled tails
    f"{SEG1}.log": b"b" * 200,
    f"{SEG1}.index": offsets(2) + bytes(8 * 100),
    f"{SEG1}.timeindex": times((2000, 2)) + bytes(12 * 100),
}


def test_crashed_active_segment_per_version(tmp_path: Path) -> None:
    logdir = _build(tmp_path, CRASHED, "0\n1\nt 0 15\n")
    # 0.9.0.1: the .index zero tail gives lastOffset == baseOffset -> corrupt; .timeindex is
    # not a 0.9 file at all.
    got = _verdicts(logdir, "0.9.0.1")
    assert got[f"{SEG0}.index"][0] is Verdict.OK
    assert got[f"{SEG1}.index"][0] is Verdict.CORRUPT
    assert got[f"{SEG1}.timeindex"][0] is Verdict.NOT_CHECKED
    # 1.0.0: the offset check fails first; the time index is deleted and rebuilt with it.
    got = _verdicts(logdir, "1.0.0")
    assert (got[f"{SEG1}.index"][0], got[f"{SEG1}.timeindex"][0]) == (
        Verdict.CORRUPT,
        Verdict.REBUILT,
    )
    # 2.2.0: the offset check passes (2.0 relaxed it); the time index check fails
    # (last timestamp 0 < 2000), and the offset index is rebuilt with the segment.
    got = _verdicts(logdir, "2.2.0")
    assert (got[f"{SEG1}.index"][0], got[f"{SEG1}.timeindex"][0]) == (
        Verdict.REBUILT,
        Verdict.CORRUPT,
    )
    assert (
        "last timestamp is 0 which is less than the first timestamp 2000"
        in (got[f"{SEG1}.timeindex"][1])
    )
    # 2.3.0 / 3.9: no offset/time checks at load at all.
    for version in ("2.3.0", "3.9"):
        got = _verdicts(logdir, version)
        assert {verdict for verdict, _ in got.values()} == {Verdict.NOT_CHECKED}


def test_missing_index_per_version(tmp_path: Path) -> None:
    logdir = _build(tmp_path, {f"{SEG0}.log": b"a" * 100, f"{SEG0}.timeindex": b""})
    # 0.9.0.1 / 2.2.0: the index is created by the constructor before exists() is tested.
    for version in ("0.9.0.1", "2.2.0"):
        verdict, reason = _verdicts(logdir, version)[f"{SEG0}.index"]
        assert verdict is Verdict.MISSING and "not rebuilt" in reason
    # 0.10.2 tested exists() first: "Could not find index file ..., rebuilding index...".
    verdict, reason = _verdicts(logdir, "0.10.2.0")[f"{SEG0}.index"]
    assert reason.startswith("Could not find index file corresponding to log file ")
    # 2.3.0 lazy indexes: NoSuchFileException -> recover; the time index goes with it.
    got = _verdicts(logdir, "2.3.0")
    assert got[f"{SEG0}.index"][1].startswith("Could not find offset index file corresponding")
    assert got[f"{SEG0}.timeindex"][0] is Verdict.REBUILT
    assert not any(x is Verdict.CORRUPT for x, _ in got.values())


def test_txn_index_checked_in_23_and_fatal_version(tmp_path: Path) -> None:
    logdir = _build(
        tmp_path,
        {
            f"{SEG0}.log": b"a",
            f"{SEG0}.index": b"",
            f"{SEG0}.txnindex": txns((0, 1, 0, 0, 0)),  # lastOffset 0 >= base 0: fine
            f"{SEG1}.log": b"b",
            f"{SEG1}.index": b"",
            f"{SEG1}.txnindex": txns((0, 1, 2, 5, 6)),  # lastOffset 5 < base 10: corrupt
            f"{SEG2}.log": b"c",
            f"{SEG2}.index": b"",
            f"{SEG2}.txnindex": txns((0x0200, 1, 20, 25, 26)),  # version byte 2: KafkaException
        },
    )
    got = _verdicts(logdir, "2.3.0")
    assert got[f"{SEG0}.txnindex"][0] is Verdict.OK
    assert got[f"{SEG1}.txnindex"][0] is Verdict.CORRUPT
    assert got[f"{SEG1}.index"][0] is Verdict.REBUILT
    assert got[f"{SEG2}.txnindex"][0] is Verdict.FATAL
    # 0.10.2 has no transaction index: it ignores the file.
    assert _verdicts(logdir, "0.10.2.0")[f"{SEG1}.txnindex"][0] is Verdict.NOT_CHECKED


# --- recovery plans -----------------------------------------------------------------------------

PLAN_FILES = {
    f"{SEG0}.log": b"a" * 10,
    f"{SEG0}.index": b"",
    f"{SEG1}.log": b"b" * 20,
    f"{SEG1}.index": b"",
    f"{SEG2}.log": b"c" * 30,
    f"{SEG2}.index": b"",
}

# (case, recovery-point checkpoint text or None, clean shutdown?, expected (base, reason) list)
PLAN_CASES: list[tuple[str, str | None, bool, list[tuple[int, str]]]] = [
    # 1. logSegments(15, MaxValue) starts at floorKey(15) = 10: segments 10 and 20.
    ("floor", "0\n1\nt 0 15\n", False, [(10, "unflushed"), (20, "unflushed")]),
    # 2. A recovery point exactly on a base offset starts there.
    ("exact", "0\n1\nt 0 20\n", False, [(20, "unflushed")]),
    # 3. Fully flushed (recovery point == log end) still re-reads the active segment.
    ("flushed", "0\n1\nt 0 21\n", False, [(20, "unflushed")]),
    # 4. No entry for the partition -> recoveryPoints.getOrElse(tp, 0): everything.
    ("absent", "0\n0\n", False, [(0, "unflushed"), (10, "unflushed"), (20, "unflushed")]),
    # 5. A checkpoint the broker cannot read: "Resetting the recovery checkpoint to 0".
    ("malformed", "0\n1\nt 0\n", False, [(0, "unflushed"), (10, "unflushed"), (20, "unflushed")]),
    # 6. The clean shutdown marker skips recovery (Log.recoverLog / LogLoader.recoverLog).
    ("clean", "0\n1\nt 0 0\n", True, []),
]


@pytest.mark.parametrize(
    ("case", "checkpoint", "clean", "expected"), PLAN_CASES, ids=[c[0] for c in PLAN_CASES]
)
def test_recovery_plan(
    tmp_path: Path,
    case: str,
    checkpoint: str | None,
    clean: bool,
    expected: list[tuple[int, str]],
) -> None:
    files = dict(PLAN_FILES)
    if clean:
        files[".kafka_cleanshutdown"] = b""
    logdir = _build(tmp_path, files, checkpoint)
    (plan,) = recovery_plan(logdir, v("2.3.0"))
    assert [(r.base_offset, r.reason) for r in plan.recoveries] == expected, case
    sizes = {0: 10, 10: 20, 20: 30}
    assert plan.bytes_to_read == sum(sizes[base] for base, _ in expected)


def test_recovery_plan_0901_reads_a_corrupt_unflushed_segment_twice(tmp_path: Path) -> None:
    # 0.9.0.1 Log.loadSegments recovers a corrupt-index segment, then recoverLog recovers it
    # again as unflushed: the same bytes are read twice.
    logdir = _build(tmp_path, CRASHED, "0\n1\nt 0 12\n")
    (plan,) = recovery_plan(logdir, v("0.9.0.1"))
    assert [(r.base_offset, r.reason) for r in plan.recoveries] == [
        (10, "corrupt-index"),
        (10, "unflushed"),
    ]
    assert plan.bytes_to_read == 400


def test_unflushed_segments_below_every_base(tmp_path: Path) -> None:
    # floorKey(recoveryPoint) is null when every segment starts above it: headMap -> all.
    logdir = _build(tmp_path, {"t-0/00000000000000000050.log": b"x"})
    (part,) = logdir.partitions
    assert [s.base_offset for s in unflushed_segments(part.segments, 3)] == [50]


# --- real unclean shutdowns: our verdicts against the broker's own restart log ---------------

UNCLEAN = Path(__file__).parent.parent / "fixtures"
# The broker's WARN lines at the next start, per loader era (see offsets_auditor.startup.indexes).
_FOUND = re.compile(r"Found a corrupted index file(?P<rest>.*)")
_IN_MESSAGE = [
    re.compile(r"index file \((?P<path>[^)]+)\)"),
    re.compile(r"[Ii]ndex file (?P<path>\S+) is corrupt"),
    re.compile(r"in index (?P<path>\S+) is less than"),
]


def _corrupt_files_in_log(text: str) -> set[str]:
    """Index files (``partition/name``) that the restart log says were corrupt."""
    found: set[str] = set()
    for line in text.splitlines():
        match = _FOUND.search(line)
        if match is None:
            continue
        rest = match.group("rest")
        # 0.8 - 0.10.0: "Found a corrupted index file, <path>, deleting and rebuilding index..."
        legacy = rest.startswith(", ")
        path = rest[2:].split(", deleting")[0] if legacy else _path_in_message(rest)
        found.add("/".join(Path(path).parts[-2:]))
    return found


def _path_in_message(rest: str) -> str:
    for pattern in _IN_MESSAGE:
        m = pattern.search(rest)
        if m is not None:
            return m.group("path")
    # 0.11 - 2.2 txn messages have no index path: it is the segment's .txnindex, named in the
    # 0.11/1.0 "deleting <time>, <index>, and <txn>" list or derived from the 1.1+ log file
    deleting = re.search(r", and (\S+\.txnindex) and rebuilding", rest)
    if deleting is not None:
        return deleting.group(1)
    log = re.search(r"corresponding to log file (\S+) due to", rest)
    assert log is not None, rest
    return log.group(1)[: -len(".log")] + ".txnindex"


@pytest.mark.parametrize("version", ["0.9.0.1", "2.3.0"])
def test_unclean_shutdown_matches_broker_restart_log(version: str) -> None:
    case = UNCLEAN / f"kafka-{version}" / "unclean-shutdown"
    assert (case / "README.md").exists(), f"{case} is missing: regenerate it (scripts/fixtures/)"
    restart_log = (case / "server-restart.log").read_text(errors="replace")
    logdir = read_log_dir(case / "kafka-logs", v(version))
    assert not logdir.clean_shutdown.present  # taken right after kill -9
    ours = {x.file for x in index_verdicts(logdir, v(version)) if x.verdict is Verdict.CORRUPT}
    assert ours == _corrupt_files_in_log(restart_log)
    # not vacuous: the crashed dir holds zero-tailed preallocated indexes, which a 1.1 loader
    # would have called corrupt (2.3.0 simply no longer checks them at load)
    older = index_verdicts(logdir, v("1.1.0"))
    assert any(x.verdict is Verdict.CORRUPT for x in older)
    # after the broker's own recovery and a clean shutdown, nothing is left to rebuild
    after = case / "kafka-logs-after"
    if after.is_dir():
        rebuilt = index_verdicts(read_log_dir(after, v(version)), v(version))
        assert not [x.file for x in rebuilt if x.verdict in (Verdict.CORRUPT, Verdict.FATAL)]


def test_restart_log_parser() -> None:
    lines = [
        "[2026] WARN Found a corrupted index file, /data/kafka-logs/t-0/00000000000000000000.index,"
        " deleting and rebuilding index... (kafka.log.Log)",
        "[2026] WARN Found a corrupted index file corresponding to log file /d/t-1/"
        "00000000000000000010.log due to Corrupt time index found, time index file "
        "(/d/t-1/00000000000000000010.timeindex) has non-zero size but ...}, recovering segment",
        "[2026] WARN Found a corrupted index file corresponding to log file /d/t-2/"
        "00000000000000000000.log due to Last offset of aborted transaction AbortedTxn(version=0,"
        " producerId=1, firstOffset=2, lastOffset=5, lastStableOffset=6) is less than start "
        "offset 10}, recovering segment and rebuilding index files...",
        "[2017] WARN Found a corrupted index file due to requirement failed}. deleting "
        "/d/t-3/00000000000000000000.timeindex, /d/t-3/00000000000000000000.index, and "
        "/d/t-3/00000000000000000000.txnindex and rebuilding index... (kafka.log.Log)",
        "[2026] INFO Recovering unflushed segment 0 in log t-0. (kafka.log.Log)",
    ]
    assert _corrupt_files_in_log("\n".join(lines)) == {
        "t-0/00000000000000000000.index",
        "t-1/00000000000000000010.timeindex",
        "t-2/00000000000000000000.txnindex",
        "t-3/00000000000000000000.txnindex",
    }


@given(
    data=st.binary(max_size=120),
    version=st.sampled_from(["0.9.0.1", "0.10.1.0", "1.0.0", "1.1.0", "2.0.0", "2.3.0", "3.9"]),
)
def test_checks_never_raise(data: bytes, version: str) -> None:
    # any bytes: a verdict, never an exception; an empty file always passes
    for result in (check_offset(data, version), check_time(data, version)):
        assert result.passed or (result.message and result.exception)
    txn_index_check(data, BASE, v(version), X)
    assert check_offset(b"", version).passed and check_time(b"", version).passed


# 0.9.0.1 Log.recoverLog: "Recovering unflushed segment %d in log %s."; 2.3.0 adds the log ident
# "[Log partition=<tp>, dir=<parent>] Recovering unflushed segment <base>".
_UNFLUSHED_09 = re.compile(r"Recovering unflushed segment (?P<base>\d+) in log (?P<part>\S+)\.")
_UNFLUSHED_23 = re.compile(
    r"\[Log partition=(?P<part>\S+), dir=[^\]]*\] Recovering unflushed segment (?P<base>\d+)"
)


def _unflushed_in_log(text: str) -> set[tuple[str, int]]:
    found = set()
    for line in text.splitlines():
        match = _UNFLUSHED_09.search(line) or _UNFLUSHED_23.search(line)
        if match is not None:
            found.add((match.group("part"), int(match.group("base"))))
    return found


@pytest.mark.parametrize("version", ["0.9.0.1", "2.3.0"])
def test_unclean_shutdown_recovery_plan_matches_broker(version: str) -> None:
    case = UNCLEAN / f"kafka-{version}" / "unclean-shutdown"
    assert (case / "README.md").exists(), f"{case} is missing: regenerate it (scripts/fixtures/)"
    restart_log = (case / "server-restart.log").read_text(errors="replace")
    logdir = read_log_dir(case / "kafka-logs", v(version))
    ours = {
        (plan.partition, r.base_offset)
        for plan in recovery_plan(logdir, v(version))
        for r in plan.recoveries
        if r.reason == "unflushed"
    }
    assert ours == _unflushed_in_log(restart_log)
    assert ours  # an unclean shutdown always re-reads at least the active segments


def test_unflushed_log_parser() -> None:
    text = (
        "[2026] INFO Recovering unflushed segment 13091 in log __consumer_offsets-0. "
        "(kafka.log.Log)\n"
        "[2026] INFO [Log partition=t-1, dir=/data/kafka-logs] Recovering unflushed segment 20 "
        "(kafka.log.Log)\n"
    )
    assert _unflushed_in_log(text) == {("__consumer_offsets-0", 13091), ("t-1", 20)}
