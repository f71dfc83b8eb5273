"""The data of version detection: one piece of evidence, and the range all of it allows.

A piece of :class:`Evidence` says what was seen, in which file, and which Kafka releases could
have produced it: ``since`` (the first release that writes it, inclusive) and/or ``until`` (the
first release that would have left something else, exclusive), with the Kafka source that shows
it. :class:`VersionRange` is their intersection, in release numbers.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import IntEnum

from offsets_auditor.versions import RELEASES, KafkaVersion, last_release_before


class Strength(IntEnum):
    """How directly a piece of evidence shows the broker's version (lower is stronger). When
    pieces contradict each other, the weaker one is set aside (:func:`~.combine.combine`)."""

    #: the version line the broker prints at start-up, in its own log
    SERVER_LOG = 0
    #: something only a release at least this new writes (a record version, a file)
    WRITTEN = 1
    #: something every release from some version on creates, found missing
    ABSENT = 2


@dataclass(frozen=True, slots=True)
class Evidence:
    """One observation and what it implies.

    ``seen`` is what was observed (in words), ``file`` where (relative to the log dir, or the
    server log's path), ``since``/``until`` the releases it allows (``since`` inclusive,
    ``until`` exclusive; ``None`` = unbounded), ``reason`` why, and ``source`` the Kafka source
    showing it (``A:<tag> <path>``, apache/kafka at that tag).
    """

    seen: str
    file: str | None
    since: KafkaVersion | None
    until: KafkaVersion | None
    reason: str
    source: str
    strength: Strength

    def allows(self, version: KafkaVersion) -> bool:
        if self.since is not None and version < self.since:
            return False
        return self.until is None or version < self.until

    @property
    def implies(self) -> str:
        """The bound in a few characters: ``>= 2.3.0``, ``< 0.10.1.0``, ``= 2.3.0``, ``2.8.0 ..
        < 3.0.0``."""
        if self.since is not None and self.until is not None:
            if self.until == exactly_after(self.since):
                return f"= {self.since}"
            return f">= {self.since} and < {self.until}"
        if self.since is not None:
            return f">= {self.since}"
        if self.until is not None:
            return f"< {self.until}"
        return "any version"

    def to_json(self) -> dict[str, object]:
        return {
            "seen": self.seen,
            "file": self.file,
            "implies": self.implies,
            "since": None if self.since is None else str(self.since),
            "until": None if self.until is None else str(self.until),
            "reason": self.reason,
            "source": self.source,
            "kind": self.strength.name.lower().replace("_", "-"),
        }


def exactly_after(version: KafkaVersion) -> KafkaVersion:
    """The smallest version above ``version``: ``until`` for evidence of exactly ``version``."""
    major, minor, patch, build = version.parts
    return KafkaVersion((major, minor, patch, build + 1))


@dataclass(frozen=True, slots=True)
class VersionRange:
    """The versions every accepted piece of evidence allows: ``since`` inclusive, ``until``
    exclusive (``None``: newer than every known release is possible)."""

    since: KafkaVersion
    until: KafkaVersion | None

    @property
    def lowest(self) -> KafkaVersion:
        return self.since

    @property
    def highest(self) -> KafkaVersion:
        """The newest known release in the range (the lowest bound itself when the range is a
        single version no release list names, e.g. a patch release newer than the list)."""
        if self.until is None:
            return max(RELEASES[-1], self.since)
        newest = last_release_before(self.until)
        return self.since if newest is None or newest < self.since else newest

    def contains(self, version: KafkaVersion) -> bool:
        return version >= self.since and (self.until is None or version < self.until)

    def to_json(self) -> list[str]:
        return [str(self.lowest), str(self.highest)]

    def __str__(self) -> str:
        low, high = self.lowest, self.highest
        return str(low) if low == high else f"{low} to {high}"
