"""The coordinator partition, with Java's String.hashCode and Kafka's Utils.abs.

Expected hashes are Java's, computed by hand from ``h = 31*h + c`` over UTF-16 code units with
int32 overflow; each case says why it matters.
"""

from __future__ import annotations

import io
import json
import sys
from pathlib import Path

import pytest

from offsets_auditor.cli.main import main
from offsets_auditor.coordinator import (
    coordinator_partition,
    java_string_hash,
    java_string_hashes,
    kafka_abs,
)


def reference_hash(text: str) -> int:
    """A second, deliberately naive implementation: one UTF-16 unit at a time."""
    h = 0
    data = text.encode("utf-16-be", "surrogatepass")
    for i in range(0, len(data), 2):
        h = (h * 31 + int.from_bytes(data[i : i + 2], "big")) % 2**32
    return h - 2**32 if h >= 2**31 else h


CASES = [
    # 1. The empty string hashes to 0, so it lives in partition 0.
    ("", 0, 0),
    # 2. A plain ASCII id.
    ("usercenter", reference_hash("usercenter"), None),
    # 3. "polygenelubricants".hashCode() == Integer.MIN_VALUE: Math.abs would stay negative;
    #    Kafka's Utils.abs maps it to 0, so the partition is 0 for every partition count.
    ("polygenelubricants", -(2**31), 0),
    # 4. A negative hash that is not MIN_VALUE: abs() of it.
    ("orders", reference_hash("orders"), None),
    # 5. A character outside the BMP counts as two surrogate units: U+1F600 is D83D DE00.
    ("\U0001f600", 31 * 0xD83D + 0xDE00, None),
    # 6. Non-Latin text, BMP only.
    ("группа", reference_hash("группа"), None),
]


@pytest.mark.parametrize(("group", "expected_hash", "expected_partition"), CASES)
def test_java_hash_and_partition(
    group: str, expected_hash: int, expected_partition: int | None
) -> None:
    assert java_string_hash(group) == expected_hash
    for partitions in (1, 4, 50, 51):
        partition = coordinator_partition(group, partitions)
        assert 0 <= partition < partitions
        if expected_partition is not None:
            assert partition == expected_partition
        assert partition == kafka_abs(expected_hash) % partitions


@pytest.mark.parametrize(
    "texts",
    [
        [case[0] for case in CASES],  # one outside the BMP among the others: units counted apart
        [case[0] for case in CASES if case[0] != "\U0001f600"],  # all in the BMP: characters
        ["a\ud800b", "\udfff", "", "x" * 300],  # lone surrogates (undecodable bytes), long ids
    ],
)
def test_many_hashes_at_once(texts: list[str]) -> None:
    assert java_string_hashes(texts).tolist() == [reference_hash(t) for t in texts]


def test_negative_hash_case_really_is_negative() -> None:
    assert java_string_hash("orders") < 0


def test_kafka_abs() -> None:
    assert kafka_abs(-(2**31)) == 0
    assert kafka_abs(-5) == 5
    assert kafka_abs(2**31 - 1) == 2**31 - 1


def test_real_broker_placement(capsys: pytest.CaptureFixture[str]) -> None:
    """The real 0.9.0.1 broker of the cleaner-died fixture (4 partitions) put group g1 in
    partition 2 and usercenter in partition 0 (their records are in those partition dirs)."""
    assert main(["coordinator", "g1", "usercenter", "--partitions", "4", "--json"]) == 0
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert lines == [
        {"group": "g1", "partition": 2, "partitions": 4},
        {"group": "usercenter", "partition": 0, "partitions": 4},
    ]


def test_rejects_non_positive_partition_count(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["coordinator", "g", "--partitions", "0"]) == 3
    assert "--partitions must be positive, not 0" in capsys.readouterr().err


def test_the_partition_count_is_never_guessed(capsys: pytest.CaptureFixture[str]) -> None:
    """Without --partitions the command used to answer for 50 partitions, silently: on a
    cluster with another count that names the wrong partition for most groups."""
    assert main(["coordinator", "usercenter"]) == 3
    captured = capsys.readouterr()
    assert captured.out == ""
    assert "give --partitions N" in captured.err
    assert "offsets.topic.num.partitions, 50 unless set" in captured.err


def test_group_ids_from_a_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """One id per line; CRLF and LF both end a line; blank lines are skipped; whitespace is
    part of an id (and warned about); arguments come first."""
    ids = tmp_path / "groups.txt"
    ids.write_bytes(b"g1\r\n\n   \nusercenter\n g1 \n-legacy\n")
    assert main(["coordinator", "orders", "--partitions", "4", "--from-file", str(ids)]) == 0
    captured = capsys.readouterr()
    groups = [line.split("\t")[0] for line in captured.out.splitlines()]
    assert groups == ["orders", "g1", "usercenter", " g1 ", "-legacy"]
    assert captured.out.splitlines()[1] == "g1\t__consumer_offsets-2"  # the real broker's
    assert "line 5: group id ' g1 ' has leading or trailing whitespace" in captured.err
    assert captured.out.splitlines()[3].split("\t")[1] == (
        f"__consumer_offsets-{coordinator_partition(' g1 ', 4)}"
    )


def test_group_ids_from_stdin(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO("группа\nusercenter\n".encode())))
    assert main(["coordinator", "--partitions", "4", "--from-file", "-", "--json"]) == 0
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [x["group"] for x in lines] == ["группа", "usercenter"]
    assert lines[1]["partition"] == 0


def test_bad_group_files(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    latin1 = tmp_path / "latin1.txt"
    latin1.write_bytes(b"ok\ngr\xfcppe\n")
    assert main(["coordinator", "--partitions", "4", "--from-file", str(latin1)]) == 3
    assert "line 2 is not UTF-8" in capsys.readouterr().err
    missing = tmp_path / "missing"
    assert main(["coordinator", "--partitions", "4", "--from-file", str(missing)]) == 3
    assert "cannot read" in capsys.readouterr().err
    assert main(["coordinator", "--partitions", "4"]) == 3
    assert "give GROUP ids, --from-file FILE, or both" in capsys.readouterr().err


def test_ids_starting_with_a_dash(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["coordinator", "--partitions", "4", "--", "-x", "--json"]) == 0
    assert [line.split("\t")[0] for line in capsys.readouterr().out.splitlines()] == [
        "-x",
        "--json",
    ]
    with pytest.raises(SystemExit):
        main(["coordinator", "--help"])
    assert "-- -legacy-consumers" in capsys.readouterr().out
