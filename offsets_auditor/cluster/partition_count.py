"""How many partitions ``__consumer_offsets`` has, decided from all the evidence, with the
reasons.

The count matters because the coordinator of a group is the leader of partition
``Utils.abs(groupId.hashCode) % count`` (``offsets_auditor.coordinator``): a count off by one
sends the operator to the wrong broker. Kafka fixes the count when it creates the topic and
never changes it after; one broker's partition dirs and configs are weak evidence of it (see
:mod:`.evidence`). The rules, in order (each numbered below where it is applied):

1. The live cluster's Metadata: the topic as the controller has it now.
2. A KRaft ``__cluster_metadata`` log on disk: the PartitionRecords of the topic.
3. The union of the brokers' partition dirs, when it holds every partition 0..N-1 and every
   broker whose config is known says ``offsets.topic.num.partitions=N``.
4. The brokers' ``offsets.topic.num.partitions`` (or its default, 50), when it is not
   contradicted by a partition dir beyond it; flagged uncertain, since partitions no scanned
   broker holds are taken on the config's word.
5. Otherwise no count: never a modulo over a count the evidence does not support. ``at_least``
   says how many partitions are known to exist.

Whatever rule decides, every disagreement among the sources is said in ``reasons``; the answer
is ``uncertain`` when a source it relies on is incomplete, when the sources that decide
disagree, or when the evidence comes from more than one cluster.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum

from offsets_auditor.cluster.evidence import BrokerEvidence, ConfigOrigin
from offsets_auditor.cluster.metadata import OffsetsTopicMetadata


class CountSource(StrEnum):
    """Which rule gave the count."""

    LIVE = "live-cluster"
    KRAFT_LOG = "kraft-metadata-log"
    PARTITION_DIRS = "partition-dirs"
    BROKER_CONFIG = "broker-config"
    NONE = "none"


@dataclass(frozen=True, slots=True)
class PartitionCount:
    """The decided count (``None``: no count is supported), the rule that gave it, whether it
    is uncertain, and why, one sentence per reason. ``at_least`` is one more than the highest
    partition any source states or any broker holds (0 when none)."""

    count: int | None
    source: CountSource
    uncertain: bool
    reasons: tuple[str, ...]
    at_least: int


def decide_partition_count(
    brokers: Sequence[BrokerEvidence],
    live: OffsetsTopicMetadata | None = None,
    kraft: OffsetsTopicMetadata | None = None,
) -> PartitionCount:
    """The offsets topic's partition count from every broker's evidence and, when given, the
    live cluster's and a KRaft metadata log's view of the topic."""
    held = frozenset().union(*(b.partitions_held for b in brokers)) if brokers else frozenset()
    dirs_max = max(held, default=-1) + 1
    stated = max(
        (m.partition_count for m in (live, kraft) if m is not None and m.exists), default=0
    )
    at_least = max(dirs_max, stated)
    notes: list[str] = []
    mixed = _mixed_clusters(brokers, live)
    if mixed:
        notes.append(mixed)

    # 1. the live cluster
    if live is not None:
        if not live.exists:
            return PartitionCount(
                None,
                CountSource.LIVE,
                bool(held) or bool(mixed),
                (
                    f"the live cluster ({live.detail}) has no __consumer_offsets topic: Kafka"
                    " creates it when a group first asks for its coordinator",
                    *(["yet the scanned brokers hold partition dirs of it"] if held else []),
                    *notes,
                ),
                at_least,
            )
        n = live.partition_count
        reasons = [f"{n} partitions, as the live cluster's metadata states them ({live.detail})"]
        if not live.complete:
            reasons.append(f"the live metadata lacks partition(s) {_missing(live)}")
        reasons += _disagreements(n, brokers, held, kraft, "the live count")
        return PartitionCount(
            n, CountSource.LIVE, not live.complete or bool(mixed), (*reasons, *notes), at_least
        )

    # 2. a KRaft metadata log on disk
    if kraft is not None and kraft.exists and kraft.partition_count > 0:
        n = kraft.partition_count
        reasons = [f"{n} partitions, as the KRaft metadata log states them ({kraft.detail})"]
        if not kraft.complete:
            reasons.append(f"the metadata log lacks PartitionRecords for {_missing(kraft)}")
        reasons += _disagreements(n, brokers, held, None, "the metadata log's count")
        return PartitionCount(
            n,
            CountSource.KRAFT_LOG,
            not kraft.complete or bool(mixed),
            (*reasons, *notes),
            at_least,
        )

    configs = _configs(brokers)
    complete = dirs_max > 0 and held == frozenset(range(dirs_max))

    # 3. the union of the dirs, complete, and the configs agree with it
    if complete and set(configs) == {dirs_max}:
        return PartitionCount(
            dirs_max,
            CountSource.PARTITION_DIRS,
            bool(mixed),
            (
                f"{dirs_max} partitions: the scanned brokers hold every partition 0..{dirs_max - 1}"
                f" between them and every broker's {_config_words(configs[dirs_max])}"
                f" offsets.topic.num.partitions={dirs_max}",
                *notes,
            ),
            at_least,
        )
    if complete and dirs_max in configs:  # configs disagree; one of them matches the dirs
        return PartitionCount(
            dirs_max,
            CountSource.PARTITION_DIRS,
            True,
            (
                f"{dirs_max} partitions: the scanned brokers hold every partition 0..{dirs_max - 1}"
                f" and {_names(configs[dirs_max])} say offsets.topic.num.partitions={dirs_max}",
                _config_conflict(configs),
                *notes,
            ),
            at_least,
        )

    # 4. the brokers' config, where no dir contradicts it
    fitting = {n: who for n, who in configs.items() if n >= dirs_max}
    if len(fitting) == 1:
        ((n, who),) = fitting.items()
        reasons = [
            f"{n} partitions, from {_names(who)}:"
            f" {_config_words(who)} offsets.topic.num.partitions={n}"
        ]
        unheld = sorted(set(range(n)) - held)
        if unheld:
            reasons.append(
                f"no scanned broker holds partition(s) {_ranges(unheld)}: they are taken on the"
                " config's word (the config only counts when the topic is created)"
            )
        else:
            reasons.append(
                "the config only counts when the topic is created, and may have changed since"
            )
        if len(configs) > 1:
            reasons.append(_config_conflict(configs))
        return PartitionCount(n, CountSource.BROKER_CONFIG, True, (*reasons, *notes), at_least)

    # 5. no count the evidence supports
    reasons = ["no count is supported: no live cluster, no KRaft metadata log"]
    if not configs:
        reasons.append(
            "and no broker config (give each broker's server.properties, or --bootstrap-server)"
        )
    elif len(fitting) > 1:
        reasons.append(_config_conflict(configs))
    else:
        beyond = max(held)
        owner = _names([b for b in brokers if beyond in b.partitions_held])
        said = (
            _config_conflict(configs)
            if len(configs) > 1
            else f"offsets.topic.num.partitions={next(iter(configs))}"
        )
        reasons.append(
            f"{owner} hold(s) __consumer_offsets-{beyond}, beyond every configured count"
            f" ({said}): the topic was created with another value"
        )
    if at_least:
        reasons.append(f"the topic has at least {at_least} partitions")
    return PartitionCount(None, CountSource.NONE, True, (*reasons, *notes), at_least)


def _configs(brokers: Sequence[BrokerEvidence]) -> dict[int, list[BrokerEvidence]]:
    configs: dict[int, list[BrokerEvidence]] = {}
    for b in brokers:
        if b.offsets_topic_partitions is not None:
            configs.setdefault(b.offsets_topic_partitions, []).append(b)
    return configs


def _disagreements(
    n: int,
    brokers: Sequence[BrokerEvidence],
    held: frozenset[int],
    kraft: OffsetsTopicMetadata | None,
    what: str,
) -> list[str]:
    """Sentences for each other source that states another count (said, not decisive)."""
    out = []
    if kraft is not None and kraft.exists and kraft.partition_count != n:
        out.append(
            f"the KRaft metadata log says {kraft.partition_count} ({kraft.detail}): {what} wins"
        )
    beyond = sorted(p for p in held if p >= n)
    if beyond:
        out.append(
            f"partition dir(s) {_ranges(beyond)} exist beyond {what} of {n} on"
            f" {_names([b for b in brokers if b.partitions_held & set(beyond)])}"
        )
    for value, who in sorted(_configs(brokers).items()):
        if value != n:
            default = all(b.config_origin is ConfigOrigin.DEFAULT for b in who)
            out.append(
                f"{_names(who)}: offsets.topic.num.partitions={value}"
                f"{' (the default)' if default else ''}, not {n}: the config only counts when"
                " the topic is created"
            )
    return out


def _mixed_clusters(
    brokers: Sequence[BrokerEvidence], live: OffsetsTopicMetadata | None
) -> str | None:
    ids = {b.cluster_id for b in brokers if b.cluster_id}
    if live is not None and live.cluster_id:
        ids.add(live.cluster_id)
    if len(ids) > 1:
        return f"the evidence comes from {len(ids)} clusters (cluster ids {', '.join(sorted(ids))})"
    return None


def _config_conflict(configs: dict[int, list[BrokerEvidence]]) -> str:
    parts = [f"{_names(who)} say {n}" for n, who in sorted(configs.items())]
    return "the brokers' offsets.topic.num.partitions disagree: " + "; ".join(parts)


def _config_words(who: Sequence[BrokerEvidence]) -> str:
    return "default" if all(b.config_origin is ConfigOrigin.DEFAULT for b in who) else "configured"


def _names(who: Sequence[BrokerEvidence]) -> str:
    return ", ".join(b.name for b in who)


def _missing(meta: OffsetsTopicMetadata) -> str:
    stated = {p.partition for p in meta.partitions}
    return _ranges(sorted(set(range(meta.partition_count)) - stated))


def _ranges(numbers: Sequence[int]) -> str:
    """``[0, 1, 2, 5]`` -> ``"0-2, 5"``."""
    out: list[str] = []
    start = prev = None
    for n in numbers:
        if prev is not None and n == prev + 1:
            prev = n
            continue
        if start is not None:
            out.append(str(start) if start == prev else f"{start}-{prev}")
        start = prev = n
    if start is not None:
        out.append(str(start) if start == prev else f"{start}-{prev}")
    return ", ".join(out)
