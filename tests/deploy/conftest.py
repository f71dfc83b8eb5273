"""Fixtures of the deploy/ checks: the project's generators (scripts/deploy/) and Debian's
Prometheus tools, unpacked by scripts/tools/prometheus.sh into .tools/ (git-ignored)."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[2]
DEPLOY = ROOT / "deploy"


def deploy_script(name: str) -> ModuleType:
    """A module of scripts/deploy/ (they are scripts, not a package)."""
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, ROOT / "scripts" / "deploy" / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


VENV_BIN = Path(sys.executable).parent


def has_serve_command() -> bool:
    """Whether ``offsets-auditor serve`` (issue #10, the service) is installed."""
    done = subprocess.run(
        [str(VENV_BIN / "offsets-auditor"), "serve", "--help"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    return done.returncode == 0 and "--results" in done.stdout


@pytest.fixture(scope="session")
def serve_command() -> Path:
    """The offsets-auditor executable, once it has the ``serve`` command."""
    if not has_serve_command():
        pytest.skip("offsets-auditor serve (issue #10, the service) is not on this branch yet")
    return VENV_BIN / "offsets-auditor"
