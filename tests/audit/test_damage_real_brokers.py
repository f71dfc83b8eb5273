"""Damaged offsets partitions, judged against what real brokers did with them.

``tests/fixtures/kafka-{0.9.0.1,2.3.0}/corrupt-segments``: five offsets partitions, one left
alone, the others damaged in a middle segment (a flipped bit, a zero-filled tail, a truncated
entry, a garbage size field); then the same broker restarted on the damaged dir with its
clean-shutdown marker (no log recovery), cleaning at ratio 0.01, and asked for every group's
committed offsets (``committed-after.json``). The audit of ``kafka-logs/``, without
``--kafka-version``, must say what each broker did:

- the cleaner: the exception it threw on each damaged partition, to the character (paths aside),
  and a clean of the others;
- the coordinator load: for each partition, the offsets the broker then served equal what the
  audit's group recovery reads, except where the audit says the load throws (2.3.0: nothing
  served; 0.9.0.1: what was read before the damage) or never finishes (0.9.0.1:
  NOT_COORDINATOR).
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from offsets_auditor.audit.group_recovery import plan, replay_partition
from offsets_auditor.cli.main import main
from offsets_auditor.groups.rules import loader_rules
from offsets_auditor.logdir.model import offsets_partitions, read_log_dir

FIXTURES = Path(__file__).parent.parent / "fixtures"
#: version -> (fixture, the restart whose cleaner tried every partition)
RUNS = {
    "0.9.0.1": (FIXTURES / "kafka-0.9.0.1" / "corrupt-segments", "after-clean-marker-5-threads"),
    "2.3.0": (FIXTURES / "kafka-2.3.0" / "corrupt-segments", "after-clean-marker"),
}
SEGMENT_PATH = re.compile(r"\S*/(__consumer_offsets-\d+/\d+\.log)")
BUILDING = re.compile(r"Cleaner (\d+): Building offset map for log __consumer_offsets-(\d+)")
DIED = re.compile(r"\[kafka-log-cleaner-thread-(\d+)\], Error due to")
UNCLEANABLE = re.compile(r"Marking its partition \(__consumer_offsets-(\d+)\) as uncleanable")
Offsets = dict[tuple[str, str, int], int]


def audit(version: str, capsys: pytest.CaptureFixture[str]) -> dict[str, Any]:
    fixture, run = RUNS[version]
    main(
        [
            "audit",
            str(fixture / "kafka-logs"),
            "--json",
            "--broker-config",
            str(fixture / run / "broker-server.properties"),
        ]
    )
    return json.loads(capsys.readouterr().out)


def broker_exceptions(version: str) -> dict[int, str]:
    """Offsets partition -> the exception the broker's cleaner threw on it."""
    fixture, run = RUNS[version]
    lines = (fixture / run / "log-cleaner.log").read_text().splitlines()
    found: dict[int, str] = {}
    working: dict[str, int] = {}  # cleaner thread -> the partition it is on
    for i, line in enumerate(lines):
        building = re.search(
            r"Cleaner (\d+): Building offset map for log __consumer_offsets-(\d+)", line
        )
        if building:
            working[building.group(1)] = int(building.group(2))
        died = DIED.search(line)
        if died:
            found[working[died.group(1)]] = lines[i + 1]
        uncleanable = re.search(
            r"Marking its partition \(__consumer_offsets-(\d+)\) as uncleanable", line
        )
        if uncleanable:
            found[int(uncleanable.group(1))] = lines[i + 1]
    return found


def without_paths(text: str) -> str:
    return SEGMENT_PATH.sub(r"\1", text)


@pytest.mark.parametrize("version", list(RUNS))
def test_the_cleaner_fails_where_and_as_the_broker_did(
    version: str, capsys: pytest.CaptureFixture[str]
) -> None:
    report = audit(version, capsys)
    thrown = broker_exceptions(version)
    assert len(thrown) == 3  # truncated, zero-tail and garbage size; the others were cleaned
    for p in report["partitions"]:
        cleaner = p["cleaner"]
        if p["partition"] not in thrown:
            assert cleaner["outcome"] == "single-pass", p["name"]
            continue
        assert cleaner["outcome"] == ("thread-death" if version == "0.9.0.1" else "blocked")
        ours = without_paths(cleaner["message"])
        theirs = without_paths(thrown[p["partition"]])
        # theirs: "<exception class>: <message>" (an OutOfMemoryError we name with its class)
        assert theirs.endswith(ours) or ours.startswith(theirs), (p["name"], ours, theirs)


def served(version: str) -> dict[tuple[str, str, int], int | str]:
    """(group, topic, partition) -> the committed offset the broker served after the restart,
    or its error."""
    fixture, run = RUNS[version]
    answers = json.loads((fixture / run / "committed-after.json").read_text())
    found: dict[tuple[str, str, int], int | str] = {}
    for group, answer in answers.items():
        for name, value in answer["offset_fetch"]["partitions"].items():
            topic, number = name.rsplit("-", 1)
            error = value["error"]
            found[(group, topic, int(number))] = value["offset"] if error == "NONE" else error
    return found


def recovered(report: dict[str, Any]) -> Offsets:
    return {
        (g["group"], o["topic"], o["partition"]): o["offset"]
        for g in report["groups"]
        for o in g["offsets"]
    }


def read_before_damage(
    version: str, partition: int, damaged_file: str
) -> dict[tuple[str, str, int], int]:
    """The offsets of ``partition`` replayed from its first record up to the damage."""
    fixture, _ = RUNS[version]
    model = read_log_dir(fixture / "kafka-logs")
    groups_plan = plan(model, loader_rules(version), None)
    part = next(p for p in offsets_partitions(model) if p.partition == partition)
    segment = next(s for s in part.segments if damaged_file.endswith(s.log.name))
    from offsets_auditor.cleaner.partition_scan import scan_partition
    from offsets_auditor.reader.reading import DEFAULT_READ

    scan = scan_partition(part, DEFAULT_READ.segment)
    info = next(s for s in scan.segments if s.base_offset == segment.base_offset)
    replay = replay_partition(part, groups_plan, end_offset=info.next_offset)
    return {(g.group, o.topic, o.partition): o.offset for g in replay.groups for o in g.offsets}


@pytest.mark.parametrize("version", list(RUNS))
def test_the_offsets_served_are_what_the_audit_says_the_load_reads(
    version: str, capsys: pytest.CaptureFixture[str]
) -> None:
    report = audit(version, capsys)
    broker = served(version)
    ours = recovered(report)
    load_of: dict[int, tuple[str, str]] = {}
    for f in report["findings"]:
        if f["kind"] in ("corrupt-segment", "corrupt-record", "checksum-mismatch"):
            number = int(f["partition"].rsplit("-", 1)[1])
            load = f["detail"].split("Coordinator load: ", 1)[1]
            load_of[number] = (load, f["file"])
    assert sorted(load_of) == [0, 1, 2, 4]
    checked = 0
    for key, value in broker.items():
        group = key[0]
        number = next(g["coordinator_partition"] for g in report["groups"] if g["group"] == group)
        load, file = load_of.get(number, ("", ""))
        if load.startswith("never finishes"):
            assert value == "NOT_COORDINATOR", key
        elif load.startswith("throws here") and "nothing of the partition is loaded" in load:
            assert value == -1, key  # served as no offset at all
        elif load.startswith("throws here"):  # 0.9: the offsets read before it stay
            assert value == read_before_damage(version, number, file)[key], key
        else:
            assert value == ours[key], key
        checked += 1
    assert checked == 20
