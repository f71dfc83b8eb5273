"""The load estimate calibrated on the broker's own coordinator load times (real restarts):
the best-fitting model of ``broker_logs.load_models`` wherever the audit reads the broker's
server log (given, or found beside the log dir), the broker's bytes over its milliseconds when
no model can be judged, the assumed rate without any load."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from offsets_auditor.audit.load_calibration import calibrate
from offsets_auditor.broker_logs.load_models import LoadObservation, fit
from offsets_auditor.cli.main import main

FIXTURES = Path(__file__).parent.parent / "fixtures"
#: 2.3.0 GroupMetadataManager: "Finished loading offsets and group metadata from
#: __consumer_offsets-N in M milliseconds."; 0.9.0.1: "Finished loading offsets from
#: [__consumer_offsets,N] in M milliseconds."
FINISHED = re.compile(
    r"Finished loading offsets.*?__consumer_offsets[-,](\d+)\]? in (\d+) milliseconds"
)


def audit(log_dir: Path, version: str, *more: str, capsys: pytest.CaptureFixture[str]) -> dict:
    main(["audit", str(log_dir), "--kafka-version", version, "--json", "--no-groups", *more])
    report: dict = json.loads(capsys.readouterr().out)
    return report


def loads_of(log: Path) -> dict[int, int]:
    return {int(p): int(ms) for p, ms in FINISHED.findall(log.read_text(errors="replace"))}


def test_the_best_model_of_the_brokers_own_loads(capsys: pytest.CaptureFixture[str]) -> None:
    """0.9.0.1's restart loaded its four partitions in 66 to 668 ms: every model is fitted to
    those loads (the sizes read here), and the estimate is the best one's, with its expected
    error; the test fits them itself from the log's lines."""
    fixture = FIXTURES / "kafka-0.9.0.1/unclean-shutdown"
    log = fixture / "server-restart.log"
    report = audit(fixture / "kafka-logs-after", "0.9.0.1", "--server-log", str(log), capsys=capsys)
    loads = loads_of(log)
    assert min(loads.values()) >= 50 and len(loads) == 4
    partitions = {p["partition"]: p for p in report["partitions"]}
    observed = [
        LoadObservation(
            n,
            ms,
            partitions[n]["size_bytes"],
            partitions[n]["records"],
            len(partitions[n]["top_writers"]),  # at most 5: these partitions have fewer
        )
        for n, ms in loads.items()
    ]
    best = fit(observed).best
    assert best is not None
    (broker,) = report["brokers"]
    model = broker["coordinator_loads"]["model"]
    assert (model["basis"], model["affine"]) == (best.basis.value, best.affine)
    assert model["expected_error"] == round(best.expected_error, 4) < 2.5
    for p in report["partitions"]:
        estimate = p["load_estimate"]
        size = {"bytes": p["size_bytes"], "records": p["records"]}[best.basis.value]
        assert estimate["seconds"] == round(best.predict_seconds(size), 3)
        assert estimate["model"]["expected_error"] == model["expected_error"]
        assert f"expected error a factor of {best.expected_error:.2f}" in estimate["basis"]


def test_a_server_log_found_beside_the_log_dir_calibrates_too(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    fixture = FIXTURES / "kafka-0.9.0.1/unclean-shutdown"
    shutil.copytree(fixture / "kafka-logs-after", tmp_path / "kafka-logs")
    given = audit(
        tmp_path / "kafka-logs",
        "0.9.0.1",
        "--server-log",
        str(fixture / "server-restart.log"),
        capsys=capsys,
    )
    alone = audit(tmp_path / "kafka-logs", "0.9.0.1", capsys=capsys)
    assert all(p["load_estimate"]["model"] is None for p in alone["partitions"])
    assert "assumed (give --server-log" in alone["partitions"][0]["load_estimate"]["basis"]
    shutil.copy(fixture / "server-restart.log", tmp_path / "server.log")
    beside = audit(tmp_path / "kafka-logs", "0.9.0.1", capsys=capsys)
    assert [p["load_estimate"]["seconds"] for p in beside["partitions"]] == [
        p["load_estimate"]["seconds"] for p in given["partitions"]
    ]
    assert beside["brokers"][0]["coordinator_loads"]["server_log"] == str(tmp_path / "server.log")


def test_too_few_long_loads_fall_back_to_bytes_over_milliseconds(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """2.3.0's restart: one load of 50 ms or more, so no model can be judged; the estimate is
    the broker's bytes over its milliseconds, and says its error is not known."""
    fixture = FIXTURES / "kafka-2.3.0/unclean-shutdown"
    log = fixture / "server-restart.log"
    report = audit(fixture / "kafka-logs-after", "2.3.0", "--server-log", str(log), capsys=capsys)
    loads = loads_of(log)
    assert len([ms for ms in loads.values() if ms >= 50]) == 1
    assert report["brokers"][0]["coordinator_loads"]["model"] is None
    sizes = {p["partition"]: p["size_bytes"] for p in report["partitions"]}
    used = {p: ms for p, ms in loads.items() if sizes.get(p) and ms > 0}
    expected_rate = sum(sizes[p] for p in used) / (sum(used.values()) / 1000)
    for p in report["partitions"]:
        estimate = p["load_estimate"]
        assert estimate["seconds"] == round(p["size_bytes"] / expected_rate, 3)
        assert "calibrated on this broker" in estimate["basis"]
        assert "the expected error is not known" in estimate["basis"]
        assert estimate["model"] is None


def test_no_usable_load_gives_no_rate() -> None:
    assert calibrate([(0, 0), (1, 10)], {1: 0}, "x") is None
    rate = calibrate([(0, 100)], {0: 1_000_000}, "x")
    assert rate is not None and rate.bytes_per_second == 10_000_000
