"""docs/architecture.md names every package of the layers contracts, in their order: the page
and the code cannot drift apart."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def contract_layers() -> list[list[str]]:
    """Each layer of the contracts, top first, as the package names of its line."""
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())
    contracts = config["tool"]["importlinter"]["contracts"]
    layers = []
    for contract in contracts:
        if contract["type"] != "layers":
            continue
        for layer in contract["layers"]:
            names = [n.strip() for n in layer.split("|")]
            if names != ["offsets_auditor"]:
                layers.append(names)
    return layers


def page_layers() -> list[list[str]]:
    """Each heading or paragraph lead of the page that names packages (``**`x`** | ...``)."""
    text = (ROOT / "docs" / "architecture.md").read_text()
    found = []
    for line in text.splitlines():
        heading = re.fullmatch(r"## .*: ((?:`\w+`(?: \| )?)+)", line)
        if heading:
            found.append(re.findall(r"`(\w+)`", heading.group(1)))
            continue
        lead = re.match(r"((?:\*\*`\w+`\*\*(?: \| )?)+):", line)
        if lead:
            found.append(re.findall(r"`(\w+)`", lead.group(1)))
    return found


def test_the_page_names_every_layer_in_order() -> None:
    assert page_layers() == contract_layers()


def test_every_core_package_is_a_layer() -> None:
    core = ROOT / "offsets_auditor"
    packages = {p.name for p in core.iterdir() if (p / "__init__.py").is_file()}
    modules = {p.stem for p in core.glob("*.py") if p.stem != "__init__"}
    named = {n for layer in contract_layers() for n in layer}
    assert (packages | modules) - named == set()
