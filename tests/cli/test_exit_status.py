"""One exit-status contract for every command (``offsets_auditor.cli.exit_status``), checked
per command: usage errors are 3 (argparse's own 2 meant "critical findings" for audit, scan and
groups), an internal error is 4 with or without ``--traceback``, a command that runs until
stopped exits 0 on SIGINT and SIGTERM, and ``--version`` prints the package's version."""

from __future__ import annotations

import importlib
import importlib.metadata
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from offsets_auditor.cli.main import main

FIXTURES = Path(__file__).parent.parent / "fixtures"
LOG_DIR = FIXTURES / "kafka-2.3.0" / "small-gzip" / "kafka-logs"
SEGMENT = next(LOG_DIR.glob("__consumer_offsets-*/*.log"))
SERVER_LOG = FIXTURES / "kafka-0.9.0.1" / "cleaner-died" / "server.log"
CLI = [sys.executable, "-m", "offsets_auditor.cli.main"]

#: every command, with a command line that gets past argument parsing
COMMANDS = {
    "dump": ["dump", str(SEGMENT)],
    "coordinator": ["coordinator", "g", "--partitions", "4"],
    "audit": ["audit", str(LOG_DIR)],
    "groups": ["groups", str(LOG_DIR)],
    "restart-progress": ["restart-progress", "--server-log", str(SERVER_LOG)],
    "scan": ["scan", str(LOG_DIR), "--out", "/nonexistent/results"],
    "serve": ["serve", "--results", "/nonexistent/results"],
}


def _status(argv: list[str]) -> int:
    try:
        return main(argv)
    except SystemExit as stop:  # argparse's exits
        return int(stop.code or 0)


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_an_unknown_option_is_a_usage_error_not_a_verdict(
    command: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert _status([*COMMANDS[command], "--bogus"]) == 3
    assert "--bogus" in capsys.readouterr().err


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_a_missing_argument_is_a_usage_error(
    command: str, capsys: pytest.CaptureFixture[str]
) -> None:
    words = {
        "dump": ["dump"],
        "coordinator": ["coordinator", "g"],  # no --partitions: never guessed
        "audit": ["audit"],
        "groups": ["groups", "show"],
        "restart-progress": ["restart-progress"],
        "scan": ["scan"],
        "serve": ["serve", "--port", "x"],
    }[command]
    assert _status(words) == 3
    assert capsys.readouterr().err


def test_no_command_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert _status([]) == 3
    assert "COMMAND" in capsys.readouterr().err


#: command -> (module, attribute) that the command calls once past its argument checks
_INSIDE = {
    "dump": ("offsets_auditor.cli.dump", "segment_files"),
    "coordinator": ("offsets_auditor.cli.coordinator", "coordinator_partition"),
    "audit": ("offsets_auditor.cli.audit", "audit_log_dir_on"),
    "groups": ("offsets_auditor.cli.groups", "recover"),
    "restart-progress": ("offsets_auditor.cli.restart_progress", "detect_version"),
    "scan": ("spark_jobs.cli", "scan_options"),
    "serve": ("api.cli", "serve"),
}


def _explode(*args: object, **kwargs: object) -> None:
    raise ZeroDivisionError("boom")


@pytest.mark.parametrize("traceback", [False, True], ids=["plain", "--traceback"])
@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_an_internal_error_is_4_with_or_without_traceback(
    command: str,
    traceback: bool,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
) -> None:
    module, name = _INSIDE[command]
    monkeypatch.setattr(importlib.import_module(module), name, _explode)
    argv = [a.replace("/nonexistent/results", str(tmp_path / "results")) for a in COMMANDS[command]]
    assert _status(["--traceback", *argv] if traceback else argv) == 4
    err = capsys.readouterr().err
    assert "internal error: ZeroDivisionError: boom" in err
    assert ("Traceback (most recent call last)" in err) == traceback


def test_version_is_the_package_version(capsys: pytest.CaptureFixture[str]) -> None:
    assert _status(["--version"]) == 0
    assert capsys.readouterr().out == (
        f"offsets-auditor {importlib.metadata.version('offsets-auditor')}\n"
    )


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_every_help_states_the_contract(command: str, capsys: pytest.CaptureFixture[str]) -> None:
    """Each command's help gives its statuses, and 3 is usage in every one of them (dump's
    used to say 2 was a usage error, where the README said 2 was critical findings)."""
    assert _status([command, "--help"]) == 0
    text = " ".join(capsys.readouterr().out.split())
    assert "Exit status:" in text
    assert "3 usage or input errors" in text
    assert "2 usage" not in text
    assert "4 internal error" in text


def _started(argv: list[str], ready: str, tmp_path: Path) -> subprocess.Popen[bytes]:
    err = (tmp_path / "stderr").open("wb")
    process = subprocess.Popen([*CLI, *argv], stdout=subprocess.DEVNULL, stderr=err)
    deadline = time.monotonic() + 60
    while ready not in (tmp_path / "stderr").read_text(errors="replace"):
        assert process.poll() is None, (tmp_path / "stderr").read_text(errors="replace")
        assert time.monotonic() < deadline, "did not start"
        time.sleep(0.1)
    return process


@pytest.mark.parametrize("stop", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_serve_stopped_by_a_signal_exits_0(stop: signal.Signals, tmp_path: Path) -> None:
    """uvicorn raises the signal again after its graceful shutdown: the process used to end
    with 143 on SIGTERM, which Kubernetes and systemd read as a failure."""
    process = _started(
        ["serve", "--results", str(tmp_path / "results"), "--port", "0"], "serving", tmp_path
    )
    process.send_signal(stop)
    assert process.wait(timeout=30) == 0


@pytest.mark.parametrize("stop", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_restart_progress_follow_stopped_by_a_signal_exits_0(
    stop: signal.Signals, tmp_path: Path
) -> None:
    log = tmp_path / "server.log"
    log.write_bytes(SERVER_LOG.read_bytes())
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    out = (tmp_path / "stdout").open("wb")
    process = subprocess.Popen(
        [*CLI, "restart-progress", "--server-log", str(log), "--follow", "--interval", "0.2"],
        stdout=out,
        stderr=subprocess.PIPE,
        env=env,
    )
    deadline = time.monotonic() + 60
    while "phase:" not in (tmp_path / "stdout").read_text():
        assert process.poll() is None and time.monotonic() < deadline
        time.sleep(0.1)
    process.send_signal(stop)
    assert process.wait(timeout=30) == 0
    assert process.stderr is not None and b"Traceback" not in process.stderr.read()


def test_dump_statuses(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """dump: a path that is not there, a broker log dir, an empty dir: input errors (3), said
    in words (it said ``corrupt ... position None`` and exited 1, or 0 printing nothing)."""
    assert _status(["dump", "/nonexistent"]) == 3
    err = capsys.readouterr().err
    assert err == "offsets-auditor dump: /nonexistent: no such file or directory\n"
    assert _status(["dump", str(LOG_DIR)]) == 3
    err = capsys.readouterr().err
    assert "looks like a broker log dir" in err and "__consumer_offsets-" in err
    (tmp_path / "empty").mkdir()
    assert _status(["dump", str(tmp_path / "empty")]) == 3
    assert "holds no .log files" in capsys.readouterr().err
    empty = tmp_path / "00000000000000000000.log"
    empty.write_bytes(b"")
    assert _status(["dump", str(empty)]) == 0  # a freshly rolled active segment is empty
    assert capsys.readouterr().err == f"{empty}: empty (0 bytes): no records\n"
    assert _status(["dump", str(empty), "--json"]) == 0
    assert '"note": "empty"' in capsys.readouterr().err
    assert _status(["dump", str(SEGMENT)]) == 0


def test_restart_progress_on_a_binary_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A segment given as --server-log used to print an empty progress and exit 0."""
    assert _status(["restart-progress", "--server-log", str(SEGMENT)]) == 3
    assert "is not a text file (a NUL byte at position" in capsys.readouterr().err
    text = tmp_path / "notes.txt"
    text.write_text("hello\nworld\n")
    assert _status(["restart-progress", "--server-log", str(text)]) == 1
    assert "none of its 2 line(s) is in the broker's log format" in capsys.readouterr().err


def test_audit_broker_logs_that_are_not_there(capsys: pytest.CaptureFixture[str]) -> None:
    """A --server-log or --cleaner-log given by name and not there is a usage error (3), like
    any other missing input; one found beside the log dir and unreadable is a finding."""
    for option in ("--server-log", "--cleaner-log"):
        assert _status(["audit", str(LOG_DIR), option, "/nonexistent/x.log"]) == 3
        err = capsys.readouterr().err
        assert err == f"offsets-auditor audit: {option} /nonexistent/x.log: no such file\n"
