"""Who commits what in the benchmark cluster (``benchmarks/cluster.py``): a pool of topics, the
consumer groups (a million at full scale), and the ``__consumer_offsets`` partition each group's
coordinator writes to, by Kafka's ``partitionFor`` (``offsets_auditor.coordinator``).

A group consumes 1-3 topics (most consume one), each of 1-24 partitions (most have few): about
7 committed offsets per group. Names are team/service names with a numeric suffix where two
collide, plus a tail of ``console-consumer-N`` (10 %), as on a cluster that has been used for
years. Keys are OffsetCommitKey v1 (``GroupMetadataManager.offsetCommitKey``), exactly as the
v2 segment of ``benchmarks/generate.py`` encodes them.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from benchmarks.generate import (
    _DOMAINS,
    _ENTITIES,
    _EVENTS,
    _ROLES,
    _SUFFIXES,
    _TEAMS,
    INT32,
    KEY_VERSION,
    _string,
)
from offsets_auditor.coordinator import coordinator_partition

#: Partition counts of the topics, drawn uniformly: mostly small topics, a few wide ones
#: (5.5 on average; with 1.24 topics per group, about 6.8 committed offsets per group).
TOPIC_PARTITION_COUNTS = (1, 1, 1, 1, 2, 3, 3, 6, 6, 12, 24)
#: How many topics a group consumes (1, 2 or 3), with these weights.
TOPICS_PER_GROUP_WEIGHTS = (80, 16, 4)
_ENVS = ("prod", "staging", "eu-1", "us-east-2", "batch", "canary", "dev", "test")


@dataclass(frozen=True, slots=True)
class Group:
    """A consumer group: its id and the topics (name, partition count) it commits offsets of."""

    name: str
    topics: tuple[tuple[str, int], ...]

    def commit_keys(self) -> list[bytes]:
        """OffsetCommitKey v1 of every topic-partition the group commits, in a fixed order."""
        group = KEY_VERSION.pack(1) + _string(self.name)
        keys: list[bytes] = []
        for topic, partitions in self.topics:
            prefix = group + _string(topic)
            keys.extend(prefix + INT32.pack(p) for p in range(partitions))
        return keys


def topics(rng: random.Random, count: int) -> list[tuple[str, int]]:
    """``count`` distinct topics (name, partition count)."""
    out: list[tuple[str, int]] = []
    seen: set[str] = set()
    while len(out) < count:
        name = f"{rng.choice(_DOMAINS)}.{rng.choice(_ENTITIES)}.{rng.choice(_EVENTS)}"
        if rng.random() < 0.3:
            name += f".v{rng.randint(2, 4)}"
        if name in seen:
            name += f"-{len(out)}"
        seen.add(name)
        out.append((name, rng.choice(TOPIC_PARTITION_COUNTS)))
    return out


def group_names(rng: random.Random, count: int) -> list[str]:
    """``count`` distinct group ids."""
    names: list[str] = []
    seen: set[str] = set()
    while len(names) < count:
        if rng.random() < 0.1:
            name = f"console-consumer-{rng.randint(10_000, 9_999_999)}"
        else:
            name = f"{rng.choice(_TEAMS)}-{rng.choice(_ROLES)}{rng.choice(_SUFFIXES)}"
            if name in seen:
                name += f"-{rng.choice(_ENVS)}-{rng.randint(1, 99_999)}"
        if name in seen:
            continue
        seen.add(name)
        names.append(name)
    return names


def groups(seed: int, count: int, topic_count: int) -> list[Group]:
    """``count`` groups over ``topic_count`` topics, the same for the same arguments."""
    rng = random.Random(f"groups:{seed}")
    pool = topics(rng, topic_count)
    out = []
    for name in group_names(rng, count):
        (n,) = rng.choices((1, 2, 3), TOPICS_PER_GROUP_WEIGHTS)
        out.append(Group(name, tuple(rng.sample(pool, n))))
    return out


def by_coordinator(all_groups: list[Group], partitions: int) -> list[list[Group]]:
    """The groups each ``__consumer_offsets`` partition holds: Kafka's ``partitionFor``."""
    out: list[list[Group]] = [[] for _ in range(partitions)]
    for group in all_groups:
        out[coordinator_partition(group.name, partitions)].append(group)
    return out
