"""Kafka's constants this project's rules use, each once, with where Kafka defines it."""

from __future__ import annotations

from typing import Final

#: ``Topic.GROUP_METADATA_TOPIC_NAME`` (0.9.0.1 ``GroupCoordinator.GroupMetadataTopicName``)
OFFSETS_TOPIC: Final = "__consumer_offsets"
#: ``Int.MaxValue``: the offset map's byte cap per thread, a segment's offset span
#: (``LogSegment``'s relative offsets are ints), ``Integer.parseInt``'s range
INT_MAX: Final = 2**31 - 1
