"""What the commands print for people: no ``broker None``, times a person reads (the JSON keeps
epoch milliseconds for scripts)."""

from __future__ import annotations

import json
import re
import shutil
from datetime import UTC, datetime
from pathlib import Path

import pytest

from offsets_auditor.cli.main import main

FIXTURES = Path(__file__).parent.parent / "fixtures"
CLEANER_DIED = FIXTURES / "kafka-0.9.0.1" / "cleaner-died"
MULTI_PASS = FIXTURES / "kafka-2.3.0" / "multi-pass" / "kafka-logs"


def test_groups_show_prints_iso_times_and_json_keeps_milliseconds(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["groups", "show", "grp-00001", str(MULTI_PASS), "--json"]) == 0
    group = json.loads(capsys.readouterr().out)
    first = group["offsets"][0]
    assert isinstance(first["commit_timestamp"], int) and first["commit_timestamp"] > 10**12
    assert main(["groups", "show", "grp-00001", str(MULTI_PASS)]) == 0
    out = capsys.readouterr().out
    iso = datetime.fromtimestamp(first["commit_timestamp"] / 1000, tz=UTC)
    shown = iso.isoformat(timespec="milliseconds").replace("+00:00", "Z")
    assert "COMMITTED (UTC)" in out
    assert shown in out
    assert str(first["commit_timestamp"]) not in out  # no epoch milliseconds for people
    assert not re.search(r"\b1\d{12}\b", out)


def test_no_broker_none_for_a_log_dir_without_broker_id(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    log_dir = tmp_path / "kafka-logs"
    shutil.copytree(CLEANER_DIED / "kafka-logs", log_dir)
    meta = log_dir / "meta.properties"
    meta.write_text(
        "".join(
            line + "\n"
            for line in meta.read_text().splitlines()
            if not line.startswith("broker.id")
        )
    )
    config = CLEANER_DIED / "broker-server.properties"
    main(["audit", str(log_dir), "--broker-config", str(config)])
    out = capsys.readouterr().out
    assert "broker None" not in out
    assert f"the broker of {log_dir} (no broker.id), Kafka" in out
    assert f"recommendation for the broker of {log_dir} (no broker.id)" in out


def test_broker_label() -> None:
    from offsets_auditor.findings import broker_label

    assert broker_label(3, "/data") == "broker 3 (/data)"
    assert broker_label(None, "/data") == "the broker of /data (no broker.id)"
