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

Pure functions over what each log dir holds (``Holder``: of its audit, or of its published
rows).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from offsets_auditor.findings import Finding, FindingKind, Severity, broker_label

#: (input, partition number) -> (group, topic, partition) -> (committed offset, log offset of
#: the commit): the offsets the input's coordinator loads from that partition.
Commits = Callable[[int, int], Mapping[tuple[str, str, int], tuple[int, int]]]


@dataclass(frozen=True, slots=True)
class Holder:
    """What the rules read of one input (one log dir): its broker and cluster (as its
    ``meta.properties`` says), the log dir, and the log end offset of each offsets partition
    it holds (``(partition, log end offset)``, in the audit's order)."""

    broker_id: int | None
    cluster_id: str | None
    log_dir: str
    log_end_offsets: tuple[tuple[int, int], ...]


def replica_findings(holders: Sequence[Holder], commits: Commits) -> list[tuple[int, Finding]]:
    """Findings about the inputs taken together, each with the index of the input it belongs
    to; ``commits`` gives each input's latest commits per partition."""
    return [*_duplicate_broker_ids(holders), *_divergent_replicas(holders, commits)]


def _duplicate_broker_ids(holders: Sequence[Holder]) -> list[tuple[int, Finding]]:
    claims: dict[tuple[str | None, int], list[int]] = defaultdict(list)
    for index, holder in enumerate(holders):
        if holder.broker_id is not None:
            claims[(holder.cluster_id, holder.broker_id)].append(index)
    found = []
    for (cluster, broker_id), indexes in claims.items():
        if len(indexes) < 2:
            continue
        dirs = ", ".join(holders[i].log_dir for i in indexes)
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


def _divergent_replicas(holders: Sequence[Holder], latest: Commits) -> list[tuple[int, Finding]]:
    # (cluster, partition) -> input -> log end offset
    replicas: dict[tuple[str | None, int], dict[int, int]] = defaultdict(dict)
    for index, holder in enumerate(holders):
        for partition, end in holder.log_end_offsets:
            replicas[(holder.cluster_id, partition)][index] = end
    found = []
    for (_cluster, partition), ends in sorted(replicas.items(), key=lambda kv: str(kv[0])):
        if len(ends) < 2:
            continue
        commits = {i: latest(i, partition) for i in ends}
        inputs = sorted(ends)
        for a_pos, a in enumerate(inputs):
            for b in inputs[a_pos + 1 :]:
                if holders[a].broker_id == holders[b].broker_id:
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
                    found.append((a, _divergence(holders, a, b, partition, common_end, differ)))
    return found


def _divergence(
    holders: Sequence[Holder],
    a: int,
    b: int,
    partition: int,
    common_end: int,
    differ: list[tuple[str, str, int]],
) -> Finding:
    left, right = holders[a], holders[b]
    group, topic, tp = differ[0]
    return Finding(
        FindingKind.REPLICA_DIVERGENCE,
        Severity.WARNING,
        f"__consumer_offsets-{partition} on {broker_label(left.broker_id, left.log_dir)}"
        f" and {broker_label(right.broker_id, right.log_dir)} disagree below offset"
        f" {common_end},"
        f" which both hold: {len(differ)} committed offset(s) differ, e.g. group {group!r}"
        f" {topic}-{tp}. Their logs diverged (unclean leader election, restored disk, or"
        " copies of different clusters): after a failover the group would resume elsewhere.",
        partition=f"__consumer_offsets-{partition}",
        group=group,
    )
