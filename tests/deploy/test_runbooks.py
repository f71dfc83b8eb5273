"""api/runbooks/: one page per alert of docs/metrics.md, each saying what the alert means, how
to confirm it and what to change; the guide and the runbooks link to pages that exist."""

from __future__ import annotations

import re

from tests.deploy.conftest import ROOT
from tests.deploy.test_prometheus_rules import contract_alerts

RUNBOOKS = ROOT / "api" / "runbooks"


def test_one_runbook_per_alert_and_no_other() -> None:
    pages = {p.stem for p in RUNBOOKS.glob("*.md")} - {"README"}
    assert pages == set(contract_alerts())


def test_every_runbook_has_its_sections() -> None:
    for name, severity in contract_alerts().items():
        text = (RUNBOOKS / f"{name}.md").read_text()
        assert text.startswith(f"# {name} ({severity})\n"), name
        headings = re.findall(r"^## (.+)$", text, flags=re.M)
        assert headings[0] == "What it means", name
        assert headings[1].startswith("Confirm"), name
        assert headings[2] == "What to change", name


def test_links_between_pages_resolve() -> None:
    for page in [*RUNBOOKS.glob("*.md"), ROOT / "docs" / "operators-guide.md"]:
        for target in re.findall(r"\]\(([^)#:]+\.md)\)", page.read_text()):
            assert (page.parent / target).is_file(), (page.name, target)


def test_the_cleaner_runbooks_name_the_fix() -> None:
    death = (RUNBOOKS / "OffsetsCleanerThreadDeath.md").read_text()
    assert "log.cleaner.dedupe.buffer.size" in death
    assert "offset map can fit only" in death  # the broker's own message
    stuck_group = (RUNBOOKS / "OffsetsCoordinatorLoadSlow.md").read_text()
    assert "reset-offsets.csv" in stuck_group and "--from-file" in stuck_group
