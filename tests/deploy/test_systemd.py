"""deploy/systemd: the scan on a VM broker host (service + timer) and the service over the shared
results dir. ``systemd-analyze verify`` where it is installed (with the install path pointed at
this checkout's executable, which it checks exists); the command lines parse with the real
commands' own parsers; the scan cannot write the broker's files and runs as a member of its
group, not root."""

from __future__ import annotations

import argparse
import configparser
import re
import shlex
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.deploy.conftest import DEPLOY, VENV_BIN

SYSTEMD = DEPLOY / "systemd"
INSTALLED = "/opt/offsets-auditor/bin/offsets-auditor"
UNITS = ["offsets-auditor-scan.service", "offsets-auditor-scan.timer", "offsets-auditor.service"]


def unit(name: str) -> configparser.ConfigParser:
    parser = configparser.ConfigParser(strict=False, interpolation=None)
    parser.optionxform = str  # type: ignore[assignment,method-assign]
    text = re.sub(r"\\\n\s*", " ", (SYSTEMD / name).read_text())
    parser.read_string(text)
    return parser


def exec_args(name: str) -> list[str]:
    command = shlex.split(unit(name)["Service"]["ExecStart"].replace("%H", "broker-host-1"))
    assert command[0] == INSTALLED
    return command[1:]


def test_the_units_are_there() -> None:
    assert sorted(p.name for p in SYSTEMD.iterdir()) == sorted(UNITS)


@pytest.mark.skipif(shutil.which("systemd-analyze") is None, reason="no systemd-analyze")
def test_systemd_analyze_verify(tmp_path: Path) -> None:
    for name in UNITS:
        text = (SYSTEMD / name).read_text().replace(INSTALLED, str(VENV_BIN / "offsets-auditor"))
        (tmp_path / name).write_text(text)
    done = subprocess.run(
        ["systemd-analyze", "verify", *(str(tmp_path / n) for n in UNITS)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0 and done.stderr == "", done.stderr
    broken = tmp_path / "broken.service"
    broken.write_text("[Service]\nExecStart=relative/path\nType=nonsense\n")
    done = subprocess.run(
        ["systemd-analyze", "verify", str(broken)], capture_output=True, text=True, timeout=120
    )
    assert done.stderr  # the check has teeth


def _parse(register_module: str, command: str, args: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="offsets-auditor")
    sub = parser.add_subparsers()
    module = __import__(register_module, fromlist=["register"])
    module.register(sub)
    parsed: argparse.Namespace = parser.parse_args([command, *args])
    return parsed


def test_the_scan_unit() -> None:
    args = exec_args("offsets-auditor-scan.service")
    parsed = _parse("spark_jobs.cli", "scan", args[1:])
    assert args[0] == "scan" and parsed.log_dirs == ["/var/lib/kafka/data"]
    assert parsed.publisher == "broker-host-1"  # %H: each host publishes under its own name
    assert str(parsed.out) == "/mnt/offsets-auditor-results"
    service = unit("offsets-auditor-scan.service")["Service"]
    assert service["Type"] == "oneshot" and service["User"] not in ("root", "0")
    assert "kafka" in service["SupplementaryGroups"].split()
    assert service["SuccessExitStatus"].split() == ["1", "2"]  # results, not failures
    assert "/var/lib/kafka" in service["ReadOnlyPaths"].split()
    assert service["ReadWritePaths"].split() == ["/mnt/offsets-auditor-results"]
    assert service["ProtectSystem"] == "strict" and service["NoNewPrivileges"] == "yes"
    timer = unit("offsets-auditor-scan.timer")["Timer"]
    assert timer["OnCalendar"] == "*-*-* *:17:00" and timer["Persistent"] == "true"


def test_the_service_unit() -> None:
    args = exec_args("offsets-auditor.service")
    parsed = _parse("api.cli", "serve", args[1:])
    assert str(parsed.results) == "/mnt/offsets-auditor-results"
    assert parsed.scan_interval_seconds == 3600  # the timer's interval
    service = unit("offsets-auditor.service")["Service"]
    assert service["ReadOnlyPaths"] == "/mnt/offsets-auditor-results"
