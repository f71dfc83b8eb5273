"""Kafka release versions, compared the way the rules in this package need them."""

from __future__ import annotations

import re
from dataclasses import dataclass

_VERSION = re.compile(r"^(\d+)\.(\d+)(?:\.(\d+))?(?:\.(\d+))?(?:[-.].*)?$")

#: The broker version assumed when the operator does not say (a recent 3.x).
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
