"""The README's quick start tells a new user what a fresh machine needs and what ``make test``
does to it: the build's prerequisites, every system package the test set-up installs (read from
the scripts that install them, so a package added there and not here fails), that it does so as
root, and how long it takes."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def quick_start() -> str:
    text = (ROOT / "README.md").read_text()
    return text.split("## Quick start", 1)[1].split("\n## ", 1)[0]


def installed_by(script: str) -> set[str]:
    """The Debian packages ``script`` installs or downloads."""
    text = (ROOT / script).read_text()
    found = set(re.findall(r"need\+=\(([\w-]+)\)", text))
    for group in re.findall(r"^PACKAGES=\(([^)]*)\)", text, flags=re.M):
        found.update(group.split())
    return found


def test_the_prerequisites_name_the_c_build() -> None:
    """The record reader is a C extension built at ``pip install``: without a compiler and the
    Python headers ``make demo`` fails on a fresh machine."""
    assert (ROOT / "offsets_auditor" / "_native.c").is_file()
    text = quick_start()
    assert "C compiler" in text and "`gcc`" in text
    assert "python3-dev" in text


def test_what_make_test_installs_and_how_long_it_takes() -> None:
    makefile = (ROOT / "Makefile").read_text()
    scripts = ["scripts/service-test-deps.sh", "scripts/tools/prometheus.sh"]
    for script in scripts:
        assert script in makefile  # make test runs it
    packages = installed_by(scripts[0]) | installed_by(scripts[1])
    assert {"chromium", "chromium-driver", "wrk", "prometheus"} <= packages
    text = quick_start()
    missing = [p for p in sorted(packages) if f"`{p}`" not in text]
    assert missing == [], f"README's quick start does not name {missing}"
    assert "as root" in text and "apt-get" in text
    assert re.search(r"\b\d+ minutes\b", text), "no duration for make test"
