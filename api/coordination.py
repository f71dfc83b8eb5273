"""Which ``__consumer_offsets`` partition coordinates a group, per cluster of the run, with the
log dirs holding that partition and its health: the on-call question, answered from the
served run. The formula is the core's (``offsets_auditor.coordinator``); the partition count is
the run's, and the answer says where it came from."""

from __future__ import annotations

from typing import Any

from api.results import cluster_key
from api.view import View
from offsets_auditor.coordinator import coordinator_partition, java_string_hash

#: Kafka writes a group id as a STRING (int16 length): at most 32767 bytes of UTF-8.
MAX_GROUP_ID_BYTES = 32767


class BadGroupId(ValueError):
    pass


def check_group_id(group: str) -> str:
    size = len(group.encode("utf-8", "surrogatepass"))
    if size > MAX_GROUP_ID_BYTES:
        raise BadGroupId(
            f"a group id is a Kafka STRING, at most {MAX_GROUP_ID_BYTES} bytes of UTF-8;"
            f" this one has {size}"
        )
    return group


def partition_count(run: View, cluster: str) -> tuple[int | None, str]:
    """(the number of offsets partitions of ``cluster``, where the number comes from)."""
    numbers = sorted({p["partition"] for p in run.partitions_of(cluster)})
    configured = run.configured_partitions(cluster)
    name = f"cluster {cluster!r}" if cluster else "the log dirs without a cluster.id"
    if not numbers:
        if configured:
            return configured, (
                f"offsets.topic.num.partitions={configured} as the scan was given it: no"
                f" __consumer_offsets partition dir in {name}"
            )
        return None, f"no __consumer_offsets partition dir in {name}: give ?partitions=N"
    count = numbers[-1] + 1
    basis = (
        f"the run's __consumer_offsets partition dirs of {name}: {len(numbers)} partition(s),"
        f" numbers {numbers[0]}-{numbers[-1]}, so {count} partitions"
    )
    if len(numbers) < count:
        basis += (
            f" ({count - len(numbers)} number(s) below {numbers[-1]} are in no scanned log dir:"
            " if the topic has more partitions than the scanned dirs show, give ?partitions=N)"
        )
    if configured is not None and configured != count:
        basis += (
            f"; the scan's config says offsets.topic.num.partitions={configured}, which only"
            " applies when the topic is created: the dirs show the topic as it is"
        )
    return count, basis


def answer(run: View, group: str, clusters: list[str], partitions: int | None) -> dict[str, Any]:
    """The ``CoordinatorAnswer`` for ``group`` over ``clusters`` (with ``partitions``: that
    count for each, as the caller gave it)."""
    in_run = {cluster_key(r["cluster_id"]) for r in run.groups.rows(group)}
    answers = []
    for cluster in clusters:
        count: int | None
        if partitions is not None:
            count, basis = partitions, f"?partitions={partitions} as the request gave it"
        else:
            count, basis = partition_count(run, cluster)
        if count is None:
            continue
        number = coordinator_partition(group, count)
        replicas = [p for p in run.partitions_of(cluster) if p["partition"] == number]
        answers.append(
            {
                "cluster_id": cluster,
                "partition": number,
                "partitions": count,
                "partitions_basis": basis,
                "brokers": [broker_ref(run, p) for p in replicas],
                "health": [health(run, p) for p in replicas],
            }
        )
    one = answers[0] if len(answers) == 1 else None
    return {
        "run_id": run.run_id,
        "group": group,
        "java_hash_code": java_string_hash(group),
        "in_run": bool(in_run & set(clusters)),
        **{
            k: (one[k] if one else None)
            for k in ("partition", "partitions", "partitions_basis", "brokers", "health")
        },
        "clusters": answers,
    }


def broker_ref(run: View, p: dict[str, Any]) -> dict[str, Any]:
    version = next((b["kafka_version"] for b in run.brokers if b["log_dir"] == p["log_dir"]), None)
    return {
        "cluster_id": cluster_key(p["cluster_id"]),
        "broker_id": p["broker_id"],
        "log_dir": p["log_dir"],
        "kafka_version": version,
    }


def health(run: View, p: dict[str, Any]) -> dict[str, Any]:
    return {
        "broker_id": p["broker_id"],
        "log_dir": p["log_dir"],
        "size_bytes": p["size_bytes"],
        "segments": p["segment_count"],
        "never_compacted": p["never_compacted"],
        "verdict": p["outcome"],
        "reason": p["reason"],
        "passes": p["passes"],
        "load_estimate_seconds": p["load_estimate_seconds"],
        "load_estimate_basis": p["load_estimate_basis"],
        "open_findings": run.findings_of(p["log_dir"], p["partition"]),
    }
