"""The load estimate calibrated on the broker's own coordinator load times (real restarts)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from offsets_auditor.audit.load_calibration import calibrate
from offsets_auditor.cli.main import main

FIXTURES = Path(__file__).parent.parent / "fixtures"
#: 2.3.0 GroupMetadataManager: "Finished loading offsets and group metadata from
#: __consumer_offsets-N in M milliseconds."; 0.9.0.1: "Finished loading offsets from
#: [__consumer_offsets,N] in M milliseconds."
FINISHED = re.compile(
    r"Finished loading offsets.*?__consumer_offsets[-,](\d+)\]? in (\d+) milliseconds"
)


@pytest.mark.parametrize(
    ("name", "version"),
    [("kafka-2.3.0/unclean-shutdown", "2.3.0"), ("kafka-0.9.0.1/unclean-shutdown", "0.9.0.1")],
)
def test_rate_is_bytes_over_the_brokers_milliseconds(
    name: str, version: str, capsys: pytest.CaptureFixture[str]
) -> None:
    fixture = FIXTURES / name
    log = fixture / "server-restart.log"
    loads = {int(p): int(ms) for p, ms in FINISHED.findall(log.read_text(errors="replace"))}
    assert loads
    main(
        [
            "audit",
            str(fixture / "kafka-logs-after"),
            "--kafka-version",
            version,
            "--server-log",
            str(log),
            "--json",
            "--no-groups",
        ]
    )
    report = json.loads(capsys.readouterr().out)
    sizes = {p["partition"]: p["size_bytes"] for p in report["partitions"]}
    used = {p: ms for p, ms in loads.items() if sizes.get(p) and ms > 0}
    expected_rate = sum(sizes[p] for p in used) / (sum(used.values()) / 1000)
    for p in report["partitions"]:
        estimate = p["load_estimate"]
        assert estimate["seconds"] == round(p["size_bytes"] / expected_rate, 3)
        assert "calibrated on this broker" in estimate["basis"]


def test_no_usable_load_gives_no_rate() -> None:
    assert calibrate([(0, 0), (1, 10)], {1: 0}, "x") is None
    rate = calibrate([(0, 100)], {0: 1_000_000}, "x")
    assert rate is not None and rate.bytes_per_second == 10_000_000
