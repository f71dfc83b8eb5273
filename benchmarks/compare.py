"""This tree's ``audit`` against a commit's, in turn: ``python -m benchmarks.compare BASE``.

A speed change is measured against the commit before it, on the same machine in the same hour
(this machine's speed moves by half within two hours): ``BASE`` is checked out into a temporary
git worktree with its own C extension built as ``pip`` builds it (``pip wheel``; the tree's C
may differ from this one's), then ``offsets-auditor audit`` of one broker of the cluster
benchmark (``benchmarks/cluster.py``, generated at ``--scale`` unless present) runs by each side
in turn (``BASE`` first in even pairs, this tree first in odd ones: no order bias), ``--pairs``
times, pinned to one core with ``--jobs 1`` (``--jobs 2``: both cores).

Each side runs as ``python -P -m offsets_auditor.cli.main`` with ``PYTHONPATH`` at its own tree,
its bytecode compiled first (as a wheel install does), checked to import its own package
(``-P``: the current directory is not put first on the path, where it would shadow the other
side). Each run is measured from outside
(``benchmarks.measure``): wall, CPU and peak resident memory. Prints a Markdown table, the
medians, each pair's ratio of CPU seconds (two runs back to back move less with the machine's
speed than runs apart) and whether every run of both sides printed the same report; the
worktree is removed at the end.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import zipfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from benchmarks.cluster import ClusterSpec, cluster_dir, ensure_cluster
from benchmarks.measure import Measured, run
from benchmarks.scan import warm

ROOT = Path(__file__).resolve().parent.parent


@dataclass(frozen=True)
class Side:
    """One tree to run: its label and its root (holding ``offsets_auditor/`` and its built
    extension)."""

    label: str
    root: Path

    def command(self, *args: str) -> list[str]:
        return [sys.executable, "-P", "-m", "offsets_auditor.cli.main", *args]

    def env(self) -> dict[str, str]:
        import os

        return {**os.environ, "PYTHONPATH": str(self.root)}

    def compile(self) -> None:
        """Its bytecode written, as a wheel install writes it (an editable install and a
        worktree have none, and with PYTHONDONTWRITEBYTECODE each run would compile every
        module again)."""
        subprocess.run(
            [sys.executable, "-m", "compileall", "-q", "offsets_auditor", "spark_jobs", "api"],
            cwd=self.root,
            capture_output=True,
            check=True,
        )

    def check_imports_itself(self) -> None:
        probe = subprocess.run(
            [sys.executable, "-P", "-c", "import offsets_auditor; print(offsets_auditor.__file__)"],
            env=self.env(),
            cwd=self.root,
            capture_output=True,
            text=True,
            check=True,
        )
        imported = Path(probe.stdout.strip()).resolve()
        if not imported.is_relative_to(self.root.resolve()):
            raise RuntimeError(f"{self.label} imports {imported}, not its own tree {self.root}")


def worktree(commit: str, where: Path) -> Path:
    """``commit`` checked out at ``where`` (a detached worktree), its C extension built as pip
    builds it and put beside its sources."""
    subprocess.run(
        ["git", "-C", str(ROOT), "worktree", "add", "--detach", str(where), commit],
        check=True,
        capture_output=True,
    )
    wheels = where / ".wheel"
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", str(wheels), str(where)],
        check=True,
        capture_output=True,
    )
    (wheel,) = wheels.glob("*.whl")
    with zipfile.ZipFile(wheel) as archive:
        for name in archive.namelist():
            if name.startswith("offsets_auditor/_native") and name.endswith(".so"):
                (where / name).write_bytes(archive.read(name))
    shutil.rmtree(wheels)
    return where


def remove_worktree(where: Path) -> None:
    subprocess.run(
        ["git", "-C", str(ROOT), "worktree", "remove", "--force", str(where)],
        check=False,
        capture_output=True,
    )


def audit_once(side: Side, broker: Path, now_ms: int, jobs: int) -> Measured:
    args = ["audit", str(broker / "kafka-logs")]
    args += ["--broker-config", str(broker / "server.properties")]
    args += ["--now", str(now_ms), "--jobs", str(jobs)]
    cpus = {0} if jobs == 1 else None
    measured = run(side.command(*args), cpus=cpus, env=side.env())
    if measured.returncode not in (0, 1, 2):
        raise RuntimeError(f"{side.label}: exit {measured.returncode}: {measured.stderr[-2000:]}")
    return measured


def median(runs: list[Measured], value: Callable[[Measured], float]) -> float:
    return statistics.median(value(m) for m in runs)


def table(sides: list[Side], runs: dict[str, list[Measured]], size: int) -> str:
    def peak(m: Measured) -> float:
        return max((hwm for _, hwm in m.peaks.values()), default=0) / 1048576

    lines = [
        "| | " + " | ".join(f"`{s.label}`" for s in sides) + " |",
        "|---|" + "---:|" * len(sides),
    ]
    rows: list[tuple[str, Callable[[Measured], float], str]] = [
        ("wall s", lambda m: m.wall_seconds, "{:.2f}"),
        ("CPU s", lambda m: m.cpu_seconds, "{:.2f}"),
        ("peak RSS MiB", peak, "{:.0f}"),
    ]
    for name, value, form in rows:
        cells = [", ".join(form.format(value(m)) for m in runs[s.label]) for s in sides]
        lines.append(f"| {name}, each run | " + " | ".join(cells) + " |")
    cells = [f"{size / 1e6 / median(runs[s.label], lambda m: m.wall_seconds):.1f}" for s in sides]
    lines.append("| MB/s per core (median wall) | " + " | ".join(cells) + " |")
    base, this = (runs[s.label] for s in sides)
    # each pair ran back to back: its ratio moves less with the machine's speed than the times
    ratios = [b.cpu_seconds / t.cpu_seconds for b, t in zip(base, this, strict=True)]
    shown = ", ".join(f"{r:.3f}" for r in ratios)
    lines.append(
        f"| CPU s of `{sides[0].label}` over this tree's, each pair (median) | {shown}"
        f" ({statistics.median(ratios):.3f}) | |"
    )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("base", help="the commit to compare this tree with (e.g. HEAD~1)")
    parser.add_argument("--pairs", type=int, default=3, help="runs of each side, in turn")
    parser.add_argument("--scale", type=float, default=0.2, help="the cluster benchmark's scale")
    parser.add_argument(
        "--cluster",
        type=Path,
        help="a generated cluster to use as it is (default: benchmarks/data/cluster-S, generated"
        " at --scale unless there)",
    )
    parser.add_argument("--broker", type=int, default=1, help="which broker's log dir")
    parser.add_argument("--jobs", type=int, default=1, help="audit --jobs (1: pinned to one core)")
    args = parser.parse_args(argv)
    if args.cluster is not None:  # as it is, whatever its scale
        root = args.cluster
        manifest: dict[str, Any] = json.loads((root / "cluster.json").read_text())
    else:
        root = cluster_dir(args.scale)
        manifest = ensure_cluster(root, ClusterSpec(scale=args.scale))
    broker = root / f"broker-{args.broker}"
    size = sum(f.stat().st_size for f in (broker / "kafka-logs").rglob("*") if f.is_file())
    with tempfile.TemporaryDirectory(prefix="offsets-auditor-compare-") as scratch:
        where = Path(scratch) / "base"
        try:
            base = Side(args.base, worktree(args.base, where))
            sides = [base, Side("this tree", ROOT)]
            for side in sides:
                side.check_imports_itself()
                side.compile()
            warm([broker])
            runs: dict[str, list[Measured]] = {s.label: [] for s in sides}
            for pair in range(args.pairs):
                for side in sides if pair % 2 == 0 else sides[::-1]:  # ABBA: no order bias
                    runs[side.label].append(audit_once(side, broker, manifest["now_ms"], args.jobs))
        finally:
            remove_worktree(where)
    reports = {m.stdout for label in runs for m in runs[label]}
    print(f"`audit --jobs {args.jobs}` of {broker} ({size:,} bytes), {args.pairs} pairs in turn:\n")
    print(table(sides, runs, size))
    print(f"\nsame report from every run: {'yes' if len(reports) == 1 else 'NO'}")
    return 0 if len(reports) == 1 else 1


if __name__ == "__main__":
    sys.exit(main())
