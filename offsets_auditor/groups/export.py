"""The reset plan ``kafka-consumer-groups.sh --reset-offsets --from-file`` reads.

A:2.3.0 ``core/src/main/scala/kafka/admin/ConsumerGroupCommand.scala`` ``parseResetPlan``:

- the file is read whole and split on ``"\\n"`` (Java ``String.split``: trailing empty strings
  are dropped, so one final newline is fine, but a blank line anywhere else is parsed as a
  record and fails);
- Jackson CSV with the schema ``topic,partition,offset`` (``CsvRecordNoGroup``) and no header:
  when there is exactly one ``--group`` and the FIRST line parses as ``topic,partition,offset``
  every line is read that way for that group; otherwise every line must be
  ``group,topic,partition,offset``. A header line does not parse (``partition`` is not an
  int), so it switches to the 4-column reading and fails: no header;
- ``partition`` is an ``Int`` and ``offset`` a ``Long``; nothing else (no metadata) is carried;
  ``checkOffsetsRange`` then clamps each offset into the partition's current
  [log start, log end] with a warning ("New offset (N) is higher than latest offset ...").

Checked on the real 2.3.0 tool (tests/groups/test_groups.py, broker test): a header line fails
("Cannot deserialize value of type `int` from String ..."), as do a blank line inside and an
empty file ("No content to map due to end-of-input"); trailing newlines are fine; an offset
above the log end is set to the log end with a WARN.

So one line per offset, ``topic,partition,offset``, ``\\n``-terminated, nothing else. Topic
names are Kafka-legal (``[a-zA-Z0-9._-]``), so no CSV quoting ever applies; a name that is not
is refused rather than written in a form the tool would misread.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Protocol

#: ``org.apache.kafka.common.internals.Topic.LEGAL_CHARS`` (A:2.3.0), at most 249 chars.
_LEGAL_TOPIC = re.compile(r"[a-zA-Z0-9._-]{1,249}")


class TopicOffset(Protocol):
    """A committed offset as the plan reads it (``groups.model.CommittedOffset`` is one)."""

    @property
    def topic(self) -> str: ...

    @property
    def partition(self) -> int: ...

    @property
    def offset(self) -> int: ...


class ExportError(ValueError):
    """The offsets cannot be written as a reset plan the tool reads back the same."""


def reset_plan_csv(offsets: Iterable[TopicOffset], topics: Iterable[str] = ()) -> str:
    """The ``--from-file`` CSV for ``offsets`` (only ``topics`` when given), one
    ``topic,partition,offset`` line each, sorted by topic and partition."""
    wanted = set(topics)
    lines = []
    for o in sorted(offsets, key=lambda o: (o.topic, o.partition)):
        if wanted and o.topic not in wanted:
            continue
        if _LEGAL_TOPIC.fullmatch(o.topic) is None or o.topic in (".", ".."):
            raise ExportError(f"topic name {o.topic!r} is not a legal Kafka topic name")
        lines.append(f"{o.topic},{o.partition},{o.offset}\n")
    return "".join(lines)
