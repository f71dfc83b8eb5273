"""Recover every group's committed offsets from ``__consumer_offsets``, as the coordinator
would load them (see ``rules`` for the per-version load semantics, with their Kafka sources).

- :func:`recover_groups` / :func:`recover`: every offsets partition of a log dir replayed;
- :class:`GroupsFold`: the pure fold of one partition's segment deltas (``groups.delta``);
- :func:`reset_plan_csv`: the ``kafka-consumer-groups.sh --reset-offsets --from-file`` CSV.
"""

from offsets_auditor.groups.export import ExportError, reset_plan_csv
from offsets_auditor.groups.model import (
    CommittedOffset,
    GroupState,
    GroupStateName,
    Member,
    PartitionGroups,
    PendingTransactionalOffset,
    TopicPartition,
)
from offsets_auditor.groups.recover import (
    GroupsPlan,
    GroupsRecovery,
    plan,
    recover,
    recover_groups,
    replay_partition,
)
from offsets_auditor.groups.replay import GroupsFold
from offsets_auditor.groups.rules import LoaderRules, loader_rules

__all__ = [
    "CommittedOffset",
    "ExportError",
    "GroupState",
    "GroupStateName",
    "GroupsFold",
    "GroupsPlan",
    "GroupsRecovery",
    "LoaderRules",
    "Member",
    "PartitionGroups",
    "PendingTransactionalOffset",
    "TopicPartition",
    "loader_rules",
    "plan",
    "recover",
    "recover_groups",
    "replay_partition",
    "reset_plan_csv",
]
