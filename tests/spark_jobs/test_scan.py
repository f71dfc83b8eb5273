"""The Spark scan on the real brokers' log dirs: the same verdicts as ``audit``, published whole,
reused where nothing changed, retried where the cleaner swapped a segment under it."""

from __future__ import annotations

import json
import os
import shutil
from dataclasses import asdict, replace
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest

from offsets_auditor import published
from offsets_auditor.audit import rows as published_rows
from offsets_auditor.audit.partition import BrokerAudit
from offsets_auditor.audit.plan import AuditSettings, plan_audit
from offsets_auditor.audit.report import DEFAULT_LOAD_BYTES_PER_SECOND, report_json
from offsets_auditor.audit.stages import audit_log_dir
from offsets_auditor.logdir.meta_properties import parse_java_properties
from spark_jobs import publish
from spark_jobs.job import ScanOptions, ScanResult, republish_unchanged, run_scan, start

pytestmark = pytest.mark.slow

FIXTURES = Path(__file__).parent.parent / "fixtures"
#: the project's fixtures, and the shared ones next to the checkout when present
SHARED = Path(__file__).resolve().parent.parents[2] / "shared/fixtures"
LOG_DIRS = sorted(FIXTURES.glob("kafka-*/*/kafka-logs")) + sorted(
    SHARED.glob("kafka-*/*/kafka-logs")
)
NOW_MS = 1_790_000_000_000
#: findings only a scan of several log dirs makes
ACROSS_LOG_DIRS = {"duplicate-broker-id", "replica-divergence"}


@pytest.fixture(scope="module")
def everything(spark: Any, tmp_path_factory: pytest.TempPathFactory) -> ScanResult:
    """Every fixture log dir in one scan, each detected on its own."""
    out = tmp_path_factory.mktemp("results")
    return run_scan(spark, ScanOptions(log_dirs=tuple(LOG_DIRS), out=out, now_ms=NOW_MS))


def audit_report(log_dir: Path, properties: tuple[tuple[str, str], ...] = ()) -> dict[str, Any]:
    return audited(log_dir, properties)[0]


def audited(
    log_dir: Path, properties: tuple[tuple[str, str], ...] = ()
) -> tuple[dict[str, Any], BrokerAudit]:
    """What ``audit`` makes of the log dir: its report, and the audit the rows are built of."""
    plan = plan_audit([log_dir], AuditSettings(properties=properties), NOW_MS)
    audit = audit_log_dir(log_dir, plan)
    detection = plan.detection
    audit = replace(audit, findings=(*detection.findings(), *audit.findings))
    report = report_json([audit], detection=detection, emulated=plan.emulated_versions)
    return report, audit


def without_across(report: dict[str, Any]) -> dict[str, Any]:
    """A report less what only a scan of several log dirs adds, and less its groups (the scan
    publishes them as the groups table only)."""
    report = json.loads(json.dumps(report))
    report["findings"] = [f for f in report["findings"] if f["kind"] not in ACROSS_LOG_DIRS]
    del report["exit_status"]
    report.pop("groups", None)
    return report


def expected_rows(
    table: str, index: int, report: dict[str, Any], audit: BrokerAudit
) -> list[dict[str, Any]]:
    """The rows ``audit`` gives ``table``; the groups from its report (audit's JSON),
    flattened here: one row per group and committed (or pending) topic-partition, one with no
    topic for a group without offsets."""
    place = published_rows.where(index, audit)
    if table == "partitions":
        load = DEFAULT_LOAD_BYTES_PER_SECOND
        return [asdict(r) for r in published_rows.partition_rows(place, audit, load, {})]
    if table == "indexes":
        return [asdict(r) for r in published_rows.index_rows(place, audit)]
    if table == "findings":
        return [asdict(r) for r in published_rows.finding_rows(place, audit)]
    (broker,) = report["brokers"]
    where = {
        "input": index,
        "log_dir": broker["log_dir"],
        "broker_id": broker["broker_id"],
        "cluster_id": broker.get("cluster_id"),
    }
    rows = []
    for g in report["groups"]:
        head = {**where, **g, "members": len(g["members"])}
        offsets = [(o, False) for o in g["offsets"]]
        offsets += [(o, True) for o in g["pending_transactional_offsets"]]
        for offset, pending in offsets or [({}, None)]:
            rows.append({**head, "topic": None, "partition": None, **offset, "pending": pending})
    return rows


@pytest.mark.parametrize(
    "index", range(len(LOG_DIRS)), ids=["/".join(d.parts[-4:-1]) for d in LOG_DIRS]
)
def test_each_log_dir_reads_as_audit_reads_it(everything: ScanResult, index: int) -> None:
    """The scan's report of each log dir is audit's, and so are its published rows."""
    scanned = everything.reports[index]
    assert scanned["brokers"][0]["log_dir"] == str(LOG_DIRS[index])
    assert_read_as_audit_reads_it(everything, index, LOG_DIRS[index])


def assert_read_as_audit_reads_it(result: ScanResult, index: int, log_dir: Path) -> None:
    """Input ``index`` of the scan (``log_dir``): its report and published rows are audit's."""
    expected, audit = audited(log_dir)
    assert without_across(result.reports[index]) == without_across(expected)
    for table in ("partitions", "groups", "indexes", "findings"):
        rows = [
            r
            for r in pq.read_table(result.run_dir / f"{table}.parquet").to_pylist()
            if r["input"] == index and r.get("kind") not in ACROSS_LOG_DIRS
        ]
        columns = [c for c, _ in published.TABLES[table] if not c.startswith("unknown_record")]
        wanted = [
            {c: _parquet(r.get(c)) for c in columns}
            for r in expected_rows(table, index, expected, audit)
            if r.get("kind") not in ACROSS_LOG_DIRS
        ]
        assert [{c: r[c] for c in columns} for r in rows] == wanted, table


def _parquet(value: Any) -> Any:
    """A value as it reads back from Parquet (surrogate-escaped names come back escaped)."""
    if isinstance(value, str):
        return value.encode("utf-8", "backslashreplace").decode("utf-8")
    if isinstance(value, tuple):  # list<int64> columns read back as lists
        return list(value)
    return value


def test_the_run_is_published_whole(everything: ScanResult) -> None:
    run = everything.run_dir
    assert publish.read_latest(run.parent.parent) == everything.run_id
    manifest = json.loads((run / published.MANIFEST).read_text())
    assert manifest["schema_version"] == published.SCHEMA_VERSION
    assert [i["log_dir"] for i in manifest["inputs"]] == [str(d) for d in LOG_DIRS]
    versions = {
        Path(i["log_dir"]).parts[-3]: i["kafka_version"]["range"] for i in manifest["inputs"]
    }
    assert versions["kafka-0.9.0.1"][0] == "0.9.0.0"
    assert versions["kafka-2.3.0"][0] >= "2.0.0"
    tables = {name: pq.read_table(run / f"{name}.parquet") for name in published.TABLES}
    for name, table in tables.items():
        assert table.column_names == [c for c, _ in published.TABLES[name]], name
    partitions = tables["partitions"].to_pylist()
    reports = everything.reports
    assert len(partitions) == sum(len(r["partitions"]) for r in reports)
    assert manifest["counts"]["partitions"] == len(partitions)
    segments = tables["segments"].to_pylist()
    assert manifest["counts"]["segments"] == len(segments)
    assert sum(s["size_bytes"] for s in segments) == sum(p["size_bytes"] for p in partitions)
    groups = tables["groups"].to_pylist()
    # the run's groups: distinct ids per cluster (the service's count); each broker's: its own
    assert manifest["counts"]["groups"] == len({(g["cluster_id"], g["group"]) for g in groups})
    assert sum(b["groups"] for b in tables["brokers"].to_pylist()) == len(
        {(g["input"], g["group"]) for g in groups}
    )
    assert not (run.parent.parent / published.STAGING / everything.run_id).exists()


def test_the_cleaner_died_broker(spark: Any, tmp_path: Path) -> None:
    """The production failure: the published rows carry Kafka 0.9.0.1's own message, the
    blocked partition behind it, and the buffer that fixes it."""
    log_dir = FIXTURES / "kafka-0.9.0.1/cleaner-died/kafka-logs"
    config = (log_dir.parent / "broker-server.properties").read_text()
    properties = tuple(parse_java_properties(config))
    result = run_scan(
        spark,
        ScanOptions(log_dirs=(log_dir,), out=tmp_path, properties=properties, now_ms=NOW_MS),
    )
    assert without_across(result.reports[0]) == without_across(audit_report(log_dir, properties))
    rows = {
        r["partition"]: r for r in pq.read_table(result.run_dir / "partitions.parquet").to_pylist()
    }
    assert rows[2]["outcome"] == "thread-death"
    assert rows[2]["message"] == (
        "requirement failed: 61680 messages in segment"
        " __consumer_offsets-2/00000000000000000000.log but offset map can fit only 39321."
        " You can increase log.cleaner.dedupe.buffer.size or decrease log.cleaner.threads"
    )
    assert rows[2]["needed_entries"] == 61680 and rows[2]["capacity"] == 39321
    assert rows[3]["outcome"] == "blocked" and rows[3]["never_compacted"]
    (broker,) = pq.read_table(result.run_dir / "brokers.parquet").to_pylist()
    assert broker["recommended_dedupe_buffer_size"] == 1_644_816
    assert broker["kafka_version"] == "0.9.0.1" and not broker["kafka_version_given"]
    findings = pq.read_table(result.run_dir / "findings.parquet").to_pylist()
    assert {"cleaner-thread-death", "cleaner-blocked"} <= {f["kind"] for f in findings}
    assert result.manifest["exit_status"] == 2
    # and what the broker's own cleaner log (found beside the log dir) says: the death it
    # predicts happened, at that line of the log, and the emulation agrees with it
    log = log_dir.parent / "log-cleaner.log"
    (died,) = [f for f in findings if f["kind"] == "cleaner-thread-died"]
    assert (died["file"], died["partition"]) == (str(log), "__consumer_offsets-2")
    assert log.read_bytes()[died["position"] :].startswith(b"[2026-11-21 08:25:35,716] ERROR")
    assert (broker["cleaner_threads_alive"], broker["cleaner_threads_dead"]) == (0, 1)
    assert json.loads(broker["cleaner_log_files_json"]) == [str(log)]
    assert rows[2]["last_cleaning_end"] == "thread-died"
    assert rows[2]["prediction_agreement"] == "agrees"
    assert rows[3]["cleanings_in_log"] == 0 and rows[3]["last_cleaning_began_ms"] is None
    (cleaning,) = pq.read_table(result.run_dir / "cleanings.parquet").to_pylist()
    assert (cleaning["partition"], cleaning["end"], cleaning["file"]) == (
        2,
        "thread-died",
        str(log),
    )
    # Kafka's line whole, the exception's class with the message the emulation predicts
    assert cleaning["failure"] == f"java.lang.IllegalArgumentException: {rows[2]['message']}"


def test_a_rescan_reuses_what_did_not_change(spark: Any, tmp_path: Path) -> None:
    """Segments whose fingerprint did not change are reused (a no-change rescan reads
    nothing); a segment the cleaner replaced, or an active segment the broker appended to, is
    read again; the verdicts do not change."""
    log_dir = tmp_path / "kafka-logs"
    shutil.copytree(FIXTURES / "kafka-2.3.0/multi-pass/kafka-logs", log_dir)
    out = tmp_path / "results"
    first = run_scan(spark, ScanOptions(log_dirs=(log_dir,), out=out, now_ms=NOW_MS))
    segments = pq.read_table(first.run_dir / "segments.parquet").to_pylist()
    rolled = [s for s in segments if not s["active"]]
    assert rolled and first.manifest["reuse"]["segments_reused"] == 0

    second = run_scan(spark, ScanOptions(log_dirs=(log_dir,), out=out, now_ms=NOW_MS))
    assert second.manifest["reuse"]["segments_reused"] == len(segments)
    assert second.manifest["reuse"]["segments_read"] == 0
    assert without_across(second.reports[0]) == without_across(first.reports[0])

    # the cleaner swaps in a new file under the same name (written now: another mtime), read
    # again; the same bytes give the same verdicts
    victim = next(s for s in rolled if s["size_bytes"] > 0)
    path = log_dir / f"__consumer_offsets-{victim['partition']}" / victim["file"]
    shutil.copyfile(path, path.with_suffix(".cleaned"))
    later = path.stat().st_mtime + 5
    os.utime(path.with_suffix(".cleaned"), (later, later))
    os.replace(path.with_suffix(".cleaned"), path)
    third = run_scan(spark, ScanOptions(log_dirs=(log_dir,), out=out, now_ms=NOW_MS))
    reread = [
        s for s in pq.read_table(third.run_dir / "segments.parquet").to_pylist() if not s["reused"]
    ]
    assert third.manifest["reuse"]["segments_reused"] == len(segments) - 1
    assert {(s["partition"], s["file"]) for s in reread} == {(victim["partition"], victim["file"])}

    # the broker appends to an active segment: it is read again, as listed
    active = next(s for s in segments if s["active"] and s["size_bytes"] > 0)
    path = log_dir / f"__consumer_offsets-{active['partition']}" / active["file"]
    os.utime(path, (path.stat().st_mtime + 5,) * 2)
    fourth = run_scan(spark, ScanOptions(log_dirs=(log_dir,), out=out, now_ms=NOW_MS))
    assert fourth.manifest["reuse"]["segments_read"] == 1
    assert without_across(third.reports[0]) == without_across(first.reports[0])
    assert len(publish.list_runs(out)) == 4


def test_an_unchanged_rescan_publishes_the_latest_run_again(
    spark: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Nothing under the log dir changed and no outcome reads the clock: the next scan
    republishes the latest run, without Spark, with the same tables and reports (every segment
    reused); once a file changes, it scans again."""
    from spark_jobs.cli import print_summary

    log_dir = tmp_path / "kafka-logs"
    shutil.copytree(FIXTURES / "kafka-0.9.0.1/cleaner-died/kafka-logs", log_dir)
    out = tmp_path / "results"
    options = ScanOptions(log_dirs=(log_dir,), out=out)  # the clock moves between the scans
    first = run_scan(spark, options)
    assert first.manifest["reuse"]["reads_clock"] is False
    assert first.manifest["reuse"]["run_reused"] is None
    print_summary(first, 1.0)
    scanned = capsys.readouterr().out

    second = republish_unchanged(options, start(options))
    assert second is not None and second.run_id > first.run_id
    assert publish.read_latest(out) == second.run_id
    reuse = second.manifest["reuse"]
    assert reuse["run_reused"] == first.run_id and reuse["segments_read"] == 0
    assert reuse["segments_reused"] == first.manifest["counts"]["segments"] > 0
    for name in published.TABLES:
        before = pq.read_table(first.run_dir / f"{name}.parquet")
        after = pq.read_table(second.run_dir / f"{name}.parquet")
        if name == "segments":
            assert after.column("reused").to_pylist() == [True] * before.num_rows
            before, after = before.drop_columns("reused"), after.drop_columns("reused")
        assert after.equals(before), name
    assert second.reports == first.reports
    print_summary(second, 1.0)
    republished = capsys.readouterr().out
    assert f"nothing changed since run {first.run_id}: published again" in republished
    # the same summary, from the same tables (the first line counts reuse, the last names the run)
    assert republished.splitlines()[2:-1] == scanned.splitlines()[1:-1]

    # the broker rewrites a checkpoint file (same content, a new file): scanned again
    checkpoint = log_dir / "recovery-point-offset-checkpoint"
    shutil.copyfile(checkpoint, checkpoint.with_suffix(".tmp"))
    os.replace(checkpoint.with_suffix(".tmp"), checkpoint)
    assert republish_unchanged(options, start(options)) is None
    third = run_scan(spark, options)
    assert third.manifest["reuse"]["run_reused"] is None
    assert third.manifest["reuse"]["segments_reused"] == reuse["segments_reused"]  # the cache

    # the broker's cleaner log appears beside the log dir, then grows: scanned again each time
    assert third.reports[0]["brokers"][0]["cleaner_log"] is None
    cleaner_log = tmp_path / "log-cleaner.log"
    shutil.copyfile(FIXTURES / "kafka-0.9.0.1/cleaner-died/log-cleaner.log", cleaner_log)
    assert republish_unchanged(options, start(options)) is None
    fourth = run_scan(spark, options)
    assert fourth.reports[0]["brokers"][0]["cleaner_log"]["threads_dead"] == 1
    assert republish_unchanged(options, start(options)) is not None
    with cleaner_log.open("a") as grown:
        grown.write(
            "[2026-11-21 08:30:00,000] INFO Starting the log cleaner (kafka.log.LogCleaner)\n"
        )
    assert republish_unchanged(options, start(options)) is None


def test_a_rescan_at_another_time_scans_again_when_an_outcome_reads_the_clock(
    spark: Any, tmp_path: Path
) -> None:
    """An open transaction's age is reported (and a compaction lag would select by time): the
    run is republished only for the same time of audit."""
    log_dir = FIXTURES / "kafka-2.3.0/transactions/kafka-logs"
    out = tmp_path / "results"
    first = run_scan(spark, ScanOptions(log_dirs=(log_dir,), out=out, now_ms=NOW_MS))
    assert first.manifest["reuse"]["reads_clock"] is True
    same = ScanOptions(log_dirs=(log_dir,), out=out, now_ms=NOW_MS)
    assert republish_unchanged(same, start(same)) is not None
    later = ScanOptions(log_dirs=(log_dir,), out=out, now_ms=NOW_MS + 3_600_000)
    assert republish_unchanged(later, start(later)) is None
    other = ScanOptions(log_dirs=(log_dir,), out=out, now_ms=NOW_MS, with_groups=False)
    assert republish_unchanged(other, start(other)) is None  # other options, other results


def test_keep_removes_older_runs_after_publishing(spark: Any, tmp_path: Path) -> None:
    log_dir = FIXTURES / "kafka-2.3.0/small-gzip/kafka-logs"
    ids = [
        run_scan(
            spark, ScanOptions(log_dirs=(log_dir,), out=tmp_path, keep=2, now_ms=NOW_MS)
        ).run_id
        for _ in range(3)
    ]
    assert sorted(publish.list_runs(tmp_path)) == sorted(ids[1:])
    assert publish.read_latest(tmp_path) == ids[2]


def test_a_segment_swapped_while_read_is_listed_again(
    spark: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Between the listing and the executor's read, the cleaner replaces a segment (a new
    inode under the same name): the executor refuses the file, the driver lists the partition
    again, and the result is the audit of what is there, with a changed-while-read note."""
    import spark_jobs.job as scan

    log_dir = tmp_path / "kafka-logs"
    shutil.copytree(FIXTURES / "kafka-2.3.0/transactions/kafka-logs", log_dir)
    listed = scan.list_partition
    swapped: list[str] = []

    def list_then_swap(source: Any, partition: Any, code: str, read: Any) -> Any:
        work = listed(source, partition, code, read)
        if not swapped and len(work.tasks) > 1:
            path = work.tasks[0].path
            shutil.copy2(path, path.with_suffix(".swap"))
            os.replace(path.with_suffix(".swap"), path)
            swapped.append(work.partition.name)
        return work

    monkeypatch.setattr(scan, "list_partition", list_then_swap)
    result = run_scan(spark, ScanOptions(log_dirs=(log_dir,), out=tmp_path / "out", now_ms=NOW_MS))
    assert swapped
    notes = [f for f in result.reports[0]["findings"] if f["kind"] == "changed-while-read"]
    assert [n["partition"] for n in notes] == swapped
    assert "2 times" in notes[0]["detail"]
    monkeypatch.undo()
    expected = without_across(audit_report(log_dir))
    got = without_across(result.reports[0])
    got["findings"] = [f for f in got["findings"] if f["kind"] != "changed-while-read"]
    assert got == expected


def test_the_same_broker_id_twice_stays_apart(everything: ScanResult) -> None:
    """The fixtures are all broker 0: each log dir keeps its rows, and each is warned."""
    duplicate = [
        i
        for i, r in enumerate(everything.reports)
        if any(f["kind"] == "duplicate-broker-id" for f in r["findings"])
    ]
    by_cluster: dict[Any, int] = {}
    for r in everything.reports:
        key = r["brokers"][0]["cluster_id"]
        by_cluster[key] = by_cluster.get(key, 0) + 1
    expected = [
        i for i, r in enumerate(everything.reports) if by_cluster[r["brokers"][0]["cluster_id"]] > 1
    ]
    assert duplicate == expected and duplicate
    partitions = pq.read_table(everything.run_dir / "partitions.parquet").to_pylist()
    assert {p["log_dir"] for p in partitions} == {str(d) for d in LOG_DIRS}


#: log dirs with one config to emulate and with several, multi-pass and transactional
EMULATED_APART = tuple(
    FIXTURES / f"{d}/kafka-logs"
    for d in ("kafka-0.9.0.1/cleaner-died", "kafka-2.3.0/multi-pass", "kafka-2.3.0/transactions")
)


def test_a_partitions_emulations_run_as_tasks_of_their_own(
    spark: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every partition with several groups of configs to emulate is folded by one task and
    emulated at each group by a task of its own (as a big one is); the reports are audit's all
    the same."""
    from offsets_auditor.audit.shared_emulations import config_groups
    from spark_jobs import job

    log_dirs = EMULATED_APART
    apart: list[tuple[int, str]] = []
    original = job._emulate_apart

    def counting(spark: Any, context: Any, folded: Any) -> Any:
        apart.extend((r["input"], r["partition"]) for r in folded)
        emulated = original(spark, context, folded)
        assert all(
            len(found) == len(context.plans[key[0]].configs) for key, found in emulated.items()
        )
        return emulated

    monkeypatch.setattr(job, "_emulate_apart", counting)
    options = ScanOptions(log_dirs=log_dirs, out=tmp_path, now_ms=NOW_MS)
    result = run_scan(spark, replace(options, emulations_apart_records=0))
    for index, log_dir in enumerate(log_dirs):
        plan = plan_audit([log_dir], AuditSettings(), NOW_MS)
        partitions = {p["name"] for p in result.reports[index]["partitions"]}
        if len(config_groups(plan.configs)) > 1:
            assert {p for i, p in apart if i == index} == partitions, log_dir
        assert without_across(result.reports[index]) == without_across(audit_report(log_dir))
    assert apart, "a log dir with several configs to emulate"
    assert not list((tmp_path / published.STAGING).glob("*.folds"))


def test_a_group_of_configs_is_emulated_once_where_the_partition_cannot_tell_them_apart(
    spark: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A range 2.1.0 to 3.x (widened here: the fixtures' files tell their versions) is
    emulated in two groups of configs (``audit.shared_emulations``), a Spark task each; each
    config gets what its own emulation gives, where the watched facts mattered (a corrupt
    segment's unread tail is an offset gap) and where they did not."""
    from offsets_auditor.audit.partition import emulate_partition
    from offsets_auditor.audit.shared_emulations import config_groups
    from offsets_auditor.cleaner.config import cleaner_config
    from offsets_auditor.logdir.model import offsets_partitions, read_log_dir
    from offsets_auditor.version_detection.spans import Span
    from offsets_auditor.versions import KafkaVersion
    from spark_jobs import job
    from tests.support.emulations import verdict_facts

    versions = ("2.1.0", "2.3.0", "2.4.0", "2.4.1", "3.0.0")
    configs = [cleaner_config([], {}, v) for v in versions]
    assert config_groups(configs) == [(0,), (1, 2, 3, 4)]

    def widened(*args: Any, **kwargs: Any) -> Any:
        plan = plan_audit(*args, **kwargs)
        stretches = tuple(
            (Span(KafkaVersion.parse(v), KafkaVersion.parse(v)), c)
            for v, c in zip(versions, configs, strict=True)
        )
        return replace(plan, config=configs[0], cleaner_stretches=stretches)

    found: dict[tuple[int, str], list[Any]] = {}
    original = job._emulate_apart

    def recording(spark: Any, context: Any, folded: Any) -> Any:
        emulated = original(spark, context, folded)
        found.update(emulated)
        return emulated

    monkeypatch.setattr(job, "plan_audit", widened)
    monkeypatch.setattr(job, "_emulate_apart", recording)
    log_dirs = tuple(
        FIXTURES / f"kafka-2.3.0/{d}/kafka-logs" for d in ("multi-pass", "corrupt-segments")
    )
    options = ScanOptions(log_dirs=log_dirs, out=tmp_path, now_ms=NOW_MS)
    run_scan(spark, replace(options, emulations_apart_records=0))
    mattered = set()
    for index, log_dir in enumerate(log_dirs):
        for partition in offsets_partitions(read_log_dir(log_dir)):
            own = [emulate_partition(partition, c, NOW_MS) for c in configs]
            got = found[(index, partition.name)]
            assert [verdict_facts(e) for e in got] == [verdict_facts(e) for e in own], partition
            mattered.add(bool(own[1] is not None and own[1].facts_that_mattered))
    assert mattered == {True, False}


def test_a_big_partitions_groups_are_replayed_beside_its_fold(
    spark: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A partition, from ``fold_apart_bytes`` on, is folded by two tasks at once (the cleaner's
    facts, the groups' replay) that the driver joins into the fold one task makes, whether it
    has one config to emulate or several; the reports and every published row are audit's all
    the same."""
    from spark_jobs import job
    from spark_jobs.tasks import GROUPS, SCAN

    log_dirs = tuple(
        FIXTURES / f"kafka-2.3.0/{d}/kafka-logs"
        for d in ("multi-pass", "transactions", "corrupt-segments")
    )
    roles: dict[tuple[int, str], set[int]] = {}
    folds: dict[tuple[int, str], Any] = {}
    original = job._joined

    def recording(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
        for row in rows:
            roles.setdefault((row["input"], row["partition"]), set()).add(row["role"])
        joined = original(rows)
        folds.update({(r["input"], r["partition"]): r["folded"] for r in joined})
        return joined

    monkeypatch.setattr(job, "_joined", recording)
    options = ScanOptions(
        log_dirs=log_dirs, out=tmp_path / "whole", now_ms=NOW_MS, emulations_apart_records=0
    )
    run_scan(spark, options)
    whole, folds = folds, {}
    assert not any(len(seen) > 1 for seen in roles.values())
    roles.clear()
    result = run_scan(spark, replace(options, out=tmp_path / "split", fold_apart_bytes=0))
    several_configs = set()
    for index, log_dir in enumerate(log_dirs):
        plan = plan_audit([log_dir], AuditSettings(), NOW_MS)
        several_configs.add(len(plan.configs) > 1)
        with_bytes = {p["name"] for p in result.reports[index]["partitions"] if p["size_bytes"]}
        split = {p for (i, p), seen in roles.items() if i == index and seen == {SCAN, GROUPS}}
        assert split == with_bytes, log_dir
        for name in split:
            joined, one = folds[(index, name)], whole[(index, name)]
            assert joined.replay is not None and joined.replay.records > 0
            if one is None:  # one config: one task folded and emulated it (no fold to compare)
                continue
            assert _comparable(joined.replay) == _comparable(one.replay), name
            assert _segments(joined.scan) == _segments(one.scan), name
            assert joined.scan.records == one.scan.records, name
        assert_read_as_audit_reads_it(result, index, log_dir)
    assert any(len(seen) == 2 for seen in roles.values()), "a partition folded by two tasks"
    assert several_configs == {True, False}, "log dirs with one config and with several"


def test_a_big_partitions_emulation_spreads_over_the_executors_cores(
    spark: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every partition taken for big, and two cores for each emulation, where it is folded
    (one config) and in a task of its own (several): its independent parts forked
    (``cleaner.cores``) give audit's reports and rows all the same."""
    from spark_jobs import job

    cores: list[int] = []

    def two(sc: Any, tasks: int) -> int:
        cores.append(tasks)
        return 2

    monkeypatch.setattr(job, "_emulation_cores", two)
    log_dirs = EMULATED_APART
    options = ScanOptions(log_dirs=log_dirs, out=tmp_path, now_ms=NOW_MS)
    result = run_scan(spark, replace(options, emulations_apart_records=0))
    for index, log_dir in enumerate(log_dirs):
        assert_read_as_audit_reads_it(result, index, log_dir)
    assert cores[0] == 1 and len(cores) == 2, "folds, then emulations apart"


def test_each_fold_of_stage_b_is_a_task_of_its_own_the_largest_first(spark: Any) -> None:
    """Stage B's folds (a partition's, or a split partition's two roles) each in a Spark
    partition of its own, so that they run on as many cores as there are: grouped by a
    DataFrame, Spark's adaptive execution coalesced the small shuffle of stage A's rows into one
    task, and one core folded every partition in turn."""
    from spark_jobs.job import fold_order, one_task_per_fold
    from spark_jobs.tasks import GROUPS, SCAN, WHOLE

    sizes = {(0, "p-0"): 10, (0, "p-1"): 900, (1, "p-0"): 50, (1, "p-1"): 50}
    order = fold_order(sizes, frozenset({(0, "p-1")}))
    assert sorted(order.values()) == list(range(5))
    assert {order[(0, "p-1", SCAN)], order[(0, "p-1", GROUPS)]} == {0, 1}
    assert order[(0, "p-0", WHOLE)] == 4
    assert {order[(1, "p-0", WHOLE)], order[(1, "p-1", WHOLE)]} == {2, 3}
    rows = [
        {"input": i, "partition": name, "role": role, "position": position}
        for (i, name, role) in order
        for position in range(3)
    ]
    placed = one_task_per_fold(spark.parallelize(rows, 2), order).glom().collect()
    assert len(placed) == len(order)
    for place, keyed in enumerate(placed):
        folds = {(row["input"], row["partition"], row["role"]) for _, row in keyed}
        assert len(keyed) == 3 and [order[fold] for fold in folds] == [place]


def _comparable(replay: Any) -> Any:
    """A replay whose located errors compare by what they say (exceptions compare by
    identity)."""

    def said(errors: tuple[Any, ...]) -> list[tuple[str, str, Any, Any]]:
        return [(type(e).__name__, str(e), e.position, e.file) for e in errors]

    bare = replace(replay, problems=(), record_problems=())
    return bare, said(replay.problems), said(replay.record_problems)


def _segments(scan: Any) -> list[tuple[int, int, int, int, int]]:
    return [(s.base_offset, s.next_offset, s.size, s.records, s.batches) for s in scan.segments]
