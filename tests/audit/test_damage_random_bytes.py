"""Random bytes where a segment should be, in copies of real brokers' log dirs.

- 1 MiB of random bytes as the only (active) segment used to read as an ``info`` truncated tail
  at position 0 (a write in flight) and ``groups`` exited 0. The header's own fields say it is
  no entry Kafka wrote (an offset outside the segment, a magic that is no format): it is a
  ``corrupt-segment`` that Kafka's readers stop at (2.3.0 ``FileLogInputStream.nextBatch``).
- A random non-active segment used to get two cleaner messages from one emulation: the
  verdict's (0.9's ``nextOffset`` search: "Invalid message size", or an ``OutOfMemoryError``)
  and the finding's ("Message found with corrupt size", "message larger than maximum allowable
  size"). The finding now quotes the verdict's, and the verdict names one exception.
"""

from __future__ import annotations

import json
import random
import shutil
import struct
from pathlib import Path
from typing import Any

import pytest

from offsets_auditor.cli.main import main

FIXTURES = Path(__file__).parent.parent / "fixtures"
CLEANER_DIED = FIXTURES / "kafka-0.9.0.1" / "cleaner-died"
SMALL_GZIP = FIXTURES / "kafka-2.3.0" / "small-gzip" / "kafka-logs"
MIB = 1 << 20


def _random(seed: int) -> bytes:
    return random.Random(seed).randbytes(MIB)


def test_random_bytes_as_the_active_segment_are_damage_not_a_tail(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    log_dir = tmp_path / "kafka-logs"
    shutil.copytree(SMALL_GZIP, log_dir)
    segment = log_dir / "__consumer_offsets-0" / "00000000000000000000.log"
    segment.write_bytes(_random(2))
    offset, size = struct.unpack(">qi", segment.read_bytes()[:12])
    assert size + 12 > MIB  # read as a header: an entry running past the end, as a tail would

    assert main(["groups", str(log_dir), "--json"]) == 1  # a warning: it used to be 0
    report = json.loads(capsys.readouterr().out)
    at = [f for f in report["findings"] if f["file"] and f["file"].endswith(segment.name)]
    at = [f for f in at if f["partition"] == "__consumer_offsets-0"]
    assert [(f["kind"], f["severity"], f["position"]) for f in at] == [
        ("corrupt-segment", "warning", 0)
    ]
    detail = at[0]["detail"]
    assert f"its offset {offset} is outside this segment (base offset 0)" in detail
    assert "Kafka's readers stop here and read none of them" in detail
    assert "recovery truncates the log at byte 0 of this segment" in detail
    assert not any(f["kind"] == "truncated-tail" for f in report["findings"])

    assert main(["dump", str(segment)]) == 1
    err = capsys.readouterr().err
    assert "1,048,576 bytes from here to the end of the file are no entry Kafka wrote" in err


def test_a_real_partial_write_is_still_a_truncated_tail(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The same check does not fire on a real entry cut short (the first 1000 bytes of a real
    broker's batch, appended to its active segment)."""
    log_dir = tmp_path / "kafka-logs"
    shutil.copytree(SMALL_GZIP, log_dir)
    segment = max(log_dir.glob("__consumer_offsets-*/*.log"), key=lambda p: p.stat().st_size)
    data = segment.read_bytes()
    size = struct.unpack(">i", data[8:12])[0]
    with segment.open("ab") as f:
        f.write(data[: min(12 + size - 1, 1000)])
    assert main(["groups", str(log_dir), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    tails = [f for f in report["findings"] if f["kind"] == "truncated-tail"]
    assert [(f["severity"], f["position"]) for f in tails] == [("info", len(data))]


def _audit(log_dir: Path, capsys: pytest.CaptureFixture[str]) -> dict[str, Any]:
    config = CLEANER_DIED / "broker-server.properties"
    main(["audit", str(log_dir), "--broker-config", str(config), "--json"])
    report: dict[str, Any] = json.loads(capsys.readouterr().out)
    return report


@pytest.mark.parametrize(
    ("seed", "exception"),
    [
        (1, "Invalid message size: -546639400"),  # FileMessageSet.searchFor's check
        (2, "java.lang.OutOfMemoryError: Java heap space"),  # FileMessageSet.iterator allocates
    ],
)
def test_one_emulation_one_cleaner_message(
    seed: int, exception: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Random bytes as the middle segment of the real 0.9.0.1 partition that the cleaner reaches
    (partition 2, whose thread death would come first, removed)."""
    log_dir = tmp_path / "kafka-logs"
    shutil.copytree(CLEANER_DIED / "kafka-logs", log_dir)
    shutil.rmtree(log_dir / "__consumer_offsets-2")
    (log_dir / "__consumer_offsets-3" / "00000000000000020000.log").write_bytes(_random(seed))
    report = _audit(log_dir, capsys)
    partition = next(p for p in report["partitions"] if p["partition"] == 3)
    message = partition["cleaner"]["message"]
    assert message.startswith(exception)
    assert "larger than maximum allowable size" not in message  # one exception, not two
    damage = [
        f
        for f in report["findings"]
        if f["partition"] == "__consumer_offsets-3" and f["kind"] == "corrupt-segment"
    ]
    assert len(damage) == 1
    assert f"Cleaner: pass 1 fails here with '{message}'" in damage[0]["detail"]
    assert "no entry Kafka wrote" in damage[0]["detail"]
