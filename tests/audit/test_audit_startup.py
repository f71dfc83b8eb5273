"""Acceptance: after a real unclean shutdown (``kill -9``), the audit's list of corrupt index
files is exactly the list the broker's next start logged as "Found a corrupted index file"."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from offsets_auditor.cli.main import main

FIXTURES = Path(__file__).parent.parent / "fixtures"
UNCLEAN = [("kafka-0.9.0.1/unclean-shutdown", "0.9.0.1"), ("kafka-2.3.0/unclean-shutdown", "2.3.0")]
#: 0.9.0.1 Log.loadSegments: "Found a corrupted index file, <path>, deleting and rebuilding
#: index..."; 2.3.0 Log.loadSegmentFiles: "Found a corrupted index file corresponding to log
#: file <path> due to"
RECOVERING = re.compile(r"Recovering unflushed segment \d+")
CORRUPT = re.compile(r"Found a corrupted index file(?:,| corresponding to log file) (\S+?),? ")


def rebuilt_by_broker(server_log: Path) -> set[str]:
    files = set()
    for line in server_log.read_text(errors="replace").splitlines():
        if m := CORRUPT.search(line):
            path = m.group(1)
            relative = "/".join(path.split("/")[-2:])
            files.add(relative.removesuffix(".log").removesuffix(".index"))
    return files


@pytest.mark.parametrize(("name", "version"), UNCLEAN)
def test_corrupt_indexes_are_the_ones_the_broker_rebuilt(
    name: str, version: str, capsys: pytest.CaptureFixture[str]
) -> None:
    fixture = FIXTURES / name
    assert (fixture / "server-restart.log").exists(), (
        f"{name} is missing: regenerate it (scripts/fixtures/)"
    )
    expected = rebuilt_by_broker(fixture / "server-restart.log")
    if version == "0.9.0.1":
        # 0.9 sanity-checks every index at load: the zero-filled tails of the active segments'
        # preallocated indexes fail it. 2.3.0 skips those checks (LogSegment.sanityCheck: "we
        # will recover the segments above the recovery point in recoverLog() in any case"), so
        # the same zero tails are rebuilt by recovery without a "corrupted" line.
        assert expected, "the real 0.9.0.1 restart rebuilt indexes"
    main(["audit", str(fixture / "kafka-logs"), "--kafka-version", version, "--json"])
    report = json.loads(capsys.readouterr().out)
    corrupt = {i["file"].rsplit(".", 1)[0] for i in report["indexes"] if i["verdict"] == "corrupt"}
    assert corrupt == expected
    # and it re-reads the segments the broker logged as "Recovering unflushed segment"
    restart_log = (fixture / "server-restart.log").read_text(errors="replace")
    recovered = len(RECOVERING.findall(restart_log))
    ours = report["brokers"][0]["recovery"]["by_partition"]
    assert sum(1 for p in ours for s in p["segments"] if s["reason"] == "unflushed") == recovered
    assert report["brokers"][0]["clean_shutdown"] is False
    assert any(f["kind"] == "unclean-shutdown" for f in report["findings"])


def test_deleted_files_are_normal_not_an_interrupted_clean(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """The real 2.3.0 broker killed with SIGKILL left .deleted segments: files waiting
    file.delete.delay.ms, as on any running broker. Info, and said so."""
    log_dir = (
        Path(__file__).parent.parent
        / "fixtures"
        / "kafka-2.3.0"
        / "unclean-shutdown"
        / "kafka-logs"
    )
    main(["audit", str(log_dir), "--json", "--no-groups", "--kafka-version", "2.3.0"])
    report = json.loads(capsys.readouterr().out)
    deleted = [
        f for f in report["findings"] if f["kind"] == "leftover-file" and ".deleted" in f["file"]
    ]
    assert deleted
    for finding in deleted:
        assert finding["severity"] == "info"
        assert "waiting file.delete.delay.ms" in finding["detail"]
        assert "normal on a running broker" in finding["detail"]
        assert "interrupted" not in finding["detail"]
