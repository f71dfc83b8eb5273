"""Every module imports on its own, first thing in a fresh interpreter (an import cycle only
shows when the modules involved are imported in a particular order; the CLI imports them one
way, the tests another)."""

from __future__ import annotations

import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import offsets_auditor

PACKAGE = Path(offsets_auditor.__file__).parent


def modules() -> list[str]:
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        found.append(".".join(parts))
    return found


def import_alone(module: str) -> tuple[str, int, str]:
    done = subprocess.run(
        [sys.executable, "-c", f"import {module}"], capture_output=True, text=True, check=False
    )
    return module, done.returncode, done.stderr[-2000:]


def test_every_module_imports_first() -> None:
    names = modules()
    assert len(names) > 50
    with ThreadPoolExecutor(max_workers=4) as pool:
        failed = [r for r in pool.map(import_alone, names) if r[1] != 0]
    assert not failed, failed
