"""Every verdict on every real-broker log dir says only what the emulation showed.

For each fixture log dir, with its broker's own config and with settings that make the map
small or the ratio threshold high, the outcome and reason of each partition are checked
against the same report's ``pass_details`` (where each pass ended, whether its map filled) and
selection numbers: no "fits in one pass" with a full map, every offset the reason quotes is one
the passes show, and the records it says stay uncompacted are counted again from the segments
(by Kafka's own DumpLogSegments output where the fixture has it).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from offsets_auditor.cli.main import main
from offsets_auditor.logdir import fs
from offsets_auditor.reader.decode import DecodedRecord, decode_segment
from tests.support.kafka_dump import read_dump

FIXTURES = Path(__file__).parent.parent / "fixtures"
NOW = "1800000000000"
#: extra settings: as the broker ran; a high ratio threshold with a small map (passes stop
#: early); a small map split over two threads with a low threshold (every pass happens).
SETTINGS = [
    (),
    ("--set", "min.cleanable.dirty.ratio=0.5", "--dedupe-buffer-size", "1600000",
     "--cleaner-threads", "1"),
    ("--set", "min.cleanable.dirty.ratio=0.01", "--dedupe-buffer-size", "2097154",
     "--cleaner-threads", "2"),
]  # fmt: skip


def cases() -> list[tuple[Path, Path, tuple[str, ...]]]:
    found = []
    for log_dir in sorted(FIXTURES.glob("kafka-*/*/kafka-logs*")):
        config = log_dir.parent / "broker-server.properties"
        for extra in SETTINGS:
            found.append((log_dir, config, extra))
    return found


def _number(text: str) -> int:
    return int(text.replace(",", ""))


def records_in(log_dir: Path, partition: str, start: int, end: int) -> int:
    """Records with offsets in [start, end), from Kafka's own dumps when the fixture has them
    for every segment of the partition, else decoded again from the segments."""
    number = partition.rsplit("-", 1)[1]
    segments = sorted((log_dir / partition).glob("*.log"))
    dumps = [log_dir.parent / "dumps" / f"{number}-{seg.stem}.txt.gz" for seg in segments]
    if log_dir.name == "kafka-logs" and all(d.exists() for d in dumps):
        return sum(1 for d in dumps for r in read_dump(d) if start <= r.offset < end)
    count = 0
    for seg in segments:
        with fs.ReadOnlyFile(seg) as source:
            for item in decode_segment(source, file=seg.name):
                if isinstance(item, DecodedRecord) and start <= item.record.offset < end:
                    count += 1
    return count


@pytest.mark.parametrize(
    ("log_dir", "config", "extra"),
    cases(),
    ids=lambda v: str(v.relative_to(FIXTURES)) if isinstance(v, Path) else " ".join(v),
)
def test_reasons_agree_with_the_emulation(
    log_dir: Path, config: Path, extra: tuple[str, ...], capsys: pytest.CaptureFixture[str]
) -> None:
    main(
        ["audit", str(log_dir), "--broker-config", str(config), "--json", "--no-groups",
         "--now", NOW, *extra]
    )  # fmt: skip
    report = json.loads(capsys.readouterr().out)
    for p in report["partitions"]:
        check_partition(log_dir, p)


def check_partition(log_dir: Path, p: dict) -> None:
    c = p["cleaner"]
    outcome, reason, passes = c["outcome"], c["reason"], c["pass_details"]
    filled = [x["end_offset"] for x in passes if x["map_full"]]
    where = f"{p['name']}: {outcome}: {reason}"
    if filled:
        assert outcome in ("multi-pass", "blocked", "thread-death"), where
        assert "fits" not in reason, where
    if outcome == "single-pass":
        assert len(passes) == 1 and not passes[0]["map_full"], where
        quoted = re.search(r"\[([\d,]+), ([\d,]+)\) fits the offset map in one pass \(([\d,]+) of"
                           r" ([\d,]+) entries\)", reason)  # fmt: skip
        assert quoted, where
        start, end, entries, capacity = (_number(g) for g in quoted.groups())
        assert (start, end) == (passes[0]["start_offset"], passes[0]["end_offset"]), where
        assert (entries, capacity) == (passes[0]["map_entries"], c["capacity"]), where
    if outcome == "multi-pass" and "does not fit the offset map" in reason:
        at = re.search(r"filled at offsets? ([\d, ]+?);", reason)
        assert at, where
        assert [_number(x) for x in at.group(1).split(", ")] == filled, where
        waiting = re.search(r"([\d,]+) records in \[([\d,]+), ([\d,]+)\) stay uncompacted", reason)
        last = passes[-1]
        if waiting:
            count, start, end = (_number(g) for g in waiting.groups())
            assert last["map_full"] and start == last["end_offset"], where
            assert end == passes[0]["upper_bound"], where
            assert count == records_in(log_dir, p["name"], start, end), where
        else:
            assert not last["map_full"] and last["end_offset"] == passes[0]["upper_bound"], where
    needs = re.search(r"needs (\d+) passes", reason)
    if needs:
        assert int(needs.group(1)) == len(passes) and not filled, where
    if outcome == "not-eligible":
        assert not passes and f"{p['dirty_ratio']:.4f}" in reason, where
    if outcome == "nothing-to-clean":
        assert not passes and p["cleanable_bytes"] == 0, where


def test_a_map_that_fills_is_said_so(capsys: pytest.CaptureFixture[str]) -> None:
    """Issue 7's example: the real 2.3.0 multi-pass partition with the default ratio 0.5. Two
    passes happen (the map fills at 39,321 and 78,642), then the ratio is below 0.5 and the rest
    of the dirty section waits; the broker's own dumps count what waits."""
    fixture = FIXTURES / "kafka-2.3.0" / "multi-pass"
    main(
        ["audit", str(fixture / "kafka-logs"), "--broker-config",
         str(fixture / "broker-server.properties"), "--kafka-version", "2.3.0", "--json",
         "--no-groups", "--now", NOW, "--set", "log.cleaner.min.cleanable.ratio=0.5"]
    )  # fmt: skip
    report = json.loads(capsys.readouterr().out)
    p1 = next(p for p in report["partitions"] if p["name"] == "__consumer_offsets-1")
    reason = p1["cleaner"]["reason"]
    assert p1["cleaner"]["outcome"] == "multi-pass"
    assert p1["cleaner"]["pass_end_offsets"] == [39_321, 78_642]
    waiting = records_in(fixture / "kafka-logs", "__consumer_offsets-1", 78_642, 117_600)
    assert waiting == 38_958
    assert "filled at offsets 39,321, 78,642" in reason
    assert f"{waiting:,} records in [78,642, 117,600) stay uncompacted" in reason
    assert p1["recommendation"]["log.cleaner.dedupe.buffer.size"] == 2_960_040
    assert "log.cleaner.dedupe.buffer.size=2960040" in reason
