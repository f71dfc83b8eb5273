"""Finding kinds are one enum: every producer names a member, the cleaner's outcomes each have
theirs, and the README's table of findings names only real kinds."""

from __future__ import annotations

import io
import itertools
import re
import tokenize
from pathlib import Path

import offsets_auditor
from offsets_auditor.cleaner.verdict import Outcome
from offsets_auditor.findings import FindingKind

ROOT = Path(offsets_auditor.__file__).parent.parent
VALUES = {k.value for k in FindingKind}
#: files where a kind's name is also the name of something else (a recovery reason)
OTHER_MEANING = {"offsets_auditor/startup/recovery.py"}


def test_every_cleaner_outcome_has_a_kind() -> None:
    assert {FindingKind(f"cleaner-{o.value}") for o in Outcome} <= set(FindingKind)


def test_no_kind_written_as_a_string() -> None:
    """A kind spelled as a literal escapes mypy and the enum: renaming it would break the
    published findings silently."""
    spelled = []
    for package in ("offsets_auditor", "spark_jobs", "api"):
        for path in sorted((ROOT / package).rglob("*.py")):
            name = str(path.relative_to(ROOT))
            if name in OTHER_MEANING or path.name == "findings.py":
                continue
            tokens = tokenize.generate_tokens(io.StringIO(path.read_text()).readline)
            spelled += [
                f"{name}:{t.start[0]} {t.string}"
                for t in tokens
                if t.type == tokenize.STRING and t.string.strip("\"'") in VALUES
            ]
    assert spelled == []


def test_readme_names_only_real_kinds() -> None:
    readme = (ROOT / "README.md").read_text()
    table = re.findall(r"^\| (`[^|]*) \|", _findings_table(readme), re.M)
    named = {k for cell in table for k in re.findall(r"`([a-z0-9-]+)`", cell)}
    assert len(named) > 15
    assert named - VALUES == set()


def _findings_table(readme: str) -> str:
    """The rows of the README's table of findings (up to the first line not in it)."""
    lines = readme.split("| finding | why it matters |")[1].split("\n")[2:]
    return "\n".join(itertools.takewhile(lambda line: line.startswith("|"), lines))
