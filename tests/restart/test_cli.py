"""The ``restart-progress`` subcommand end to end: text, --json, --follow, bad input."""

from __future__ import annotations

import argparse
import io
import json
from pathlib import Path

import pytest

from offsets_auditor.cli import restart_progress
from offsets_auditor.cli.main import build_parser, main
from tests.restart.kafka_lines import (
    CLEAN,
    FIXTURES,
    coordinator_finished_ms,
    grep,
    loading_window,
    read_lines,
    unclean_restart_09,
)


def test_registered_under_its_name() -> None:
    args = build_parser().parse_args(["restart-progress", "--server-log", "x.log"])
    assert args.handler is restart_progress.run
    assert args.log_dirs == [] and not args.follow and not args.json


def test_json_on_real_log(capsys: pytest.CaptureFixture[str]) -> None:
    log = CLEAN["2.3.0"]
    logdir = FIXTURES / "kafka-2.3.0" / "small-gzip" / "kafka-logs"
    status = main(
        ["restart-progress", "--server-log", str(log), str(logdir), "--json", "--kafka-version",
         "2.3.0"]
    )  # fmt: skip
    assert status == 0
    out = capsys.readouterr().out.splitlines()
    assert len(out) == 1, "one JSON object per update"
    data = json.loads(out[0])
    lines = read_lines(log)
    loads = data["coordinator_loading"]["loads"]
    assert [(ld["partition"], ld["load_ms"]) for ld in loads] == coordinator_finished_ms(lines)
    assert data["startups_seen"] == len(grep(lines, "INFO starting (kafka.server.KafkaServer)"))
    # log loading is over: the partitions it loaded are the total, not today's listing
    loaded = grep(loading_window(lines), "Completed load of log")
    assert data["log_loading"]["partitions_total"] == len(loaded)
    assert data["log_loading"]["partitions_total_source"].startswith("broker log")
    assert data["kafka_version"] == "2.3.0" and data["kafka_version_seen"] == "2.3.0"


def test_text_on_real_log(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["restart-progress", "--server-log", str(CLEAN["0.9.0.1"])]) == 0
    out = capsys.readouterr().out
    for partition, ms in coordinator_finished_ms(read_lines(CLEAN["0.9.0.1"])):
        assert f"__consumer_offsets-{partition}: {ms} ms" in out
    # the broker started on an empty dir: 'Loading logs.' then 'Logs loading complete.'
    assert "partitions loaded: 0 of 0 (broker log (log loading complete" in out
    assert "segments recovered (recovery begun): 0 of 0 (broker log" in out


def test_text_states_eta_basis(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    lines = unclean_restart_09([("__consumer_offsets-0", [0, 10, 20]), ("t-0", [0, 10])])
    recovering = [i for i, line in enumerate(lines) if "Recovering unflushed" in line]
    log = tmp_path / "server.log"
    log.write_text("\n".join(lines[: recovering[2] + 1]))  # no final newline: cut mid-write
    logdir = tmp_path / "kafka-logs"
    for name, bases in [("__consumer_offsets-0", [0, 10, 20]), ("t-0", [0, 10])]:
        (logdir / name).mkdir(parents=True)
        for base in bases:
            (logdir / name / f"{base:020d}.log").write_bytes(b"")
    assert main(["restart-progress", "--server-log", str(log), str(logdir)]) == 0
    out = capsys.readouterr().out
    assert "phase: loading-logs" in out
    assert "segments recovered (recovery begun): 3 of 5" in out
    assert "segment-recovery:" in out and "basis:" in out


def test_missing_server_log(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["restart-progress", "--server-log", str(tmp_path / "nope.log")]) == 3
    assert "cannot read" in capsys.readouterr().err


def test_bad_version(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["restart-progress", "--server-log", str(CLEAN["2.3.0"]), "--kafka-version", "x"]
    assert main(argv) == 3
    assert "not a Kafka version" in capsys.readouterr().err


class AppendingClock:
    def __init__(self, path: Path, chunks: list[bytes]) -> None:
        self.path, self.chunks, self.now = path, list(chunks), 0.0

    def monotonic(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.now += seconds
        if self.chunks:
            with self.path.open("ab") as f:
                f.write(self.chunks.pop(0))


def test_follow_json_one_object_per_update(tmp_path: Path) -> None:
    data = CLEAN["0.9.0.1"].read_bytes()
    lines = data.splitlines(keepends=True)
    log = tmp_path / "server.log"
    started = next(
        i
        for i, line in enumerate(lines)
        if line.rstrip().endswith(b"started (kafka.server.KafkaServer)")
    )
    log.write_bytes(b"".join(lines[: started + 1]))
    clock = AppendingClock(log, [b"".join(lines[started + 1 : 200]), b"", b"".join(lines[200:])])
    args = argparse.Namespace(
        server_log=log, log_dirs=[], follow=True, json=True, kafka_version="0.9.0.1", interval=1.0
    )
    out, err = io.StringIO(), io.StringIO()
    status = restart_progress.run_with(
        args, out=out, err=err, clock=clock, should_stop=lambda _u: not clock.chunks
    )
    assert status == 0 and err.getvalue() == ""
    updates = [json.loads(line) for line in out.getvalue().splitlines()]
    assert [u["update"] for u in updates] == [1, 2, 3], "no update when nothing was appended"
    assert updates[0]["phase"] == "started"
    assert updates[-1]["phase"] == "shutting-down"
    finished = coordinator_finished_ms([line.decode() for line in lines])
    assert [
        (ld["partition"], ld["load_ms"]) for ld in updates[-1]["coordinator_loading"]["loads"]
    ] == finished
    assert updates[-1]["lines_read"] == len(lines)


def test_follow_text_and_bad_interval(tmp_path: Path) -> None:
    log = tmp_path / "server.log"
    lines = unclean_restart_09([("__consumer_offsets-0", [0, 10])])
    log.write_text("\n".join(lines[:3]) + "\n")
    clock = AppendingClock(log, [("\n".join(lines[3:]) + "\n").encode()])
    args = argparse.Namespace(
        server_log=log, log_dirs=[], follow=True, json=False, kafka_version=None, interval=0.5
    )
    out = io.StringIO()
    status = restart_progress.run_with(
        args, out=out, err=io.StringIO(), clock=clock, should_stop=lambda _u: not clock.chunks
    )
    assert status == 0
    reports = out.getvalue().split("\n\n")
    assert len(reports) == 2 and "phase: loading-logs" in reports[0]
    assert "__consumer_offsets-0: 2000 ms" in reports[1]
    args.interval = 0
    err = io.StringIO()
    assert restart_progress.run_with(args, out=io.StringIO(), err=err, clock=clock) == 3
    assert "--interval" in err.getvalue()
