"""An unexpected exception is a bug, and says so: one line on stderr and exit status 4, never
a traceback on stdout, never 0/1/2 (the verdict statuses) or 3 (usage and input errors)."""

from __future__ import annotations

from pathlib import Path

import pytest

import offsets_auditor.cli.audit as audit_cli
from offsets_auditor.cli.main import INTERNAL_ERROR, main

LOG_DIR = Path(__file__).parent.parent / "fixtures" / "kafka-2.3.0" / "small-gzip" / "kafka-logs"


def explode(*args: object, **kwargs: object) -> None:
    raise ZeroDivisionError("boom")


def test_an_internal_error_is_one_line_and_status_4(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(audit_cli, "audit_log_dir_on", explode)
    assert main(["audit", str(LOG_DIR), "--json"]) == INTERNAL_ERROR == 4
    out, err = capsys.readouterr()
    assert out == ""
    assert err.count("\n") == 1
    assert err.startswith("offsets-auditor audit: internal error: ZeroDivisionError: boom (at ")
    assert "This is a bug in offsets-auditor" in err


def test_traceback_shows_it_whole_and_still_exits_4(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(audit_cli, "audit_log_dir_on", explode)
    assert main(["--traceback", "audit", str(LOG_DIR)]) == INTERNAL_ERROR
    err = capsys.readouterr().err
    assert err.startswith("Traceback (most recent call last):")
    assert "ZeroDivisionError: boom" in err
    assert err.splitlines()[-1].startswith("offsets-auditor audit: internal error: Zero")
