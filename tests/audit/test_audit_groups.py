"""Acceptance: the audit JSON's ``groups`` list holds the offsets the real broker reported as
committed (its OffsetFetch answers, captured in ``expected-offsets.json``)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from offsets_auditor.cli.main import main

FIXTURES = Path(__file__).parent.parent / "fixtures"
CODECS = ["compaction-none", "compaction-snappy", "compaction-lz4", "compaction-zstd"]


@pytest.mark.parametrize("name", CODECS)
def test_audit_groups_are_what_the_broker_reported(
    name: str, capsys: pytest.CaptureFixture[str]
) -> None:
    fixture = FIXTURES / "kafka-2.3.0" / name
    assert (fixture / "expected-offsets.json").exists(), (
        f"{name} is missing: regenerate it (scripts/fixtures/)"
    )
    expected = json.loads((fixture / "expected-offsets.json").read_text())[
        "broker_committed_offsets"
    ]
    main(
        [
            "audit",
            str(fixture / "kafka-logs"),
            "--broker-config",
            str(fixture / "broker-server.properties"),
            "--kafka-version",
            "2.3.0",
            "--json",
        ]
    )
    report = json.loads(capsys.readouterr().out)
    ours = {
        g["group"]: {
            f"{o['topic']}-{o['partition']}": {"metadata": o["metadata"], "offset": o["offset"]}
            for o in g["offsets"]
        }
        for g in report["groups"]
    }
    for group, offsets in expected.items():
        assert ours.get(group, {}) == offsets, group
    for item in report["groups"]:
        assert {"group", "coordinator_partition", "state", "offsets"} <= item.keys()
        for offset in item["offsets"]:
            assert {"topic", "partition", "offset", "metadata", "commit_timestamp"} <= offset.keys()
