"""One emulation of a partition for several configs, where it cannot tell them apart.

A detected version range is emulated at the first release of each stretch where the cleaner
changes (``version_detection.spans``); on most partitions, most of those changes never come
into play. Two of them an emulation watches (:data:`WATCHED`) and records in
``Emulated.facts_that_mattered`` whether their other value would have changed it:

- ``fast_forwards_segment_gaps`` (2.4.1): only an offset gap at a mapped segment's end moves
  the map's latest offset (``cleaner.map_building.PartialMap``);
- ``log_start_from_checkpoint`` (3.0.0): only a log-start-offset checkpoint beyond the first
  segment, or a cleaner checkpoint beyond the log end, moves the first dirty offset.

A config whose cleaner differs from an emulated one's in watched facts only, none of which
mattered, gets that emulation: its own would have taken every step the same. Otherwise it is
emulated too. The configs are therefore emulated in groups (:func:`config_groups`), each group
in turn on one core (:func:`emulate_group`), the groups side by side.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Final, TypeVar

from offsets_auditor.audit.partition import Emulated
from offsets_auditor.cleaner.behaviour import FACTS
from offsets_auditor.cleaner.config import CleanerConfig

#: The facts an emulation records the effect of (``Emulated.facts_that_mattered``).
WATCHED: Final = frozenset({"fast_forwards_segment_gaps", "log_start_from_checkpoint"})

_T = TypeVar("_T")


def differing_facts(a: CleanerConfig, b: CleanerConfig) -> frozenset[str] | None:
    """The facts read by the emulation whose values ``a``'s and ``b``'s cleaners differ in;
    None when the configs differ in anything else too."""
    if replace(a, kafka_version=b.kafka_version) != b:
        return None
    return frozenset(
        f.name
        for f in FACTS
        if f.emulated and getattr(a.behaviour, f.name) != getattr(b.behaviour, f.name)
    )


def config_groups(configs: Sequence[CleanerConfig]) -> list[tuple[int, ...]]:
    """The configs' indexes in groups: each joins the first group whose first config differs
    from it in watched facts only; the others start groups of their own."""
    groups: list[list[int]] = []
    for index, config in enumerate(configs):
        for group in groups:
            differ = differing_facts(configs[group[0]], config)
            if differ is not None and differ <= WATCHED:
                group.append(index)
                break
        else:
            groups.append([index])
    return [tuple(group) for group in groups]


def emulate_group(
    emulate: Callable[[CleanerConfig], Emulated | None],
    configs: Sequence[CleanerConfig],
    group: Sequence[int],
) -> list[Emulated | None]:
    """The emulations of the group's configs, in its order: its first config's by
    ``emulate``, taken by every other whose differing facts did not matter to it."""
    first = emulate(configs[group[0]])
    found = [first]
    for index in group[1:]:
        differ = differing_facts(configs[group[0]], configs[index])
        shared = (
            first is None  # no segments: nothing to emulate at any config
            or (differ is not None and differ <= WATCHED and not differ & first.facts_that_mattered)
        )
        found.append(first if shared else emulate(configs[index]))
    return found


def in_config_order(groups: Sequence[Sequence[int]], found: Sequence[Sequence[_T]]) -> list[_T]:
    """The groups' results (``found[g][i]`` for config ``groups[g][i]``) by config index."""
    by_index = {
        index: x
        for group, xs in zip(groups, found, strict=True)
        for index, x in zip(group, xs, strict=True)
    }
    return [by_index[index] for index in sorted(by_index)]
