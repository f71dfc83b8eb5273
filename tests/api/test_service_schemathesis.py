"""A schemathesis run over the service's own OpenAPI document, against the real server on the
real scan's run: generated requests, valid and invalid, find no 500, and every answer conforms
to the document (status code, content type, response schema).

Through schemathesis' command line: its pytest plugin does not load under pytest 9."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.service import LiveServer

pytestmark = pytest.mark.slow

CLI = shutil.which("schemathesis", path=str(Path(sys.executable).parent)) or shutil.which(
    "schemathesis"
)


@pytest.mark.skipif(CLI is None, reason="schemathesis is not installed (the dev extra has it)")
def test_no_500_and_no_schema_violation(live_server: LiveServer, tmp_path: Path) -> None:
    done = subprocess.run(
        [
            str(CLI),
            "run",
            live_server.url + "/openapi.json",
            "--max-examples=25",
            "--seed=1",
            "--request-timeout=30",
            "--generation-database=none",
            "--no-color",
        ],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=tmp_path,  # where it keeps its own state (.schemathesis/)
    )
    tail = done.stdout[-3000:]
    assert done.returncode == 0, tail
    generated, passed = map(int, re.search(r"(\d+) generated, (\d+) passed", tail).groups())
    assert generated == passed > 500, tail
    assert live_server.json("/healthz") == {"status": "ok"}
