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


def test_no_import_cycle_anywhere() -> None:
    """No module reaches itself through imports: neither at the top, nor in a function body, nor
    behind ``TYPE_CHECKING`` (grimp counts all three). The layers contracts in pyproject.toml
    order the packages; this covers the modules inside one package too."""
    import grimp

    graph = grimp.build_graph("offsets_auditor", "spark_jobs", "api")
    cycles = [sorted(c) for c in strongly_connected(graph) if len(c) > 1]
    assert cycles == []


def strongly_connected(graph: object) -> list[set[str]]:
    """Tarjan's components of the module graph (iterative: no recursion limit)."""
    modules = sorted(graph.modules)  # type: ignore[attr-defined]
    edges = {m: sorted(graph.find_modules_directly_imported_by(m)) for m in modules}  # type: ignore[attr-defined]
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[set[str]] = []
    for root in modules:
        if root in index:
            continue
        work = [(root, 0)]
        while work:
            node, i = work.pop()
            if i == 0:
                index[node] = low[node] = len(index)
                stack.append(node)
                on_stack.add(node)
            if i < len(edges.get(node, [])):
                work.append((node, i + 1))
                nxt = edges[node][i]
                if nxt not in index:
                    work.append((nxt, 0))
                elif nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
                continue
            if low[node] == index[node]:
                component = set()
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.add(member)
                    if member == node:
                        break
                found.append(component)
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
    return found
