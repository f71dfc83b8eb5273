"""Kafka release versions, compared the way the rules in this package need them."""

from __future__ import annotations

import re
from dataclasses import dataclass

_VERSION = re.compile(r"^(\d+)\.(\d+)(?:\.(\d+))?(?:\.(\d+))?(?:[-.].*)?$")

#: The version library callers get when they pass none. The command line never relies on it: it
#: detects the version from the broker's own files (``offsets_auditor.version_detection``).
DEFAULT_KAFKA_VERSION = "3.9.0"


@dataclass(frozen=True, order=True)
class KafkaVersion:
    """A Kafka release, e.g. ``0.9.0.1``, ``2.3.0`` or ``3.9``.

    Missing components count as 0, so ``3.9`` == ``3.9.0`` and ``0.10.1`` == ``0.10.1.0``.
    Suffixes such as ``-IV1`` or ``-SNAPSHOT`` are ignored.
    """

    parts: tuple[int, int, int, int]

    @classmethod
    def parse(cls, text: str) -> KafkaVersion:
        match = _VERSION.match(text.strip())
        if match is None:
            raise ValueError(
                f"not a Kafka version: {text!r} (expected something like 0.9.0.1, 2.3.0 or 3.9)"
            )
        major, minor, patch, build = (int(g) if g is not None else 0 for g in match.groups())
        return cls((major, minor, patch, build))

    def at_least(self, text: str) -> bool:
        """True if this release is ``text`` or later."""
        return self >= KafkaVersion.parse(text)

    def __str__(self) -> str:
        major, minor, patch, build = self.parts
        if major == 0:
            return f"{major}.{minor}.{patch}.{build}"
        return f"{major}.{minor}.{patch}"


#: Apache Kafka releases, oldest first: the final release tags of ``github:apache/kafka`` (0.8.0
#: to 3.8.0), 3.9.0 (tag ``3.9.0-rc3``, the commit released), and 4.0.0 and 4.1.0 (Confluent's
#: CCS ``v8.0.0``/``v8.1.0`` builds of them, docs/kafka-internals.md §0). A detected version
#: range is expressed in these.
_RELEASE_NAMES = (
    "0.8.0 0.8.1 0.8.1.1 0.8.2.0 0.8.2.1 0.8.2.2 0.9.0.0 0.9.0.1 0.10.0.0 0.10.0.1 0.10.1.0"
    " 0.10.1.1 0.10.2.0 0.10.2.1 0.10.2.2 0.11.0.0 0.11.0.1 0.11.0.2 1.0.0 1.0.1 1.0.2 1.1.0"
    " 1.1.1 2.0.0 2.0.1 2.1.0 2.1.1 2.2.0 2.2.1 2.2.2 2.3.0 2.3.1 2.4.0 2.4.1 2.5.0 2.5.1"
    " 2.6.0 2.6.1 2.6.2 2.6.3 2.7.0 2.7.1 2.7.2 2.8.0 2.8.1 2.8.2 3.0.0 3.0.1 3.0.2 3.1.0"
    " 3.1.1 3.1.2 3.2.0 3.2.1 3.2.2 3.2.3 3.3.0 3.3.1 3.3.2 3.4.0 3.4.1 3.5.0 3.5.1 3.5.2"
    " 3.6.0 3.6.1 3.6.2 3.7.0 3.7.1 3.8.0 3.9.0 4.0.0 4.1.0"
)
RELEASES: tuple[KafkaVersion, ...] = tuple(KafkaVersion.parse(t) for t in _RELEASE_NAMES.split())


def last_release_before(version: KafkaVersion) -> KafkaVersion | None:
    """The newest release strictly before ``version`` (``None`` before the oldest)."""
    return next((r for r in reversed(RELEASES) if r < version), None)
