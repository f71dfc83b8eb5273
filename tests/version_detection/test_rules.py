"""Version evidence rules, as a numbered table of observations and the bounds they imply, each
commented with the Kafka fact that makes it right (the rules cite the source)."""

from __future__ import annotations

import pytest

from offsets_auditor.version_detection.combine import combine, detect
from offsets_auditor.version_detection.file_rules import file_evidence
from offsets_auditor.version_detection.model import Evidence, Strength, VersionRange
from offsets_auditor.version_detection.observations import (
    LogDirObservation,
    MetaFacts,
    PartitionFiles,
    RecordFormats,
    ServerLogVersion,
)
from offsets_auditor.version_detection.record_rules import record_evidence, server_log_evidence
from offsets_auditor.versions import KafkaVersion

V = KafkaVersion.parse
V0_META = MetaFacts(version=0, has_cluster_id=False, has_node_id=False, has_directory_id=False)


def log_dir(
    root: tuple[str, ...] = ("recovery-point-offset-checkpoint", "meta.properties"),
    partition_files: tuple[str, ...] = ("00000000000000000000.log", "00000000000000000000.index"),
    *,
    meta: MetaFacts | None = V0_META,
    marker: bytes | None = None,
    dirs: tuple[str, ...] = (),
    largest: int | None = None,
) -> LogDirObservation:
    if largest is None:  # a 100 kB segment when there is a .log
        largest = 100_000 if any(name.endswith(".log") for name in partition_files) else 0
    return LogDirObservation(
        "/data/kafka-logs",
        frozenset(root),
        frozenset(("__consumer_offsets-0", *dirs)),
        meta,
        marker,
        (PartitionFiles("__consumer_offsets-0", frozenset(partition_files), largest),),
        (),
    )


def implied(evidence: list[Evidence]) -> set[str]:
    return {e.implies for e in evidence}


FILE_CASES = [
    # 1. A 0.9 log dir: no .timeindex (0.10.1+ creates one per segment), no
    #    log-start-offset-checkpoint (0.11+ creates it with the recovery-point checkpoint),
    #    meta.properties without cluster.id (2.4+ writes it at every start).
    (1, log_dir(), {"< 0.10.1.0", "< 0.11.0.0", "< 2.4.0"}),
    # 2. A .timeindex exists: 0.10.1.0 or later wrote it.
    (
        2,
        log_dir(partition_files=("00000000000000000000.log", "00000000000000000000.timeindex")),
        {">= 0.10.1.0", "< 0.11.0.0", "< 2.4.0"},
    ),
    # 3. No .timeindex, but no segment above index.interval.bytes either: a 2.3+ broker creates
    #    time indexes lazily, so nothing can be said.
    (3, log_dir(largest=4096), {"< 0.11.0.0", "< 2.4.0"}),
    # 4. 0.11 files: producer snapshot, transaction index, leader epochs, log start offsets.
    (
        4,
        log_dir(
            root=("recovery-point-offset-checkpoint", "log-start-offset-checkpoint"),
            partition_files=(
                "00000000000000000000.log",
                "00000000000000000000.timeindex",
                "00000000000000000000.txnindex",
                "00000000000000000007.snapshot",
                "leader-epoch-checkpoint",
            ),
            meta=None,
        ),
        {">= 0.10.1.0", ">= 0.11.0.0"},
    ),
    # 5. topic IDs (partition.metadata) exist from 2.8.0.
    (5, log_dir(partition_files=("partition.metadata",), meta=None), {">= 2.8.0", "< 0.11.0.0"}),
    # 6. meta.properties: cluster.id from 2.4.0; KRaft version=1 with node.id from 2.8.0;
    #    directory.id from 3.7.0.
    (
        6,
        log_dir(meta=MetaFacts(0, True, False, False), partition_files=()),
        {">= 2.4.0", "< 0.11.0.0"},
    ),
    (
        6,
        log_dir(meta=MetaFacts(1, True, True, True), partition_files=()),
        {">= 2.8.0", ">= 3.7.0", "< 0.11.0.0"},
    ),
    # 7. The clean-shutdown marker: empty up to 3.6, JSON from 3.7.0.
    (7, log_dir(marker=b"", partition_files=(), meta=None), {"< 3.7.0", "< 0.11.0.0"}),
    (
        7,
        log_dir(marker=b'{"version":0,"brokerEpoch":5}', partition_files=(), meta=None),
        {">= 3.7.0", "< 0.11.0.0"},
    ),
    # 8. The KRaft metadata log: @metadata-0 in 2.8.x, __cluster_metadata-0 from 3.0.0.
    (
        8,
        log_dir(dirs=("@metadata-0",), partition_files=(), meta=None),
        {">= 2.8.0 and < 3.0.0", "< 0.11.0.0"},
    ),
    (
        8,
        log_dir(dirs=("__cluster_metadata-0",), partition_files=(), meta=None),
        {">= 3.0.0", "< 0.11.0.0"},
    ),
    # 9. Nothing says a broker ever opened the dir (no recovery-point checkpoint): no upper
    #    bound from missing files.
    (9, log_dir(root=(), meta=None), set()),
]


@pytest.mark.parametrize(("rule", "observation", "expected"), FILE_CASES)
def test_file_rules(rule: int, observation: LogDirObservation, expected: set[str]) -> None:
    assert implied(file_evidence(observation)) == expected, f"rule {rule}"


def formats(
    *labels: str, magics: tuple[int, ...] = (), codecs: tuple[str, ...] = ()
) -> RecordFormats:
    keys = {label.split(":")[0] for label in labels}
    values = {label for label in labels if ":" in label}
    return RecordFormats(
        "__consumer_offsets-0/00000000000000000000.log",
        frozenset(magics),
        frozenset(keys),
        frozenset(values),
        frozenset(codecs),
    )


RECORD_CASES = [
    # 1. 0.9-2.0 offset commits: key v1 (0.9.0.0+), value v1.
    (1, formats("offset_commit/v1:v1", magics=(0,)), {">= 0.9.0.0"}),
    # 2. magic 1 (0.10.0.0+), magic 2 (0.11.0.0+).
    (2, formats(magics=(1, 2)), {">= 0.10.0.0", ">= 0.11.0.0"}),
    # 3. OffsetCommitValue v3 (2.1.0+), GroupMetadataValue v3 (2.3.0+).
    (
        3,
        formats("offset_commit/v1:v3", "group_metadata/v2:v3"),
        {">= 0.9.0.0", ">= 2.1.0", ">= 2.3.0"},
    ),
    # 4. GroupMetadataValue v1 (0.10.1.0+), zstd (2.1.0+).
    (
        4,
        formats("group_metadata/v2:v1", codecs=("zstd",)),
        {">= 0.9.0.0", ">= 0.10.1.0", ">= 2.1.0"},
    ),
    # 5. New coordinator records: types 3-8 from 3.6.0, streams types from 4.1.0.
    (
        5,
        formats("consumer_group_metadata/v3", "streams_group_metadata/v17"),
        {">= 3.6.0", ">= 4.1.0"},
    ),
    # 6. Values nobody writes give no bound (GroupMetadataValue v4), nor unknown types.
    (6, formats("group_metadata/v2:v4", "unknown/v99"), {">= 0.9.0.0"}),
]


@pytest.mark.parametrize(("rule", "observation", "expected"), RECORD_CASES)
def test_record_rules(rule: int, observation: RecordFormats, expected: set[str]) -> None:
    assert implied(record_evidence(observation)) == expected, f"rule {rule}"


@pytest.mark.parametrize(
    ("line", "version", "expected"),
    [
        # AppInfoParser, 0.9.0.1 - 2.1.x wording (to kafkaServer.out up to 0.10.2)
        ("[2026-11-21 08:23:42,4] INFO Kafka version : 0.9.0.1 (x)", "0.9.0.1", "= 0.9.0.1"),
        # 2.2.0+ wording, as in the real 2.3.0 fixtures' server.log
        ("[2026-11-21 09:15:06,116] INFO Kafka version: 2.3.0 (x)", "2.3.0", "= 2.3.0"),
        # a vendor build's number is no Apache release: no evidence
        ("[2026-11-21 09:15:06,116] INFO Kafka version: 7.3.0-ccs (x)", "7.3.0-ccs", None),
    ],
)
def test_server_log_line(line: str, version: str, expected: str | None) -> None:
    found = server_log_evidence(ServerLogVersion("server.log", version, line))
    assert (found.implies if found else None) == expected


def piece(since: str | None, until: str | None, strength: Strength) -> Evidence:
    return Evidence(
        "x", None, None if since is None else V(since), None if until is None else V(until),
        "r", "s", strength,
    )  # fmt: skip


def test_combine_intersects_and_sets_aside_the_weaker_contradiction() -> None:
    versions, accepted, set_aside = combine(
        [
            piece(None, "0.11.0.0", Strength.ABSENT),
            piece("2.1.0", None, Strength.WRITTEN),
            piece("0.9.0.0", None, Strength.WRITTEN),
        ]
    )
    # the record written by 2.1+ beats the missing file that said < 0.11
    assert versions == VersionRange(V("2.1.0"), None)
    assert [e.implies for e in set_aside] == ["< 0.11.0.0"]
    assert len(accepted) == 2


def test_used_version_is_the_lowest_modelled_unless_given() -> None:
    assert detect([piece("0.10.0.0", "0.10.1.0", Strength.WRITTEN)]).used == V("0.10.0.0")
    # 0.9.0.0 shipped the cleaner off by default: 0.9.0.1 (same files) stands for it
    assert detect([piece("0.9.0.0", "0.10.1.0", Strength.WRITTEN)]).used == V("0.9.0.1")
    assert detect([piece("0.9.0.0", "0.9.0.1", Strength.WRITTEN)]).used == V("0.9.0.0")
    # no evidence at all: every release possible, the emulation starts at 0.9.0.1
    assert detect([]).used == V("0.9.0.1")
    assert detect([], V("2.3.0")).used == V("2.3.0")


def test_version_mismatch_names_the_evidence() -> None:
    evidence = [
        Evidence("no .timeindex", None, None, V("0.10.1.0"), "r", "s", Strength.ABSENT),
        Evidence("key v1", "p/0.log", V("0.9.0.0"), None, "r", "s", Strength.WRITTEN),
    ]
    found = detect(evidence, V("3.9.0")).findings()
    assert [(f.kind, f.severity.value) for f in found] == [("version-mismatch", "warning")]
    assert "no .timeindex means Kafka < 0.10.1.0" in found[0].detail
    assert "key v1" not in found[0].detail  # it allows 3.9.0
    assert detect(evidence, V("0.9.0.1")).findings() == []


def test_range_in_release_numbers() -> None:
    # "< 0.10.1.0" ends at the last release before it
    assert VersionRange(V("0.9.0.0"), V("0.10.1.0")).to_json() == ["0.9.0.0", "0.10.0.1"]
    # a server log's exact version that the release list does not name stays itself
    exact = server_log_evidence(ServerLogVersion("s", "3.8.1", "Kafka version: 3.8.1"))
    assert exact is not None
    assert combine([exact])[0].to_json() == ["3.8.1", "3.8.1"]
    # nothing known: every release
    assert combine([])[0].to_json() == ["0.8.0.0", "4.1.0"]
