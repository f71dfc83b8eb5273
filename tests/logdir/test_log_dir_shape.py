"""A directory that is not a broker log dir is an error (exit 3) naming the subdirectories that
are, not a report of findings about the files it holds."""

from __future__ import annotations

from pathlib import Path

import pytest

from offsets_auditor.cli.main import main
from offsets_auditor.logdir.shape import log_dirs_below, looks_like_log_dir

FIXTURES = Path(__file__).parent.parent / "fixtures"


@pytest.mark.parametrize(
    "log_dir", sorted(FIXTURES.glob("kafka-*/*/kafka-logs*")), ids=lambda p: p.parent.name
)
def test_every_real_log_dir_looks_like_one(log_dir: Path) -> None:
    assert looks_like_log_dir(log_dir)
    assert not looks_like_log_dir(log_dir.parent)


@pytest.mark.parametrize("command", ["audit", "groups"])
def test_the_fixture_dir_instead_of_its_log_dir(
    command: str, capsys: pytest.CaptureFixture[str]
) -> None:
    fixture = FIXTURES / "kafka-0.9.0.1" / "cleaner-died"
    assert main([command, str(fixture)]) == 3
    captured = capsys.readouterr()
    assert captured.out == ""
    assert f"{fixture} does not look like a Kafka log dir (a `log.dirs` entry)" in captured.err
    assert f"these subdirectories do: {fixture / 'kafka-logs'}" in captured.err


def test_suggestions_go_two_levels_down() -> None:
    below = log_dirs_below(FIXTURES / "kafka-2.3.0")
    assert FIXTURES / "kafka-2.3.0" / "compaction-lz4" / "kafka-logs" in below
    assert all(looks_like_log_dir(p) for p in below)


def test_what_makes_a_log_dir(tmp_path: Path) -> None:
    assert not looks_like_log_dir(tmp_path)
    (tmp_path / "notes.txt").write_text("x")
    (tmp_path / "backup-2024").mkdir()  # parses as topic-partition, but holds no segment
    assert not looks_like_log_dir(tmp_path)
    (tmp_path / "backup-2024" / "00000000000000000000.log").write_bytes(b"")
    assert looks_like_log_dir(tmp_path)
    fresh = tmp_path / "fresh"
    fresh.mkdir()
    (fresh / "meta.properties").write_text("version=0\nbroker.id=0\n")
    assert looks_like_log_dir(fresh)  # a broker that has no partition yet


def test_an_empty_dir_is_not_audited(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["audit", str(tmp_path), "--json"]) == 3
    captured = capsys.readouterr()
    assert captured.out == "" and "does not look like a Kafka log dir" in captured.err
    assert "these subdirectories do" not in captured.err
