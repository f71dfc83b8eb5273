"""``python -m benchmarks.compare``: a commit's ``audit`` against this tree's, in turn, on a tiny
benchmark cluster; the worktree it made is gone afterwards."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from benchmarks import compare
from benchmarks.cluster import ClusterSpec, generate_cluster

ROOT = Path(__file__).resolve().parents[2]


def _worktrees() -> str:
    return subprocess.run(
        ["git", "-C", str(ROOT), "worktree", "list"], capture_output=True, text=True, check=True
    ).stdout


@pytest.mark.skipif(not (ROOT / ".git").exists(), reason="needs the project's git history")
def test_compare_with_head(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    generate_cluster(tmp_path / "c", ClusterSpec(scale=0.001), jobs=1)
    before = _worktrees()
    status = compare.main(["HEAD", "--pairs", "1", "--cluster", str(tmp_path / "c")])
    out = capsys.readouterr().out
    assert status == 0, out
    assert "| `HEAD` | `this tree` |" in out
    assert "same report from every run: yes" in out
    assert _worktrees() == before
