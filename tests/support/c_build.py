"""What the tests of the C extensions share: building one with every warning an error."""

from __future__ import annotations

import subprocess
import sysconfig
from pathlib import Path


def assert_builds_without_warnings(source: Path, out: Path) -> None:
    """``source`` compiles with gcc -Wall -Wextra -Werror into the shared object ``out``."""
    include = sysconfig.get_paths()["include"]
    result = subprocess.run(
        ["gcc", "-O2", "-Wall", "-Wextra", "-Werror", "-fPIC", "-shared", f"-I{include}",
         str(source), "-o", str(out)],
        capture_output=True,
        text=True,
        check=False,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
