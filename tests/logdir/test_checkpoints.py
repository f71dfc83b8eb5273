"""Checkpoint, meta.properties and clean-shutdown parsers: real files and Kafka's own error texts.

Each table row says which Kafka source (file + tag) makes the expected text right.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from offsets_auditor.logdir.checkpoints import (
    java_whitespace_split,
    parse_leader_epoch_checkpoint,
    parse_offset_checkpoint,
    read_lines,
)
from offsets_auditor.logdir.meta_properties import (
    parse_clean_shutdown,
    parse_java_properties,
    parse_meta_properties,
)
from offsets_auditor.versions import KafkaVersion

V0901 = KafkaVersion.parse("0.9.0.1")
V230 = KafkaVersion.parse("2.3.0")
LOC = "/data/kafka-logs/recovery-point-offset-checkpoint"


def _logs(fixture: Path) -> Path:
    return fixture / "kafka-logs"


# --- real files ---------------------------------------------------------------------------


def test_real_0901_cleaner_checkpoint(cleaner_died: Path) -> None:
    text = (_logs(cleaner_died) / "cleaner-offset-checkpoint").read_text()
    parsed = parse_offset_checkpoint(text, version=V0901, location=LOC)
    assert parsed.readable_by_broker
    assert (parsed.version, parsed.expected_count) == (0, 1)
    assert parsed.offsets() == {("__consumer_offsets", 2): 0}


def test_real_0901_recovery_points_keep_long_topic(cleaner_died: Path) -> None:
    text = (_logs(cleaner_died) / "recovery-point-offset-checkpoint").read_text()
    parsed = parse_offset_checkpoint(text, version=V0901, location=LOC)
    assert parsed.readable_by_broker
    offsets = parsed.offsets()
    assert len(parsed.entries) == 7
    assert offsets[("__consumer_offsets", 2)] == 70006
    assert offsets[("__consumer_offsets", 3)] == 40000
    long_topics = [t for (t, _) in offsets if t.startswith("orders.")]
    assert len(long_topics) == 1 and len(long_topics[0]) > 180
    # file order is preserved (the broker writes map iteration order, not sorted)
    assert [e.topic for e in parsed.entries][:2] == ["__consumer_offsets", "__consumer_offsets"]
    assert [e.partition for e in parsed.entries][:2] == [3, 0]


def test_real_230_checkpoints(small_gzip: Path) -> None:
    logs = _logs(small_gzip)
    cleaner = parse_offset_checkpoint(
        (logs / "cleaner-offset-checkpoint").read_text(), version=V230, location=LOC
    )
    assert cleaner.offsets() == {
        ("__consumer_offsets", 3): 1448,
        ("__consumer_offsets", 2): 1448,
        ("__consumer_offsets", 1): 1469,
    }
    start = parse_offset_checkpoint(
        (logs / "log-start-offset-checkpoint").read_text(), version=V230, location=LOC
    )
    assert start.readable_by_broker and start.entries == () and start.expected_count == 0
    hw = parse_offset_checkpoint(
        (logs / "replication-offset-checkpoint").read_text(), version=V230, location=LOC
    )
    assert hw.readable_by_broker and len(hw.entries) == 56
    assert hw.offsets()[("__consumer_offsets", 1)] == 1509


def test_real_230_leader_epoch_checkpoint(small_gzip: Path) -> None:
    text = (_logs(small_gzip) / "__consumer_offsets-2" / "leader-epoch-checkpoint").read_text()
    parsed = parse_leader_epoch_checkpoint(text, version=V230, location="x")
    assert parsed.readable_by_broker
    assert [(e.epoch, e.start_offset) for e in parsed.entries] == [(0, 0)]


@pytest.mark.parametrize("fixture", ["cleaner_died", "small_gzip"])
def test_real_meta_properties(fixture: str, request: pytest.FixtureRequest) -> None:
    path = _logs(request.getfixturevalue(fixture)) / "meta.properties"
    meta = parse_meta_properties(path.read_bytes())
    assert (meta.version, meta.broker_id, meta.cluster_id) == (0, 0, None)
    assert meta.findings == ()


# --- Kafka's error texts, per version -------------------------------------------------------

# (version, file text, expected finding details, why)
ERROR_CASES = [
    # 1. 0.9.0.1 OffsetCheckpoint.read: pieces.length != 3 -> "Malformed line in offset
    #    checkpoint file: '%s'."
    ("0.9.0.1", "0\n1\nfoo 0\n", ["Malformed line in offset checkpoint file: 'foo 0'."]),
    # 2. 0.9.0.1: `pieces(1).toInt` is outside any try, so the NumberFormatException escapes.
    ("0.9.0.1", "0\n1\nfoo x 3\n", ['java.lang.NumberFormatException: For input string: "x"']),
    # 3. 0.9.0.1: offsets is a Map, so a repeated partition counts once -> count mismatch.
    ("0.9.0.1", "0\n2\nfoo 0 1\nfoo 0 2\n", ["Expected 2 entries but found only 1"]),
    # 4. 0.9.0.1: `case _ =>` prints the version it found.
    ("0.9.0.1", "1\n0\n", ["Unrecognized version of the highwatermark checkpoint file: 1"]),
    # 5. 0.10.0.1 OffsetCheckpoint: s"...: $line'" (the stray quote is in the source) and
    #    NumberFormatException caught and reported as a malformed line.
    ("0.10.0.1", "0\n1\nfoo x 3\n", ["Malformed line in offset checkpoint file: foo x 3'"]),
    #    ...and offsets is still a mutable.Map: duplicates count once.
    ("0.10.0.1", "0\n2\nfoo 0 1\nfoo 0 2\n", ["Expected 2 entries but found only 1"]),
    # 6. 2.3.0 CheckpointFile.scala: path in parentheses, stray quote; entries is a Buffer so
    #    the duplicate counts twice and there is no mismatch.
    ("2.3.0", "0\n1\nfoo 0\n", [f"Malformed line in checkpoint file ({LOC}): foo 0'"]),
    ("2.3.0", "0\n2\nfoo 0 1\nfoo 0 2\n", []),
    (
        "2.3.0",
        "0\n3\nfoo 0 1\n",
        [f"Expected 3 entries in checkpoint file ({LOC}), but found only 1"],
    ),
    # 7. 2.3.0: an unparsable count line is caught as NumberFormatException -> malformed line.
    ("2.3.0", "0\nx\n", [f"Malformed line in checkpoint file ({LOC}): x'"]),
    # 8. 2.3.0: "+ version" prints the *expected* version (0), not the one in the file.
    ("2.3.0", "7\n0\n", [f"Unrecognized version of the checkpoint file ({LOC}): 0"]),
    # 9. 2.6.0 CheckpointReadBuffer: the line is now quoted on both sides.
    ("2.6.0", "0\n1\nfoo 0\n", [f"Malformed line in checkpoint file ({LOC}): 'foo 0'"]),
    # 10. 3.1.0+ CheckpointFile.java: brackets, and the partition's toInt is not caught.
    ("3.9", "0\n1\nfoo 0\n", [f"Malformed line in checkpoint file [{LOC}]: foo 0"]),
    ("3.9", "0\n1\nfoo x 3\n", ['java.lang.NumberFormatException: For input string: "x"']),
    (
        "3.9",
        "0\n3\nfoo 0 1\n",
        [f"Expected [3] entries in checkpoint file [{LOC}], but found only [1]"],
    ),
    ("3.9", "2\n", [f"Unrecognised version:2, expected version: 0 in checkpoint file at: {LOC}"]),
    # 11. Java's "\\s+" split keeps a leading empty string: a leading space makes 4 pieces.
    ("2.3.0", "0\n1\n foo 0 1\n", [f"Malformed line in checkpoint file ({LOC}):  foo 0 1'"]),
    # 12. Integer.parseInt rejects surrounding whitespace: "1 " is not a count.
    ("3.9", "0\n1 \n", [f"Malformed line in checkpoint file [{LOC}]: 1 "]),
    # 13. Empty file / version line only: `readLine() == null` -> empty, no error (all eras).
    ("0.9.0.1", "", []),
    ("3.9", "0\n", []),
    # 14. An offset above Long.MAX_VALUE fails Long.parseLong.
    (
        "0.9.0.1",
        "0\n1\nfoo 0 9223372036854775808\n",
        ['java.lang.NumberFormatException: For input string: "9223372036854775808"'],
    ),
]


@pytest.mark.parametrize(("version", "text", "expected"), ERROR_CASES)
def test_checkpoint_error_texts(version: str, text: str, expected: list[str]) -> None:
    parsed = parse_offset_checkpoint(text, version=KafkaVersion.parse(version), location=LOC)
    assert [f.detail for f in parsed.findings] == expected
    assert parsed.readable_by_broker is (not expected)
    assert all(f.kind == "malformed-checkpoint" for f in parsed.findings)


def test_malformed_lines_keep_the_good_entries_and_positions() -> None:
    text = "0\n3\na 0 1\nbroken\nb 1 2\n"
    parsed = parse_offset_checkpoint(text, version=V230, location=LOC, file="x")
    assert [(e.topic, e.partition, e.offset, e.line) for e in parsed.entries] == [
        ("a", 0, 1, 3),
        ("b", 1, 2, 5),
    ]
    (finding,) = parsed.findings
    assert finding.position == text.index("broken") and finding.file == "x"


def test_read_lines_is_bufferedreader_readline() -> None:
    assert read_lines("a\r\nb\rc\nd") == [("a", 0), ("b", 3), ("c", 5), ("d", 7)]
    assert read_lines("a\n") == [("a", 0)]
    assert read_lines("a\n\n") == [("a", 0), ("", 2)]


def test_java_whitespace_split() -> None:
    assert java_whitespace_split("a  b\tc  ") == ["a", "b", "c"]
    assert java_whitespace_split(" a") == ["", "a"]
    assert java_whitespace_split("") == [""]


def test_leader_epoch_errors_follow_the_checkpoint_reader() -> None:
    # 2.3.0 LeaderEpochCheckpointFile.Formatter: `case Array(epoch, offset)`, epoch.toInt inside
    # CheckpointReadBuffer's try -> malformed line.
    parsed = parse_leader_epoch_checkpoint("0\n1\nx 5\n", version=V230, location="/l")
    assert [f.detail for f in parsed.findings] == ["Malformed line in checkpoint file (/l): x 5'"]


# --- meta.properties and .kafka_cleanshutdown -----------------------------------------------


def test_java_properties_syntax() -> None:
    text = "# c\n! c\n a = b\\\n   c\nkey:val\nk2 v2\nk3  =  v3\nk4\nu=\\u0041\\t\n"
    assert parse_java_properties(text) == [
        ("a", "bc"),
        ("key", "val"),
        ("k2", "v2"),
        ("k3", "v3"),
        ("k4", ""),
        ("u", "A\t"),
    ]


def test_kraft_meta_properties() -> None:
    data = b"#\nnode.id=3\nversion=1\ncluster.id=abcDEF\ndirectory.id=xyz\n"
    meta = parse_meta_properties(data)
    assert (meta.version, meta.broker_id, meta.node_id) == (1, 3, 3)
    assert (meta.cluster_id, meta.directory_id, meta.findings) == ("abcDEF", "xyz", ())


def test_meta_properties_problems() -> None:
    # 0.9.0.1 BrokerMetadataCheckpoint: VerifiableProperties.getIntInRange("broker.id", ...)
    meta = parse_meta_properties(b"version=0\n")
    assert [f.detail for f in meta.findings] == ["Missing required property 'broker.id'"]
    meta = parse_meta_properties(b"version=0\nbroker.id=x\n")
    assert meta.broker_id is None and meta.findings[0].field == "broker.id"


def test_clean_shutdown_content() -> None:
    assert parse_clean_shutdown(b"").empty  # 0.8 - 3.6: empty marker
    parsed = parse_clean_shutdown(b'{"version":0,"brokerEpoch":42}')  # 3.7+ JSON
    assert (parsed.empty, parsed.version, parsed.broker_epoch) == (False, 0, 42)
    broken = parse_clean_shutdown(b"{not json")
    assert (
        broken.broker_epoch is None and broken.findings[0].kind == "malformed-clean-shutdown-file"
    )


# --- bad input is normal input ---------------------------------------------------------------

_CHECKPOINTISH = st.lists(
    st.one_of(
        st.sampled_from(["0", "1", "2", "t 0 5", "t  1\t7", " x 1 2", "a b c", "", "+3", "-1"]),
        st.text(max_size=12),
    ),
    max_size=6,
).map(lambda lines: "\n".join(lines))


@given(
    text=_CHECKPOINTISH, version=st.sampled_from(["0.9.0.1", "0.10.2.0", "2.3.0", "2.6.0", "3.9"])
)
def test_checkpoint_parser_never_raises(text: str, version: str) -> None:
    parsed = parse_offset_checkpoint(text, version=KafkaVersion.parse(version), location=LOC)
    # every finding is a malformed-checkpoint with a position inside the text
    assert all(0 <= (f.position or 0) <= len(text) for f in parsed.findings)
    assert all(f.kind == "malformed-checkpoint" for f in parsed.findings)


@given(data=st.binary(max_size=200))
def test_meta_properties_never_raises(data: bytes) -> None:
    parse_meta_properties(data)
    parse_clean_shutdown(data)
