"""The service on a run published by the real scan of real broker fixtures, through the real
server (uvicorn on loopback): content, not only status codes."""

from __future__ import annotations

import json
import re
import subprocess
from datetime import UTC, datetime
from pathlib import Path
from urllib.parse import quote

import pytest
from prometheus_client.parser import text_string_to_metric_families

from offsets_auditor.coordinator import coordinator_partition, java_string_hash
from tests.conftest import FIXTURES
from tests.support.service import SECOND_CLUSTER, LiveServer, Published

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parent.parent.parent


def _log_dir(name: str, published: Published) -> str:
    (found,) = [str(d) for d in published.log_dirs if name in str(d)]
    return found


def _one(answer: dict) -> dict:
    """The answer of the one cluster asked (``?cluster=``)."""
    (cluster,) = answer["clusters"]
    return cluster


def test_usercenter_with_4_partitions_is_coordinated_by_partition_0(
    live_server: LiveServer, published_run: Published
) -> None:
    assert coordinator_partition("usercenter", 4) == 0
    a = live_server.json("/groups/usercenter/coordinator-partition?cluster=")
    c = _one(a)
    assert (a["group"], c["partition"], c["partitions"]) == ("usercenter", 0, 4)
    assert a["in_run"] is True
    # the four log dirs hold every partition 0-3 between them and their config says 4
    assert c["partitions_source"] == "partition-dirs" and not c["partitions_uncertain"]
    assert "4 partitions: the scanned brokers hold every partition 0..3" in c["reasons"][0]
    # no live cluster, no KRaft log: the leader is not on a ZooKeeper cluster's disks
    assert c["coordinator"] is None and c["loading"] is None and c["live"] is None
    assert c["uncertain"]
    assert any("the leader is unknown" in r for r in c["reasons"])
    # the four log dirs without a cluster.id all hold __consumer_offsets-0
    assert sorted(r["log_dir"] for r in c["replicas"]) == sorted(
        str(d) for d in published_run.log_dirs[:4]
    )
    died = next(r for r in c["replicas"] if "cleaner-died" in r["log_dir"])
    assert died["size_bytes"] == 222428 and died["verdict"] == "nothing-to-clean"
    assert died["leader"] is None and died["data_age_seconds"] >= 0
    # the largest replica's estimate, since the leader is unknown
    assert c["load_estimate_seconds"] == max(r["load_estimate_seconds"] for r in c["replicas"])


def test_a_run_of_two_clusters_answers_per_cluster(live_server: LiveServer) -> None:
    a = live_server.json("/groups/usercenter/coordinator-partition")
    assert set(a) == {"run_id", "group", "java_hash_code", "in_run", "clusters"}
    by_cluster = {c["cluster_id"]: c for c in a["clusters"]}
    assert set(by_cluster) == {"", SECOND_CLUSTER}
    b = by_cluster[SECOND_CLUSTER]
    assert (b["partition"], b["partitions"]) == (0, 4)
    assert [x["broker_id"] for x in b["replicas"]] == [1]
    only_b = live_server.json(f"/groups/usercenter/coordinator-partition?cluster={SECOND_CLUSTER}")
    assert [c["cluster_id"] for c in only_b["clusters"]] == [SECOND_CLUSTER]
    assert _one(only_b)["partition"] == 0
    code, _, body = live_server.get("/groups/usercenter/coordinator-partition?cluster=nope")
    assert code == 404 and b"cluster 'nope' is not in run" in body


def test_the_lookup_says_each_thing_once(live_server: LiveServer) -> None:
    """Issue 21: the lookup repeated brokers and health inside clusters (8.6 KB)."""
    code, _, body = live_server.get("/groups/usercenter/coordinator-partition")
    a = json.loads(body)
    assert code == 200 and len(a["clusters"]) == 2
    for c in a["clusters"]:
        assert "brokers" not in c and "health" not in c
    assert len(body) < 8000, len(body)


def test_hashcode_min_value_maps_to_partition_0(live_server: LiveServer) -> None:
    # "polygenelubricants".hashCode() == Integer.MIN_VALUE; Utils.abs maps it to 0, not to
    # MIN_VALUE % n (which Java would make negative)
    assert java_string_hash("polygenelubricants") == -(2**31)
    a = live_server.json("/groups/polygenelubricants/coordinator-partition")
    assert a["java_hash_code"] == -(2**31)
    assert [c["partition"] for c in a["clusters"]] == [0, 0]
    assert a["in_run"] is False  # absent from the data, answered all the same


@pytest.mark.parametrize(
    "group",
    [
        "a/b",
        "/",
        "100%",
        "%2F",
        "with space",
        "tab\tand?query#frag",
        "grp-\U0001f600-non-bmp",
        "\u00e9t\u00e9",
        "coordinator-partition",
        "..",
        ".",
    ],
)
def test_any_group_id_percent_encoded(live_server: LiveServer, group: str) -> None:
    expected = coordinator_partition(group, 4)
    by_path = live_server.json(f"/groups/{quote(group, safe='')}/coordinator-partition?cluster=")
    by_query = live_server.json(
        f"/group/coordinator-partition?cluster=&group={quote(group, safe='')}"
    )
    assert by_path["group"] == by_query["group"] == group
    assert _one(by_path)["partition"] == _one(by_query)["partition"] == expected
    assert by_path["java_hash_code"] == java_string_hash(group)


def test_the_empty_group_id_in_the_query_form(live_server: LiveServer) -> None:
    a = live_server.json("/group/coordinator-partition?group=&cluster=")
    assert (a["group"], a["java_hash_code"], _one(a)["partition"]) == ("", 0, 0)


def test_a_count_given_by_the_request(live_server: LiveServer) -> None:
    a = _one(live_server.json("/groups/usercenter/coordinator-partition?cluster=&partitions=7"))
    assert (a["partition"], a["partitions"], a["partitions_source"]) == (
        coordinator_partition("usercenter", 7),
        7,
        "request",
    )


def test_group_offsets_and_reset_plan(live_server: LiveServer) -> None:
    g = live_server.json("/groups/g3")
    (copy,) = [c for c in g["copies"] if "cleaner-died" in c["log_dir"]]
    offsets = {(o["topic"], o["partition"]): o["offset"] for o in copy["offsets"]}
    assert offsets[("payments", 0)] == 2998
    assert copy["coordinator_partition"] == coordinator_partition("g3", 4)
    code, headers, body = live_server.get("/groups/g3/reset-offsets.csv")
    assert code == 200 and headers["content-type"].startswith("text/csv")
    source = headers["x-offsets-auditor-source"]
    (chosen,) = [c for c in g["copies"] if c["log_dir"] == source]
    expected = sorted(
        (o["topic"], o["partition"], o["offset"]) for o in chosen["offsets"] if not o["pending"]
    )
    lines = body.decode().splitlines()
    assert lines == [f"{t},{p},{o}" for t, p, o in expected]
    assert all(re.fullmatch(r"[a-zA-Z0-9._-]+,\d+,-?\d+", line) for line in lines)
    assert body.endswith(b"\n") and b"\n\n" not in body
    code, _, body = live_server.get("/groups/no-such-group-here")
    assert code == 404 and b"no offsets or metadata of group" in body


def test_cleaner_died_partition_2_is_thread_death_3_blocked(
    live_server: LiveServer, published_run: Published
) -> None:
    died = _log_dir("cleaner-died", published_run)
    p2 = live_server.json("/partitions/2")
    (replica,) = [r for r in p2["replicas"] if r["log_dir"] == died]
    assert replica["outcome"] == "thread-death"
    assert "61680 messages in segment __consumer_offsets-2" in replica["reason"]
    assert replica["offset_map_headroom_ratio"] == pytest.approx(1 - 61680 / 39321)
    assert any(f["kind"] == "cleaner-thread-death" for f in replica["findings"])
    p3 = live_server.json("/partitions/3")
    (replica,) = [r for r in p3["replicas"] if r["log_dir"] == died]
    assert replica["outcome"] == "blocked"


def _alerts(live_server: LiveServer, name: str) -> list[dict]:
    return [a for a in live_server.json("/alerts") if a["labels"]["alertname"] == name]


def test_alerts(live_server: LiveServer, published_run: Published) -> None:
    died = _log_dir("cleaner-died", published_run)
    (death,) = _alerts(live_server, "OffsetsCleanerThreadDeath")
    assert death["labels"] == {
        "alertname": "OffsetsCleanerThreadDeath",
        "severity": "critical",
        "cluster_id": "",
        "broker_id": "0",
        "log_dir": died,
        "partition": "2",
        "outcome": "thread-death",
    }
    runbook = death["annotations"]["runbook_url"]
    assert runbook == f"{live_server.url}/runbooks/OffsetsCleanerThreadDeath.md"
    code, _, body = live_server.get("/runbooks/OffsetsCleanerThreadDeath.md")
    assert code == 200 and body.startswith(b"# OffsetsCleanerThreadDeath (critical)")
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z", death["startsAt"])
    (blocked,) = _alerts(live_server, "OffsetsPartitionBlocked")
    assert (blocked["labels"]["partition"], blocked["labels"]["log_dir"]) == ("3", died)
    # a multi-pass verdict fires once it held for an hour: this run is the first
    assert _alerts(live_server, "OffsetsCleanerMultiPass") == []
    (hanging,) = _alerts(live_server, "OffsetsHangingTransaction")
    assert hanging["labels"]["partition"] == "2" and "transactions" in hanging["labels"]["log_dir"]
    corrupt = _alerts(live_server, "OffsetsCorruptIndexes")
    assert [a["labels"]["log_dir"] for a in corrupt] == [_log_dir("unclean", published_run)]
    unclean = _alerts(live_server, "OffsetsUncleanShutdown")
    assert [a["labels"]["log_dir"] for a in unclean] == [_log_dir("unclean", published_run)]
    # one run: nothing to compare across runs; fresh, readable, small partitions
    for quiet in (
        "OffsetsCleanerStuck",
        "OffsetsScanStale",
        "OffsetsScanFailing",
        "OffsetsNoScanYet",
        "OffsetsResultsUnreadable",
        "OffsetsPartitionNeverCompacted",
        "OffsetsCoordinatorLoadSlow",
    ):
        assert _alerts(live_server, quiet) == []


def test_thresholds_are_settings(published_run: Published) -> None:
    with LiveServer(
        published_run.results,
        never_compacted_threshold_bytes=5_000_000,
        coordinator_load_threshold_seconds=0.1,
        scan_interval_seconds=0.001,
    ) as server:
        names = [a["labels"]["alertname"] for a in server.json("/alerts")]
        never = [
            a["labels"]["partition"] for a in _alerts(server, "OffsetsPartitionNeverCompacted")
        ]
    assert "OffsetsScanStale" in names
    # never compacted, and LoadSlow, only once they held for their `for`: not on a first run
    assert never == [] and "OffsetsCoordinatorLoadSlow" not in names


def _metrics(live_server: LiveServer) -> dict[str, dict[tuple, float]]:
    code, headers, body = live_server.get("/metrics")
    assert code == 200 and headers["content-type"].startswith("text/plain; version=0.0.4")
    out: dict[str, dict[tuple, float]] = {}
    for family in text_string_to_metric_families(body.decode()):
        for s in family.samples:
            out.setdefault(s.name, {})[tuple(sorted(s.labels.items()))] = s.value
    return out


def _key(row: dict, **extra: str) -> tuple:
    labels = {
        "cluster_id": row["cluster_id"] or "",
        "broker_id": str(row["broker_id"]),
        "log_dir": row["log_dir"],
        **extra,
    }
    if "partition" in row and isinstance(row["partition"], int):
        labels["partition"] = str(row["partition"])
    return tuple(sorted(labels.items()))


def test_metrics_carry_the_runs_numbers(live_server: LiveServer, published_run: Published) -> None:
    import pyarrow.parquet as pq

    m = _metrics(live_server)
    partitions = pq.read_table(published_run.run_dir / "partitions.parquet").to_pylist()
    brokers = pq.read_table(published_run.run_dir / "brokers.parquet").to_pylist()
    assert len(m["offsets_auditor_partition_log_size_bytes"]) == len(partitions) == 20
    for p in partitions:
        k = _key(p)
        assert m["offsets_auditor_partition_log_size_bytes"][k] == p["size_bytes"]
        assert m["offsets_auditor_partition_segments"][k] == p["segment_count"]
        assert m["offsets_auditor_partition_dirty_bytes"][k] == p["cleanable_bytes"]
        assert m["offsets_auditor_partition_reclaimable_bytes"][k] == p["reclaimable_bytes"]
        assert m["offsets_auditor_partition_cleaner_passes"][k] == p["passes"]
        assert m["offsets_auditor_partition_never_compacted"][k] == float(p["never_compacted"])
        assert m["offsets_auditor_partition_coordinator_load_seconds"][k] == pytest.approx(
            p["load_estimate_seconds"]
        )
        checkpoint = m["offsets_auditor_partition_cleaner_checkpoint_offset"].get(k)
        assert checkpoint == p["cleaner_checkpoint"]  # absent when there is none
        verdicts = {
            dict(labels)["outcome"]: v
            for labels, v in m["offsets_auditor_partition_cleaner_verdict"].items()
            if tuple(x for x in labels if x[0] != "outcome") == k
        }
        assert len(verdicts) == 6 and sum(verdicts.values()) == 1
        assert verdicts[p["outcome"]] == 1
    for b in brokers:
        k = _key(b)
        assert m["offsets_auditor_broker_corrupt_index_files"][k] == b["corrupt_index_files"]
        assert m["offsets_auditor_broker_cleaner_threads"][k] == b["cleaner_threads"]
        assert m["offsets_auditor_broker_clean_shutdown"][k] == float(b["clean_shutdown"])
    died = next(p for p in partitions if p["partition"] == 2 and "cleaner-died" in p["log_dir"])
    assert m["offsets_auditor_partition_cleaner_verdict"][_key(died, outcome="thread-death")] == 1
    assert m["offsets_auditor_partition_cleaner_verdict"][_key(died, outcome="blocked")] == 0
    assert m["offsets_auditor_results_loaded"][()] == 1
    assert m["offsets_auditor_results_load_errors_total"][()] == 0
    assert m["offsets_auditor_results_last_load_error"][()] == 0
    (info,) = m["offsets_auditor_publisher_run_info"]
    assert dict(info) == {"run_id": published_run.run_id, "publisher": ""}
    assert m["offsets_auditor_scan_failures"] == {(("publisher", ""),): 0}
    findings = sum(m["offsets_auditor_findings"].values())
    assert findings == pq.read_table(published_run.run_dir / "findings.parquet").num_rows


def test_the_brokers_own_cleaner_logs_as_metrics_and_details(
    live_server: LiveServer, published_run: Published
) -> None:
    """The scan found each fixture's log-cleaner.log beside its log dir: cleaner-died's one
    thread dead (OffsetsCleanerThreadDied), multi-pass's last cleaning of -1 at its banner's
    time (the broker's log in UTC, the default zone), beside the emulation's passes; the copy
    in the second cluster has no log beside it and no such series."""
    m = _metrics(live_server)
    died = _log_dir("cleaner-died", published_run)
    multi = _log_dir("multi-pass", published_run)

    def by_log_dir(name: str, partition: str | None = None) -> dict[str, float]:
        return {
            dict(k)["log_dir"]: v
            for k, v in m[name].items()
            if partition is None or dict(k)["partition"] == partition
        }

    dead = by_log_dir("offsets_auditor_broker_cleaner_threads_dead")
    assert (dead[died], dead[multi]) == (1, 0)
    assert not any(SECOND_CLUSTER in log_dir for log_dir in dead)
    # "[2026-11-21 09:19:14,360] INFO [kafka-log-cleaner-thread-0]: " then "Log cleaner thread 0
    # cleaned log __consumer_offsets-1": the banner of -1's last cleaning
    lines = (FIXTURES / "kafka-2.3.0/multi-pass/log-cleaner.log").read_text().splitlines()
    banner = max(i for i, t in enumerate(lines) if "cleaned log __consumer_offsets-1 " in t)
    stamp = lines[banner - 1][1:24]
    assert stamp == "2026-11-21 09:19:14,360"
    when = datetime.strptime(stamp, "%Y-%m-%d %H:%M:%S,%f").replace(tzinfo=UTC).timestamp()
    last = by_log_dir("offsets_auditor_partition_last_cleaning_timestamp_seconds", "1")
    assert last[multi] == pytest.approx(when)
    assert died not in last  # its only cleaning killed the thread
    marked = m["offsets_auditor_partition_marked_uncleanable"]
    assert {v for k, v in marked.items() if dict(k)["log_dir"] in (died, multi)} == {0}
    assert by_log_dir("offsets_auditor_broker_cleaner_throughput_bytes_per_second")[multi] > 0
    fired = _alerts(live_server, "OffsetsCleanerThreadDied")
    assert {a["labels"]["log_dir"] for a in fired} == {died}
    assert _alerts(live_server, "OffsetsPartitionUncleanable") == []
    # the partition's details: the broker's last cleaning beside the predicted one
    p1 = live_server.json("/partitions/1")
    (replica,) = [r for r in p1["replicas"] if r["log_dir"] == multi]
    real = [(x["start_offset"], x["upper_bound"]) for x in replica["last_cleaning"]["passes"]]
    predicted = [(x["start_offset"], x["upper_bound"]) for x in replica["pass_details"]]
    assert len(real) == 3 and real == predicted
    assert replica["prediction"]["agreement"] == "agrees"
    assert [(c["start_offset"], c["upper_bound"]) for c in replica["cleanings"]][-3:] == real
    assert all(c["file"].endswith("multi-pass/log-cleaner.log") for c in replica["cleanings"])


def test_metric_names_are_the_contract(live_server: LiveServer) -> None:
    """Every metric of docs/metrics.md is exposed, and nothing else."""
    doc = (ROOT / "docs" / "metrics.md").read_text(encoding="utf-8")
    documented = set(re.findall(r"^\| `(offsets_auditor_[a-z_]+)` \|", doc, re.M))
    assert len(documented) == 43
    exposed = set(_metrics(live_server))
    # absent until a scan has failed (no timestamp to give)
    assert exposed == documented - {
        "offsets_auditor_scan_last_failure_timestamp_seconds",
        "offsets_auditor_results_unreadable_run",
    }
    assert not any("group" in k for series in _metrics(live_server).values() for k in series)


def test_promtool_check_metrics_reports_nothing(
    live_server: LiveServer, prometheus_bin: Path
) -> None:
    _, _, body = live_server.get("/metrics")
    done = subprocess.run(
        [str(prometheus_bin / "promtool"), "check", "metrics"],
        input=body,
        capture_output=True,
        timeout=60,
    )
    assert (done.returncode, done.stdout, done.stderr) == (0, b"", b"")


@pytest.mark.parametrize(
    ("path", "status", "reason"),
    [
        ("/partitions/99", 404, "__consumer_offsets-99 is in no log dir"),
        ("/partitions/-1", 422, "greater than or equal to 0"),
        ("/partitions/abc", 422, "valid integer"),
        ("/partitions?limit=0", 422, "limit"),
        ("/partitions?limit=100000", 422, "limit"),
        ("/findings?offset=-5", 422, "offset"),
        ("/segments?limit=ten", 422, "limit"),
        ("/groups/%FF%FE/coordinator-partition", 400, "not UTF-8"),
        ("/groups/" + "x" * 32768 + "/coordinator-partition", 400, "at most 32767 bytes"),
        ("/group/coordinator-partition?group=" + "%C3%A9" * 16400, 400, "at most 32767 bytes"),
        ("/group/coordinator-partition", 422, "group"),
        ("/group/coordinator-partition?group=a&partitions=0", 422, "partitions"),
        ("/groups/usercenter/coordinator-partition?cluster=x", 404, "not in run"),
        ("/nothing-here", 404, "Not Found"),
    ],
)
def test_bad_input_is_a_clear_4xx(
    live_server: LiveServer, path: str, status: int, reason: str
) -> None:
    code, _, body = live_server.get(path)
    assert code == status, body[:300]
    assert reason in body.decode(), body[:300]
    assert live_server.json("/healthz") == {"status": "ok"}


def test_paging(live_server: LiveServer) -> None:
    everything = live_server.json("/findings?limit=1000")
    assert everything["total"] == len(everything["items"]) > 10
    page = live_server.json("/findings?limit=3&offset=2")
    assert (page["total"], page["offset"], page["limit"]) == (everything["total"], 2, 3)
    assert page["items"] == everything["items"][2:5]
    assert everything["items"][0]["severity"] == "critical"  # critical first
    parts = live_server.json("/partitions?limit=1000")["items"]
    flags = [p["never_compacted"] for p in parts]
    assert flags == sorted(flags, reverse=True)  # never compacted first
    segments = live_server.json("/segments?partition=2&limit=1000")
    assert segments["total"] == sum(1 for s in segments["items"] if s["partition"] == 2) > 0
    indexes = live_server.json("/indexes?verdict=ok&limit=1")
    assert indexes["total"] > 0 and indexes["items"][0]["verdict"] == "ok"
    groups = live_server.json("/groups?prefix=grp-0000&limit=5")
    assert groups["items"] == [f"grp-0000{i}" for i in range(5)] or groups["items"][0].startswith(
        "grp-0000"
    )
    assert groups["total"] >= len(groups["items"])


def test_brokers_runs_and_probes(live_server: LiveServer, published_run: Published) -> None:
    page = live_server.json("/brokers")
    assert (page["run_id"], page["total"], page["offset"]) == (published_run.run_id, 5, 0)
    brokers = page["items"]
    died = next(b for b in brokers if "cleaner-died" in b["log_dir"])
    assert died["recommended_dedupe_buffer_size"] == 1644816
    assert "68,534 slots x 24 B" in died["recommendation_arithmetic"]
    only_b = live_server.json(f"/brokers?cluster={SECOND_CLUSTER}")
    assert [b["broker_id"] for b in only_b["items"]] == [1]
    assert len(live_server.json("/brokers?limit=2&offset=4")["items"]) == 1
    runs = live_server.json("/runs")
    (run,) = runs["items"]
    assert (run["run_id"], run["readable"], run["served"]) == (published_run.run_id, True, True)
    assert run["counts"]["log_dirs"] == 5 and run["outcomes"]["thread-death"] == 1
    ready = live_server.json("/readyz")
    assert ready["ready"] and ready["run_id"] == published_run.run_id
    assert ready["run_ids"] == {"": published_run.run_id}
    assert ready["message"] == f"serving -: {published_run.run_id}"
    spec = live_server.json("/openapi.json")
    for path in (
        "/groups/{group_id}/coordinator-partition",
        "/group/coordinator-partition",
        "/groups/{group_id}/reset-offsets.csv",
        "/partitions/{n}",
        "/alerts",
        "/runs",
    ):
        assert path in spec["paths"]
    props = spec["components"]["schemas"]["CoordinatorAnswer"]["properties"]
    assert set(props) == {"run_id", "group", "java_hash_code", "in_run", "clusters"}
    cluster = spec["components"]["schemas"]["ClusterAnswer"]["properties"]
    assert {"partition", "partitions", "coordinator", "loading", "replicas"} <= set(cluster)


def test_status_page(live_server: LiveServer) -> None:
    code, headers, body = live_server.get("/?group=usercenter")
    page = body.decode()
    assert code == 200 and headers["content-type"].startswith("text/html")
    # nothing from elsewhere: no script, no external stylesheet, image or font
    assert "<script" not in page and not re.search(r"(src|href)=\"(https?:)?//", page)
    # every partition once: a problem's card, critical ones first, or a line folded away
    cards = re.findall(r'<div class="card problem (\w+)" data-kind="\1">', page)
    others = page.split('<div id="others">', 1)[1]
    folded = re.findall(r"<li>__consumer_offsets-\d+ · ", others)
    assert len(cards) + len(folded) == 20
    assert cards == sorted(cards, key=["critical", "warning"].index) and cards[0] == "critical"
    # each card sets its dirty section against the map, or says there is none
    for rest in page.split('<div class="card problem ')[1:]:
        card = rest.split("</div>", 1)[0]
        assert '<svg class="map-chart"' in card or "no dirty section" in card, card
    assert "61,680 of 39,321 entries (156.9%)" in page
    assert "log.cleaner.dedupe.buffer.size=1644816" in page
    assert "ceil(61,680 / 0.9) = 68,534" in page
    assert "OffsetsCleanerThreadDeath" in page and "OffsetsPartitionBlocked" in page
    # the broker's last real cleaning beside the predicted verdict, from its cleaner log
    cards_html = [c.split("</div>", 1)[0] for c in page.split('<div class="card problem ')[1:]]
    (multi_1,) = [c for c in cards_html if "__consumer_offsets-1:" in c and "multi-pass" in c]
    assert "2026-11-21 09:19:10 UTC, 3 pass(es) from offset 0, completed" in multi_1
    assert "beside the emulation: agrees" in multi_1
    (died_2,) = [c for c in cards_html if "__consumer_offsets-2:" in c and "cleaner-died" in c]
    assert "1 pass(es) from offset 0, thread-died" in died_2
    (died_3,) = [c for c in cards_html if "__consumer_offsets-3:" in c and "cleaner-died" in c]
    assert "none in its log" in died_3
    assert all("no cleaner log read" in c for c in cards_html if SECOND_CLUSTER in c)
    assert re.search(r'class="coordinator">__consumer_offsets-0</strong> of 4', page)


def test_cluster_id_is_one_convention_everywhere(live_server: LiveServer) -> None:
    """``cluster_id`` was null in /partitions, /brokers and /findings and "" in the lookup and
    the metrics: it is "" for none in every table and answer."""
    seen: dict[str, set[object]] = {}
    for path in ("/partitions", "/brokers", "/segments", "/indexes", "/findings"):
        items = live_server.json(f"{path}?limit=1000")["items"]
        seen[path] = {row["cluster_id"] for row in items if "cluster_id" in row}
    seen["lookup"] = {
        c["cluster_id"]
        for c in live_server.json("/groups/usercenter/coordinator-partition")["clusters"]
    }
    seen["group"] = {c["cluster_id"] for c in live_server.json("/groups/usercenter")["copies"]}
    for where, values in seen.items():
        assert None not in values, where
    assert "" in seen["/partitions"] and SECOND_CLUSTER in seen["/partitions"]
    assert seen["/brokers"] == {"", SECOND_CLUSTER}
    spec = live_server.json("/openapi.json")["components"]["schemas"]
    assert spec["BrokerRow"]["properties"]["cluster_id"]["type"] == "string"


@pytest.mark.parametrize("path", ["/group/coordinator-partition", "/group", "/"])
def test_a_422_does_not_echo_a_huge_value_back(live_server: LiveServer, path: str) -> None:
    """A 100 KB group id came back whole in the 422 (FastAPI repeats the rejected input)."""
    long_id = "g" * 100_000
    code, _, body = live_server.get(f"{path}?group={long_id}")
    assert code == 422
    assert len(body) < 2_000, len(body)
    (detail,) = json.loads(body)["detail"]
    assert detail["loc"] == ["query", "group"]
    assert detail["input"] == "g" * 200 + "... (100,000 characters in all)"


def test_one_group_count_on_the_page_and_in_runs(
    live_server: LiveServer, published_run: Published
) -> None:
    """The page said 755 groups (distinct ids) and /runs 756 (groups per log dir, summed: a
    group two log dirs hold counted twice). Both are the distinct ids per cluster now."""
    import pyarrow.parquet as pq

    table = pq.read_table(published_run.run_dir / "groups.parquet", columns=["cluster_id", "group"])
    pairs = {(c or "", g) for c, g in zip(*table.to_pydict().values(), strict=True)}
    per_log_dir = sum(b["groups"] for b in live_server.json("/brokers")["items"])
    assert per_log_dir > len(pairs)  # the run does hold groups in more than one log dir
    (run,) = live_server.json("/runs")["items"]
    assert run["counts"]["groups"] == len(pairs)
    page = live_server.get("/")[2].decode()
    assert f" {len(pairs):,} group(s)." in page


@pytest.mark.parametrize("path", ["/docs", "/redoc"])
def test_the_api_viewers_load_nothing_from_elsewhere(live_server: LiveServer, path: str) -> None:
    """/docs loaded Swagger UI from a CDN: blank offline. Every script, style and icon of the
    viewers is served by the service itself."""
    code, _, body = live_server.get(path)
    assert code == 200
    html = body.decode()
    urls = re.findall(r"""(?:src|href)\s*=\s*["']([^"']+)["']""", html)
    urls += re.findall(r"""url:\s*["']([^"']+)["']""", html)
    assert urls and not [u for u in urls if "//" in u], urls
    assert "fonts.googleapis" not in html
    for url in urls:
        status, _headers, content = live_server.get(url)
        assert status == 200 and len(content) > 100, url
