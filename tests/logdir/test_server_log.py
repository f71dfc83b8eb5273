"""Where the audit finds a broker's own log beside its log dir (``logdir.server_log``), and that
it is then the version's evidence, named in the report."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from offsets_auditor.audit.plan import AuditSettings, plan_audit
from offsets_auditor.logdir.server_log import find_server_log

FIXTURE = Path(__file__).parent.parent / "fixtures" / "kafka-2.3.0" / "running-broker" / "killed"


def test_the_places_looked_at_in_order(tmp_path: Path) -> None:
    log_dir = tmp_path / "data" / "kafka-logs"
    log_dir.mkdir(parents=True)
    assert find_server_log(log_dir) is None
    (tmp_path / "data" / "logs").mkdir()
    os.mkfifo(tmp_path / "data" / "logs" / "server.log")  # not a regular file: skipped
    (tmp_path / "data" / "kafkaServer.out").mkdir()  # nor a directory
    assert find_server_log(log_dir) is None
    (tmp_path / "data" / "logs" / "kafkaServer.out").write_text("")
    assert find_server_log(log_dir) == tmp_path / "data" / "logs" / "kafkaServer.out"
    (tmp_path / "data" / "server.log").write_text("")
    assert find_server_log(log_dir) == tmp_path / "data" / "server.log"
    assert find_server_log(log_dir / ".." / "kafka-logs") == tmp_path / "data" / "server.log"
    (tmp_path / "server.log").write_text("")  # not beside this log dir
    assert find_server_log(tmp_path / "data" / "kafka-logs") == tmp_path / "data" / "server.log"


def test_kafka_s_own_layout_narrows_the_version(tmp_path: Path) -> None:
    """``LOG_DIR=$base_dir/logs`` beside the data dir: the broker's version line pins 2.3.0,
    where its files alone allow 2.1.0 to 2.3.1."""
    log_dir = tmp_path / "kafka-logs"
    shutil.copytree(FIXTURE / "kafka-logs", log_dir)
    alone = plan_audit([log_dir], AuditSettings(), 0).detection
    assert (str(alone.range.lowest), alone.server_log) == ("2.1.0", None)
    (tmp_path / "logs").mkdir()
    shutil.copy(FIXTURE / "server.log", tmp_path / "logs" / "server.log")
    found = plan_audit([log_dir], AuditSettings(), 0).detection
    assert found.to_json()["range"] == ["2.3.0", "2.3.0"]
    assert found.server_log == (str(tmp_path / "logs" / "server.log"), "found beside the log dir")
    assert any(e.file == str(tmp_path / "logs" / "server.log") for e in found.evidence)
    given = plan_audit(
        [log_dir], AuditSettings(server_log=FIXTURE / "server-before-kill.log"), 0
    ).detection
    assert given.server_log == (str(FIXTURE / "server-before-kill.log"), "--server-log")
