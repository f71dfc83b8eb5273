"""Each broker's evidence about the offsets topic, as the audit reports it and the scan publishes
it (``brokers.offsets_partitions_held``, ``offsets_topic_num_partitions`` and its origin, the KRaft
metadata its log dir holds): what the service decides the cluster's partition count and
coordinators from. On the real 2.3.0 cluster's log dirs (each broker holds 4 of the 6 offsets
partitions)."""

from __future__ import annotations

import json
import shutil
from dataclasses import asdict
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from api.results import read_table
from offsets_auditor import published
from offsets_auditor.audit import rows
from offsets_auditor.audit.plan import AuditSettings, plan_audit
from offsets_auditor.audit.report import report_json
from offsets_auditor.audit.stages import audit_log_dir
from offsets_auditor.logdir.meta_properties import parse_java_properties
from tests.cluster.test_kraft_metadata import OFFSETS_ID, offsets_topic, partition_change, write_log

CLUSTER = Path(__file__).parent.parent / "fixtures" / "kafka-2.3.0" / "cluster"
HELD = {0: [0, 1, 4, 5], 1: [1, 2, 3, 5], 2: [0, 2, 3, 4]}


def _report(log_dir: Path, properties: list[tuple[str, str]], overrides=()) -> dict:
    return _audited(log_dir, properties, overrides)[0]


def _audited(
    log_dir: Path, properties: list[tuple[str, str]], overrides=()
) -> tuple[dict, dict[str, Any]]:
    """The log dir's report and its brokers row, as the scan publishes it."""
    settings = AuditSettings(properties=tuple(properties), overrides=tuple(overrides))
    plan = plan_audit([log_dir], settings, 1_800_000_000_000)
    audit = audit_log_dir(log_dir, plan)
    report = report_json([audit], detection=plan.detection, emulated=plan.emulated_versions)
    row = rows.broker_row(rows.where(0, audit), audit, plan.detection, None)
    return report, asdict(row)


def _config(broker: int) -> list[tuple[str, str]]:
    return parse_java_properties((CLUSTER / f"broker-{broker}" / "server.properties").read_text())


@pytest.mark.parametrize("broker", [0, 1, 2])
def test_each_broker_reports_what_it_holds_and_its_config(broker: int) -> None:
    log_dir = CLUSTER / f"broker-{broker}" / "kafka-logs"
    topic = _report(log_dir, _config(broker))["brokers"][0]["offsets_topic"]
    assert topic == {
        "partitions_held": HELD[broker],
        "num_partitions": 6,
        "num_partitions_origin": "set",
        "kraft_metadata": None,
    }


def test_where_the_count_comes_from() -> None:
    log_dir = CLUSTER / "broker-0" / "kafka-logs"
    config = [kv for kv in _config(0) if kv[0] != "offsets.topic.num.partitions"]
    default = _report(log_dir, config)["brokers"][0]["offsets_topic"]
    assert (default["num_partitions"], default["num_partitions_origin"]) == (50, "default")
    unknown = _report(log_dir, [])["brokers"][0]["offsets_topic"]
    assert (unknown["num_partitions"], unknown["num_partitions_origin"]) == (None, "unknown")
    given = _report(log_dir, [], [("offsets.topic.num.partitions", "6")])
    assert given["brokers"][0]["offsets_topic"]["num_partitions_origin"] == "set"


def test_a_kraft_metadata_log_in_the_log_dir_is_replayed(tmp_path: Path) -> None:
    """A log dir holding ``__cluster_metadata-0`` (a KRaft broker or combined node): the
    offsets topic as its records state it, in the report and the published row."""
    log_dir = tmp_path / "kafka-logs"
    shutil.copytree(CLUSTER / "broker-0" / "kafka-logs", log_dir)
    write_log(
        log_dir / "__cluster_metadata-0",
        "00000000000000000000.log",
        [(0, offsets_topic(6)), (7, [partition_change(4, OFFSETS_ID, leader=2, isr=[2])])],
    )
    report, row = _audited(log_dir, _config(0))
    kraft = report["brokers"][0]["offsets_topic"]["kraft_metadata"]
    assert kraft["exists"] and kraft["read_to"] == 8 and kraft["snapshot"] is None
    assert [p["partition"] for p in kraft["partitions"]] == list(range(6))
    assert kraft["partitions"][4] == {
        "partition": 4,
        "leader": 2,
        "replicas": [1, 2],
        "isr": [2],
        "leader_epoch": 1,
    }
    # the metadata dir is no offsets partition
    assert report["brokers"][0]["offsets_topic"]["partitions_held"] == HELD[0]
    assert row["offsets_partitions_held"] == tuple(HELD[0])
    assert row["kraft_metadata_read_to"] == 8
    assert json.loads(row["kraft_offsets_topic_json"]) == kraft


def test_the_rows_carry_the_evidence() -> None:
    _, row = _audited(CLUSTER / "broker-2" / "kafka-logs", _config(2))
    assert row["offsets_partitions_held"] == tuple(HELD[2])
    assert row["offsets_topic_num_partitions"] == 6
    assert row["offsets_topic_num_partitions_origin"] == "set"
    assert row["kraft_metadata_read_to"] is None and row["kraft_offsets_topic_json"] is None
    assert set(row) == {c for c, _ in published.TABLES["brokers"]}


def test_a_run_published_before_the_columns_reads_them_as_null(tmp_path: Path) -> None:
    """The service reads runs of scans not yet upgraded: the added columns are null there, any
    other missing column is still an unreadable run."""
    run = tmp_path / "run"
    run.mkdir()
    columns = {c: pa.array([None], _type(t)) for c, t in published.TABLES["brokers"]}
    old = {c: v for c, v in columns.items() if c not in published.ADDED_COLUMNS["brokers"]}
    pq.write_table(pa.table(old), run / "brokers.parquet")
    table = read_table(run, "brokers")
    assert table.column_names == [c for c, _ in published.TABLES["brokers"]]
    assert table["offsets_partitions_held"].to_pylist() == [None]
    del old["log_dir"]
    pq.write_table(pa.table(old), run / "brokers.parquet")
    with pytest.raises(Exception, match="log_dir"):
        read_table(run, "brokers")


def _type(kind: str) -> pa.DataType:
    return {
        "int64": pa.int64(),
        "float64": pa.float64(),
        "bool": pa.bool_(),
        "string": pa.string(),
        "list<int64>": pa.list_(pa.int64()),
    }[kind]
