"""Running ``offsets-auditor`` where file permissions apply to it: root reads everything
(``CAP_DAC_OVERRIDE``, ``CAP_DAC_READ_SEARCH``), so a test of what an unreadable file does must
drop that itself (CI runs as root).

:func:`unprivileged` finds, once per session, the first way that works here:

1. already not root: the command as it is;
2. the user ``nobody`` (``setpriv --reuid``), with an interpreter that user may run, of the
   same Python minor version, given the project and its site-packages on ``PYTHONPATH`` (a
   virtualenv whose interpreter lives under ``/root`` is not runnable by ``nobody``);
3. root without the two capabilities that bypass file permissions (``setpriv
   --bounding-set``): mode bits apply to it as to any other user of uid 0;
4. none: the test skips, saying why.
"""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
import sys
import sysconfig
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent.parent
#: imports what the commands need, and runs the interpreter again as a child, as Spark's JVM
#: starts its Python workers (``PYSPARK_PYTHON``)
_PROBE = (
    "import subprocess, sys, offsets_auditor._native, pyarrow, numpy, xxhash;"
    " subprocess.run([sys.executable, '-c', 'import pyarrow'], check=True); print('ok')"
)


@dataclass(frozen=True)
class Unprivileged:
    """How to run a Python command where permissions apply: ``prefix`` before the
    interpreter, ``python`` the interpreter, ``env`` the environment, ``who`` in words, ``uid``
    the user the files must not be readable by (``None``: the current one)."""

    prefix: tuple[str, ...]
    python: str
    env: dict[str, str]
    who: str
    uid: int | None

    def command(self, *args: str) -> list[str]:
        """``offsets-auditor ARGS`` as this user."""
        return [
            *self.prefix,
            self.python,
            "-c",
            "import sys; from offsets_auditor.cli.main import main; sys.exit(main())",
            *args,
        ]

    def run(
        self, args: Sequence[str], cwd: Path, timeout: float = 600
    ) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            self.command(*args),
            cwd=cwd,
            env=self.env,
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )

    def give(self, path: Path) -> None:
        """Make ``path`` (created by the test) this user's to write."""
        if self.uid is not None:
            os.chown(path, self.uid, -1)


def _works(prefix: Sequence[str], python: str, env: dict[str, str]) -> bool:
    try:
        done = subprocess.run(
            [*prefix, python, "-c", _PROBE],
            cwd="/",
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
    except OSError:
        return False
    return done.returncode == 0 and done.stdout.strip() == "ok"


@functools.cache
def _find() -> Unprivileged | str:
    """The first way that works, or why none does."""
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(ROOT), sysconfig.get_paths()["purelib"]]),
        "PYTHONDONTWRITEBYTECODE": "1",
    }
    if os.geteuid() != 0:
        return Unprivileged((), sys.executable, dict(os.environ), f"uid {os.geteuid()}", None)
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        return "running as root and there is no setpriv (util-linux) to drop privileges"
    import pwd

    try:
        nobody = pwd.getpwnam("nobody")
    except KeyError:
        nobody = None
    if nobody is not None:
        prefix = (
            setpriv,
            f"--reuid={nobody.pw_uid}",
            f"--regid={nobody.pw_gid}",
            "--clear-groups",
        )
        home = Path(f"/tmp/offsets-auditor-nobody-{os.getpid()}")
        home.mkdir(exist_ok=True)
        os.chown(home, nobody.pw_uid, nobody.pw_gid)
        own = {**env, "HOME": str(home)}
        version = f"python{sys.version_info[0]}.{sys.version_info[1]}"
        candidates = [sys.executable, shutil.which(version), f"/usr/bin/{version}"]
        for python in dict.fromkeys(c for c in candidates if c):
            if _works(prefix, python, {**own, "PYSPARK_PYTHON": python}):
                return Unprivileged(
                    prefix,
                    python,
                    {**own, "PYSPARK_PYTHON": python},
                    f"user nobody (uid {nobody.pw_uid}, {python})",
                    nobody.pw_uid,
                )
    prefix = (setpriv, "--bounding-set=-dac_override,-dac_read_search")
    if _works(prefix, sys.executable, dict(os.environ)):
        return Unprivileged(
            prefix,
            sys.executable,
            dict(os.environ),
            "uid 0 without CAP_DAC_OVERRIDE and CAP_DAC_READ_SEARCH",
            None,
        )
    return "running as root, and neither nobody nor root without CAP_DAC_OVERRIDE can run it"


def unprivileged() -> Unprivileged:
    """The way to run where permissions apply, or skip the test with the reason."""
    found = _find()
    if isinstance(found, str):
        pytest.skip(found)
    return found
