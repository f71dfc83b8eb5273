"""Several log dirs scanned together: what only shows when they are compared.

- Two log dirs that claim the same broker id (of the same cluster, or both without one): copies
  collected from several places often do. They stay apart (rows carry their log dir); the
  operator is warned, since a broker id no longer says which log dir is meant.
- Replicas of one ``__consumer_offsets`` partition on different brokers of one cluster hold the
  same log up to the shorter one's end (Kafka's replication truncates followers to the
  leader's log). Compaction keeps the latest record of every key, so where a group's latest
  commit for a topic-partition lies below both replicas' log end offsets, both must load the
  same offset from the same log offset. When they do not, the logs diverged (an unclean leader
  election, a disk restored from a backup, a copy taken from another cluster): after a
  failover the group's consumers resume from another offset. That is ``replica-divergence``.

Pure functions over audit reports (``audit_report.report_json``, one log dir each).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from offsets_auditor.findings import Finding, FindingKind, Severity

#: (input, partition number) -> (group, topic, partition) -> (committed offset, log offset of
#: the commit): the offsets the input's coordinator loads from that partition.
Commits = Callable[[int, int], Mapping[tuple[str, str, int], tuple[int, int]]]


def replica_findings(
    reports: Sequence[Mapping[str, Any]], commits: Commits
) -> list[tuple[int, Finding]]:
    """Findings about the reports taken together, each with the index of the report (input) it
    belongs to; ``commits`` gives each input's latest commits per partition."""
    return [*_duplicate_broker_ids(reports), *_divergent_replicas(reports, commits)]


def _broker(report: Mapping[str, Any]) -> Mapping[str, Any]:
    (broker,) = report["brokers"]
    found: Mapping[str, Any] = broker
    return found


def _duplicate_broker_ids(reports: Sequence[Mapping[str, Any]]) -> list[tuple[int, Finding]]:
    claims: dict[tuple[str | None, int], list[int]] = defaultdict(list)
    for index, report in enumerate(reports):
        broker = _broker(report)
        if broker["broker_id"] is not None:
            claims[(broker.get("cluster_id"), broker["broker_id"])].append(index)
    found = []
    for (cluster, broker_id), indexes in claims.items():
        if len(indexes) < 2:
            continue
        dirs = ", ".join(str(_broker(reports[i])["log_dir"]) for i in indexes)
        where = f" of cluster {cluster}" if cluster else ""
        for index in indexes:
            found.append(
                (
                    index,
                    Finding(
                        FindingKind.DUPLICATE_BROKER_ID,
                        Severity.WARNING,
                        f"{len(indexes)} log dirs claim broker id {broker_id}{where} in"
                        f" meta.properties: {dirs}. Their results stay apart by log dir; if"
                        " they are copies from different clusters, scan them separately.",
                    ),
                )
            )
    return found


def _divergent_replicas(
    reports: Sequence[Mapping[str, Any]], latest: Commits
) -> list[tuple[int, Finding]]:
    # (cluster, partition) -> input -> log end offset
    replicas: dict[tuple[str | None, int], dict[int, int]] = defaultdict(dict)
    for index, report in enumerate(reports):
        cluster = _broker(report).get("cluster_id")
        for p in report["partitions"]:
            replicas[(cluster, p["partition"])][index] = p["log_end_offset"]
    found = []
    for (_cluster, partition), ends in sorted(replicas.items(), key=lambda kv: str(kv[0])):
        if len(ends) < 2:
            continue
        commits = {i: latest(i, partition) for i in ends}
        inputs = sorted(ends)
        for a_pos, a in enumerate(inputs):
            for b in inputs[a_pos + 1 :]:
                if _broker(reports[a])["broker_id"] == _broker(reports[b])["broker_id"]:
                    continue  # copies of one broker, not replicas
                common_end = min(ends[a], ends[b])
                differ = sorted(
                    key
                    for key, left in commits[a].items()
                    if key in commits[b]
                    and left[1] < common_end
                    and commits[b][key][1] < common_end
                    and left != commits[b][key]
                )
                if differ:
                    found.append((a, _divergence(reports, a, b, partition, common_end, differ)))
    return found


def _divergence(
    reports: Sequence[Mapping[str, Any]],
    a: int,
    b: int,
    partition: int,
    common_end: int,
    differ: list[tuple[str, str, int]],
) -> Finding:
    left, right = _broker(reports[a]), _broker(reports[b])
    group, topic, tp = differ[0]
    return Finding(
        FindingKind.REPLICA_DIVERGENCE,
        Severity.WARNING,
        f"__consumer_offsets-{partition} on broker {left['broker_id']} ({left['log_dir']}) and"
        f" broker {right['broker_id']} ({right['log_dir']}) disagree below offset {common_end},"
        f" which both hold: {len(differ)} committed offset(s) differ, e.g. group {group!r}"
        f" {topic}-{tp}. Their logs diverged (unclean leader election, restored disk, or"
        " copies of different clusters): after a failover the group would resume elsewhere.",
        partition=f"__consumer_offsets-{partition}",
        group=group,
    )
