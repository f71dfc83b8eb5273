"""Issue 7 part 6, live log dirs: the audit and the groups recovery while the log cleaner swaps
segments under them, replayed deterministically (``tests/support/cleaner_renames.py``).

Each scenario copies a real fixture log dir into ``tmp_path``, plans one clean of one
``__consumer_offsets`` partition exactly as the broker does it (``.cleaned`` -> ``.swap``,
old segments -> ``.deleted``, ``.swap`` -> final names, checkpoint, delayed unlinks), and runs
the auditor with those steps fired at chosen points of its own ``os`` calls:

- ``atomic``: the whole clean happens right after call ``k``;
- ``rolling``: step ``i`` happens right after call ``k + i`` (steps with ``k + i <= 0`` before
  the run starts), so every intermediate state meets every phase of the audit.

What must hold in every run (the issue's acceptance): no exception escapes, the JSON is valid,
the exit status is 0, 1 or 2; no critical finding names a file the broker renamed, wrote or
deleted, and no damage finding (``corrupt-record``, ``unreadable-file``, ``index-load-failure``,
``corrupt-index``, ``truncated-tail``) names one; no critical finding that no whole state of the
log has; and the partition is reported as ONE whole state of the log: before the clean, after
each group's ``replaceSegments``, or after the checkpoint (its "snapshot signature": segment
base offsets, segments, records, bytes, log end offset, checkpoint, dirty section and the
cleaner's outcome), never a mix. Expected states come from auditing the copy at rest in each
whole state, never from numbers typed here.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import re
import shutil
import struct
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from offsets_auditor.audit.group_recovery import recover
from offsets_auditor.audit.report import report_json
from offsets_auditor.audit.stages import audit_at
from offsets_auditor.cleaner.config import CleanerConfig, cleaner_config
from offsets_auditor.cli.main import main
from offsets_auditor.logdir.meta_properties import parse_java_properties
from tests.conftest import FIXTURES
from tests.support.cleaner_renames import (
    CHECKPOINT,
    Clean,
    FsCalls,
    Step,
    StepFailed,
    era_of,
    merged_swap,
    plan_clean,
    real_swap,
    run_steps,
)

DAMAGE = {
    "corrupt-record",
    "corrupt-segment",
    "checksum-mismatch",
    "oversized-entry",
    "unreadable-file",
    "index-load-failure",
    "corrupt-index",
    "truncated-tail",
}


@dataclass(frozen=True)
class Scenario:
    """One clean of ``partition`` on a copy of ``fixture/source``: ``groups`` of old segments,
    each cleaned into one new segment, taken from ``kafka-logs-after`` (``real``: the bytes the
    real broker wrote) or merged whole (``merged_swap``); then ``checkpoint``."""

    id: str
    fixture: str
    version: str
    partition: str
    source: str
    groups: tuple[tuple[int, ...], ...]
    real: bool
    checkpoint: int
    points: int  # injection points per sweep (the audit of multi-pass takes ~0.1 s)


SCENARIOS = (
    # the real broker's last clean of multi-pass: six single-segment groups, 0 shrinks in place
    Scenario(
        "2.3.0-multi-pass-real", "kafka-2.3.0/multi-pass", "2.3.0", "__consumer_offsets-1",
        "kafka-logs", ((0,), (19650,), (39300,), (58950,), (78600,), (98250,)), True, 117600, 16,
    ),
    # three 1 MB segments merged into a new 00000000000000000000.log (a new inode, same name)
    Scenario(
        "2.3.0-multi-pass-merge", "kafka-2.3.0/multi-pass", "2.3.0", "__consumer_offsets-1",
        "kafka-logs", ((0, 19650, 39300),), False, 58950, 16,
    ),
    # the real clean below a hanging transaction: .txnindex files renamed too
    Scenario(
        "2.3.0-transactions-real", "kafka-2.3.0/transactions", "2.3.0", "__consumer_offsets-2",
        "kafka-logs", ((0,), (551,)), True, 1101, 60,
    ),
    # the next clean groups the two small cleaned segments: a .txnindex.cleaned is written
    Scenario(
        "2.3.0-transactions-merge", "kafka-2.3.0/transactions", "2.3.0", "__consumer_offsets-2",
        "kafka-logs-after", ((0, 551),), False, 1101, 60,
    ),
    # the real 0.9.0.1 clean of two-threads: two groups, .log and .index only
    Scenario(
        "0.9.0.1-two-threads-real", "kafka-0.9.0.1/two-threads", "0.9.0.1",
        "__consumer_offsets-3", "kafka-logs", ((0,), (11748,)), True, 23496, 40,
    ),
    # 0.9.0.1's next clean groups them: 00000000000000011748.log disappears
    Scenario(
        "0.9.0.1-two-threads-merge", "kafka-0.9.0.1/two-threads", "0.9.0.1",
        "__consumer_offsets-3", "kafka-logs-after", ((0, 11748),), False, 23496, 40,
    ),
)  # fmt: skip


@dataclass
class Lab:
    """A scenario set up once: a pristine copy, a working copy the steps run on, the plan,
    and the whole states of the log (their audit signatures) any run may report."""

    scenario: Scenario
    pristine: Path
    work: Path
    clean: Clean
    config: CleanerConfig
    now_ms: int
    snapshots: list[dict[str, Any]] = field(default_factory=list)
    whole_criticals: set[tuple[str, str | None]] = field(default_factory=set)
    group_snapshots: list[dict[str, Any]] | None = None

    def reset(self) -> None:
        """The working copy back to the pristine one, wherever a step may have written."""
        part = self.scenario.partition
        shutil.rmtree(self.work / part)
        shutil.copytree(self.pristine / part, self.work / part, copy_function=shutil.copy2)
        for name in (CHECKPOINT, CHECKPOINT + ".tmp"):
            (self.work / name).unlink(missing_ok=True)
            if (self.pristine / name).exists():
                shutil.copy2(self.pristine / name, self.work / name)

    def audit(self) -> dict[str, Any]:
        return report_json([audit_at(self.work, self.config, self.now_ms, with_groups=False)])

    def cli(self) -> list[str]:
        fixture = FIXTURES / self.scenario.fixture
        return [
            "audit", str(self.work), "--json", "--no-groups", "--kafka-version",
            self.scenario.version, "--broker-config", str(fixture / "broker-server.properties"),
            "--now", str(self.now_ms),
        ]  # fmt: skip

    def whole_states(self, observe: Callable[[], Any]) -> list[Any]:
        """``observe()`` at rest in every whole state of the clean."""
        self.reset()
        seen, done = [], 0
        for count in self.clean.whole_after:
            run_steps(self.work, self.clean.steps[done:count])
            done = count
            seen.append(observe())
        self.reset()
        return seen


def make_lab(scenario: Scenario, tmp: Path) -> Lab:
    fixture = FIXTURES / scenario.fixture
    pristine, work = tmp / "pristine", tmp / "work"
    shutil.copytree(fixture / scenario.source, pristine, copy_function=shutil.copy2)
    shutil.copytree(pristine, work, copy_function=shutil.copy2)
    era = era_of(scenario.version)
    if scenario.real:
        after = fixture / "kafka-logs-after" / scenario.partition
        swaps = [real_swap(after, group) for group in scenario.groups]
    else:
        swaps = [merged_swap(pristine / scenario.partition, g, era) for g in scenario.groups]
    clean = plan_clean(pristine, scenario.partition, era, swaps, scenario.checkpoint)
    properties = parse_java_properties((fixture / "broker-server.properties").read_text())
    config = cleaner_config(properties, {}, scenario.version)
    # the emulation's clock: a minute after the last segment was written, as in other tests
    now_ms = max(int(p.stat().st_mtime * 1000) for p in pristine.rglob("*.log")) + 60_000
    lab = Lab(scenario, pristine, work, clean, config, now_ms)
    reports = lab.whole_states(lab.audit)
    lab.snapshots = [signature(r, scenario.partition) for r in reports]
    lab.whole_criticals = {
        (f["kind"], f["partition"]) for r in reports for f in r["findings"] if critical(f)
    }
    return lab


@pytest.fixture(scope="module")
def labs(tmp_path_factory: pytest.TempPathFactory) -> Callable[[Scenario], Lab]:
    made: dict[str, Lab] = {}

    def get(scenario: Scenario) -> Lab:
        if scenario.id not in made:
            made[scenario.id] = make_lab(scenario, tmp_path_factory.mktemp(scenario.id))
        return made[scenario.id]

    return get


# -- what a run must show ----------------------------------------------------------------------


def signature(report: dict[str, Any], partition: str) -> dict[str, Any]:
    """What the report says about ``partition`` that one whole state of the log decides."""
    p = next((p for p in report["partitions"] if p["name"] == partition), None)
    bases = sorted({i["base_offset"] for i in report["indexes"] if i["partition"] == partition})
    if p is None:
        return {"segment_base_offsets": bases, "partition": None}
    return {
        "segment_base_offsets": bases,
        "segment_count": p["segment_count"],
        "records": p["records"],
        "size_bytes": p["size_bytes"],
        "log_end_offset": p["log_end_offset"],
        "cleaner_checkpoint": p["cleaner_checkpoint"],
        "first_dirty_offset": p["first_dirty_offset"],
        "dirty_ratio": p["dirty_ratio"],
        "outcome": p["cleaner"]["outcome"],
        "pass_end_offsets": p["cleaner"]["pass_end_offsets"],
        "retained_records": p["cleaner"]["retained_records"],
        "floor_bytes": p["space"]["floor_bytes"],
    }


def critical(finding: dict[str, Any]) -> bool:
    return bool(finding["severity"] == "critical")


def names_touched(finding: dict[str, Any], touched: frozenset[str]) -> str | None:
    """The renamed/written/deleted file a finding names (in ``file`` or ``detail``), if any."""
    text = f"{finding.get('file') or ''} {finding.get('detail') or ''}"
    return next((name for name in sorted(touched, key=len, reverse=True) if name in text), None)


def report_violations(lab: Lab, report: dict[str, Any], mode: str) -> list[str]:
    """Everything wrong with one report of a run under the swap (empty: all good). When the
    whole clean happens at once (``atomic``) the log only ever held its first and its last
    state: segments swapped in, reported with the checkpoint from before, are a mix (the
    cleaner checkpoint read with the log dir, then the partition listed after the clean)."""
    found = []
    for f in report["findings"]:
        name = names_touched(f, lab.clean.touched)
        if name and (critical(f) or f["kind"] in DAMAGE):
            found.append(f"{f['severity']} {f['kind']} names {name}: {f['detail'][:160]}")
        elif critical(f) and (f["kind"], f["partition"]) not in lab.whole_criticals:
            found.append(f"critical {f['kind']} no whole state has: {f['detail'][:160]}")
    held = [lab.snapshots[0], lab.snapshots[-1]] if mode == "atomic" else lab.snapshots
    seen = signature(report, lab.scenario.partition)
    if seen not in held:
        found.append(f"a mix of states: {mix(seen, held)}")
    return found


def mix(seen: dict[str, Any], snapshots: list[dict[str, Any]]) -> str:
    """How ``seen`` differs from the nearest whole state (fewest fields apart)."""
    number, nearest = min(
        enumerate(snapshots), key=lambda s: sum(s[1].get(k) != v for k, v in seen.items())
    )
    apart = [f"{k} {v} (whole state {number}: {nearest.get(k)})" for k, v in seen.items()
             if nearest.get(k) != v]  # fmt: skip
    return ", ".join(apart)


# -- running under the swap --------------------------------------------------------------------


def atomic(steps: Sequence[Step], k: int) -> dict[int, list[Step]]:
    return {k: list(steps)}


def rolling(steps: Sequence[Step], k: int) -> dict[int, list[Step]]:
    schedule: dict[int, list[Step]] = {}
    for i, step in enumerate(steps):
        schedule.setdefault(max(k + i, 0), []).append(step)
    return schedule


def injection_points(trace: list[str], partition: str, limit: int) -> list[int]:
    """About ``limit`` call numbers: half just before the core opens a ``.log`` of ``partition``
    (a segment merged away or replaced between listing and opening), an eighth spread over all
    calls (reads through descriptors opened before the swap), the rest over the calls that list,
    stat or open anything of the partition and the calls just before them; and the start."""
    before_open, near = [], {0}
    for number, call in enumerate(trace, start=1):
        name, _, about = call.partition(" ")
        if not about.startswith(partition + "/") and about != partition:
            continue
        if name == "open" and about.endswith(".log"):
            before_open.append(number - 1)
        if not name.startswith(("pread", "close", "fstat")):
            near.update((number - 1, number))
    chosen = set(spread(before_open, limit // 2))
    chosen.update(spread(list(range(1, len(trace) + 1)), limit // 8))
    chosen.update(spread(sorted(near - chosen), limit - len(chosen)))
    return sorted(chosen)


def spread(numbers: list[int], count: int) -> list[int]:
    """``count`` of ``numbers``, evenly spaced, first and last included."""
    if count <= 0:
        return []
    if len(numbers) <= count:
        return list(numbers)
    if count == 1:
        return [numbers[0]]
    return [numbers[round(i * (len(numbers) - 1) / (count - 1))] for i in range(count)]


def count_calls(lab: Lab, run: Callable[[], Any]) -> list[str]:
    """The core's ``os`` calls in one undisturbed run. Without one opening a segment of the
    partition the injector cannot reach the core's reads and a sweep would prove nothing."""
    lab.reset()
    with FsCalls(lab.work) as calls:
        run()
    if not any(c.startswith(f"open {lab.scenario.partition}/") for c in calls.trace):
        raise RuntimeError("no os.open of the partition seen through offsets_auditor.logdir.fs.os")
    return calls.trace


def sweep(
    lab: Lab,
    run: Callable[[], list[str]],
    schedules: list[tuple[str, dict[int, list[Step]]]],
) -> list[str]:
    """Run once per schedule on a fresh copy; the violations found, each with its schedule."""
    found = []
    for label, schedule in schedules:
        lab.reset()
        with FsCalls(lab.work, schedule) as calls:
            problems = run()
        found += [f"[{label}, {calls.count} calls] {p}" for p in problems]
    lab.reset()
    return found


def guarded(body: Callable[[], list[str]]) -> list[str]:
    """Any exception escaping the auditor is a violation (the harness's own are not)."""
    try:
        return body()
    except StepFailed:
        raise
    except Exception as error:  # that is the point
        return [f"exception {type(error).__name__}: {error}"]


def verdict(found: list[str], runs: int) -> None:
    shown = "\n".join(found[:12])
    assert not found, f"{len(found)} violations in {runs} runs under the swap:\n{shown}"


def schedules_for(
    lab: Lab, trace: list[str], mode: str, limit: int
) -> list[tuple[str, dict[int, list[Step]]]]:
    steps = lab.clean.steps
    points = injection_points(trace, lab.scenario.partition, limit)
    if mode == "atomic":
        return [(f"atomic after call {k}", atomic(steps, k)) for k in points]
    early = [-s for s in range(len(steps) - 1, 0, -max(len(steps) // 6, 1))]
    return [(f"rolling from call {k}", rolling(steps, k)) for k in early + points]


# -- the tests ---------------------------------------------------------------------------------


@pytest.mark.parametrize("mode", ["atomic", "rolling"])
@pytest.mark.parametrize("scenario", [pytest.param(s, id=s.id) for s in SCENARIOS])
def test_audit_reads_one_whole_state_under_the_swap(
    scenario: Scenario, mode: str, labs: Callable[[Scenario], Lab]
) -> None:
    """``audit_log_dir`` + ``report_json``: every invariant of the module docstring."""
    lab = labs(scenario)

    def run() -> list[str]:
        return guarded(lambda: report_violations(lab, json.loads(json.dumps(lab.audit())), mode))

    schedules = schedules_for(lab, count_calls(lab, lab.audit), mode, scenario.points)
    verdict(sweep(lab, run, schedules), len(schedules))


@pytest.mark.parametrize("scenario", [pytest.param(s, id=s.id) for s in SCENARIOS])
def test_cli_prints_valid_json_and_a_real_exit_status_under_the_swap(
    scenario: Scenario, labs: Callable[[Scenario], Lab]
) -> None:
    """``offsets-auditor audit --json --no-groups``: no traceback, valid JSON on stdout, exit
    status 0/1/2 and the same status as the report's, the report's invariants."""
    lab = labs(scenario)

    def run() -> list[str]:
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            status = main(lab.cli())
        if status not in (0, 1, 2):
            return [f"exit status {status}"]
        try:
            report = json.loads(out.getvalue())
        except ValueError:
            return [f"invalid JSON on stdout ({len(out.getvalue())} characters)"]
        problems = report_violations(lab, report, "atomic")
        if status != report["exit_status"]:
            problems.append(f"exit status {status} but the report says {report['exit_status']}")
        return problems

    with contextlib.redirect_stdout(io.StringIO()):
        trace = count_calls(lab, lambda: main(lab.cli()))
        schedules = schedules_for(lab, trace, "atomic", max(scenario.points // 3, 4))
        found = sweep(lab, lambda: guarded(run), schedules)
    verdict(found, len(schedules))


# -- groups: a vanished file must not make the listing incomplete -----------------------------

#: ``recover`` decodes every record in Python (1.4 s for multi-pass, 0.6 s for two-threads):
#: the transactions scenarios (v2, transactional commits, .txnindex renames) and the v0 merge
#: (a segment vanishes between listing and opening) carry the groups sweep.
GROUP_SCENARIOS = [
    s
    for s in SCENARIOS
    if s.id.startswith("2.3.0-transactions") or s.id == "0.9.0.1-two-threads-merge"
]


def group_signature(lab: Lab, recovery: Any) -> dict[str, Any]:
    """The replay of the cleaned partition: its records, end and every group's state."""
    number = int(lab.scenario.partition.rpartition("-")[2])
    part = next((p for p in recovery.partitions if p.partition == number), None)
    if part is None:
        return {"partition": None}
    return {
        "records": part.records,
        "log_end_offset": part.log_end_offset,
        "groups": sorted(json.dumps(g.to_json(), sort_keys=True) for g in part.groups),
    }


def groups_violations(lab: Lab, recovery: Any, snapshots: list[dict[str, Any]]) -> list[str]:
    found = []
    for f in (f.to_dict() for f in recovery.findings):
        name = names_touched(f, lab.clean.touched)
        if name and (critical(f) or f["kind"] in DAMAGE):
            found.append(f"{f['severity']} {f['kind']} names {name}: {str(f['detail'])[:160]}")
    seen = group_signature(lab, recovery)
    if seen not in snapshots:
        near = min(snapshots, key=lambda s: sum(s.get(k) != v for k, v in seen.items()))
        lost = len(set(near.get("groups", [])) - set(seen.get("groups", [])))
        found.append(
            f"groups of no whole state: {seen.get('records')} records replayed"
            f" (nearest whole state {near.get('records')}), {lost} group states differ"
        )
    return found


@pytest.mark.parametrize("scenario", [pytest.param(s, id=s.id) for s in GROUP_SCENARIOS])
def test_groups_recovery_is_whole_under_the_swap(
    scenario: Scenario, labs: Callable[[Scenario], Lab]
) -> None:
    """``groups.recover.recover``: no exception, no damage finding naming a renamed file, and
    the cleaned partition's groups are those of one whole state (nothing lost to a segment
    that was merged away between listing and opening)."""
    lab = labs(scenario)

    def recovered() -> Any:
        return recover(lab.work, scenario.version)

    if lab.group_snapshots is None:
        lab.group_snapshots = [group_signature(lab, r) for r in lab.whole_states(recovered)]
    snapshots = lab.group_snapshots

    def run() -> list[str]:
        return guarded(lambda: groups_violations(lab, recovered(), snapshots))

    limit = 20 if scenario.version.startswith("2.") else 4
    schedules = schedules_for(lab, count_calls(lab, recovered), "atomic", limit)
    verdict(sweep(lab, run, schedules), len(schedules))


# -- the harness itself -------------------------------------------------------------------------

REAL = [pytest.param(s, id=s.id) for s in SCENARIOS if s.real]
MERGED = [pytest.param(s, id=s.id) for s in SCENARIOS if not s.real]


def _last_clean_swaps(log_cleaner: Path, partition: str) -> list[tuple[int, ...]]:
    """The groups of the last clean of ``partition`` in a broker's ``log-cleaner.log``: one
    "Swapping in cleaned segment N for segment(s) ..." line per group (0.9.0.1 lists base
    offsets, 2.3.0 ``LogSegment(baseOffset=N, ...)``)."""
    lines = log_cleaner.read_text().splitlines()
    start = max(i for i, line in enumerate(lines) if f"offset map for log {partition} " in line)
    groups = []
    for line in lines[start:]:
        if "Swapping in cleaned segment" in line and (
            f"log {partition}." in line or f"/{partition})" in line
        ):
            olds = line.split("for segment(s)", 1)[1].split(" in log ", 1)[0]
            bases = re.findall(r"baseOffset=(\d+)", olds) or re.findall(r"\d+", olds)
            groups.append(tuple(int(n) for n in bases))
    return groups


@pytest.mark.parametrize("scenario", REAL)
def test_the_simulated_clean_is_the_real_brokers(
    scenario: Scenario, labs: Callable[[Scenario], Lab]
) -> None:
    """The real scenarios replay the broker's own last clean: the same groups as its
    ``log-cleaner.log`` swaps, the segments its ``server.log`` deleted, and, once every step
    ran, the partition dir and checkpoint entry of ``kafka-logs-after`` byte for byte."""
    lab = labs(scenario)
    fixture = FIXTURES / scenario.fixture
    assert _last_clean_swaps(fixture / "log-cleaner.log", scenario.partition) == list(
        scenario.groups
    )
    server_log = (fixture / "server.log").read_text()
    deleted = {  # 2.3.0 "[Log partition=P, dir=D] Deleting segment N"; 0.9.0.1 "... from log P."
        int(n)
        for pattern in (
            rf"partition={scenario.partition}, .*?Deleting segment (\d+)",
            rf"Deleting segment (\d+) from log {scenario.partition}\.",
        )
        for n in re.findall(pattern, server_log)
    }
    assert {seg for group in scenario.groups for seg in group} <= deleted
    lab.reset()
    run_steps(lab.work, lab.clean.steps)
    after = fixture / "kafka-logs-after" / scenario.partition
    ours = {p.name: p.read_bytes() for p in (lab.work / scenario.partition).iterdir()}
    assert ours == {p.name: p.read_bytes() for p in after.iterdir()}
    entry = f"{scenario.partition.replace('-', ' ')} {scenario.checkpoint}"
    assert entry in (fixture / "kafka-logs-after" / CHECKPOINT).read_text().splitlines()
    assert entry in (lab.work / CHECKPOINT).read_text().splitlines()
    lab.reset()


@pytest.mark.parametrize("scenario", MERGED)
def test_a_merged_segment_is_a_segment_the_auditor_accepts(
    scenario: Scenario, labs: Callable[[Scenario], Lab]
) -> None:
    """A merged group keeps every record, at the first segment's base offset, with indexes
    whose entries point at the batch holding their offset: the audit at rest finds the same
    records in fewer segments and no problem the log before the clean did not have."""
    lab = labs(scenario)
    before, after = lab.snapshots[0], lab.snapshots[-1]
    group = scenario.groups[0]
    assert after["records"] == before["records"]
    assert after["segment_count"] == before["segment_count"] - (len(group) - 1)
    assert set(after["segment_base_offsets"]) == set(before["segment_base_offsets"]) - set(
        group[1:]
    )
    reports = lab.whole_states(lab.audit)
    problems = [
        {(f["kind"], f["file"]) for f in r["findings"] if f["severity"] != "info"} for r in reports
    ]
    assert problems[-1] <= problems[0]
    lab.reset()
    run_steps(lab.work, lab.clean.steps)
    part = lab.work / scenario.partition
    log = (part / f"{group[0]:020d}.log").read_bytes()
    index = (part / f"{group[0]:020d}.index").read_bytes()
    entries = [struct.unpack_from(">ii", index, i) for i in range(0, len(index), 8)]
    assert entries == sorted(entries)
    for relative, position in entries:
        (first_offset,) = struct.unpack_from(">q", log, position)  # every format starts so
        assert first_offset <= group[0] + relative
    lab.reset()


def test_the_injector_fires_after_the_chosen_call(tmp_path: Path) -> None:
    """Call numbers are the core's own ``os`` calls (and each listed entry); ``schedule[k]``
    runs after call ``k``; ``offsets_auditor.logdir.fs.os`` is the real module again afterwards."""
    import offsets_auditor.logdir.fs as fs

    (tmp_path / "a").write_bytes(b"x")
    (tmp_path / "b").write_bytes(b"yy")
    gone = Step("rename", "a", "a.deleted", mirrors="test")
    with FsCalls(tmp_path, {2: [gone]}) as calls:
        assert fs.file_info(tmp_path / "a").size == 1  # call 1
        assert fs.file_info(tmp_path / "a").size == 1  # call 2, then the rename
        with pytest.raises(FileNotFoundError):
            fs.file_info(tmp_path / "a")  # call 3
        listed = fs.list_dir(tmp_path)  # scandir, 2 x (entry, stat), the end of the listing
    assert calls.trace[:3] == ["stat a", "stat a", "stat a"]
    assert [e.name for e in listed] == ["a.deleted", "b"]
    assert calls.count == 3 + 1 + 2 * 2 + 1
    assert fs.os is os


def test_the_checker_sees_what_the_issue_saw(labs: Callable[[Scenario], Lab]) -> None:
    """The invariants can fail: a report of a whole state passes; the same report with the
    issue's false finding on a renamed file, or with records from another state, does not."""
    lab = labs(next(s for s in SCENARIOS if s.id == "2.3.0-transactions-merge"))
    lab.reset()
    report = lab.audit()
    assert report_violations(lab, report, "atomic") == []
    renamed = f"{lab.scenario.partition}/00000000000000000551.timeindex"
    false_finding = {
        "kind": "unreadable-file", "severity": "critical", "partition": lab.scenario.partition,
        "file": renamed, "detail": f"Could not read file /x/{renamed} (No such file or directory)",
    }  # fmt: skip
    assert len(report_violations(lab, {**report, "findings": [false_finding]}, "atomic")) == 1
    mixed = json.loads(json.dumps(report))
    part = next(p for p in mixed["partitions"] if p["name"] == lab.scenario.partition)
    part["records"] -= 2
    assert [v for v in report_violations(lab, mixed, "rolling") if v.startswith("a mix of states")]


def test_the_checker_sees_what_a_live_scan_saw(labs: Callable[[Scenario], Lab]) -> None:
    """Segments swapped in with the checkpoint from before (the 2.3.0 cleaner's last clean of
    multi-pass): a state the log holds between ``replaceSegments`` and the checkpoint, but a
    mix when the whole clean happened at once."""
    lab = labs(next(s for s in SCENARIOS if s.id == "2.3.0-multi-pass-real"))
    swapped = lab.whole_states(lab.audit)[-2]
    assert report_violations(lab, swapped, "rolling") == []
    assert [v for v in report_violations(lab, swapped, "atomic") if v.startswith("a mix of")]
