"""A broker's Kafka release range from its ApiVersions answer.

ApiVersions (api key 18) exists from Kafka 0.10.0 (KIP-35); a 0.9 broker closes the connection on
it (see :mod:`offsets_auditor.live_cluster`). Every release raises the highest version of some
requests, so the highest versions a broker advertises place it between two release lines.

:data:`RELEASE_MAX_VERSIONS` is the highest version of nine requests in the first release of each
line, read from Kafka's own source by ``scripts/tools/api_versions_table.py`` (2.2.0+:
``clients/src/main/resources/common/message/<Name>Request.json`` ``validVersions``, an unstable
latest version left out; 0.11.0-2.1: ``clients/.../common/requests/<Name>Request.java``
``schemaVersions()``; 0.10.x and 0.11.0's coordinator: ``clients/.../common/protocol/
Protocol.java``; A:<tag>; 4.0.0 and 4.1.0 from C:v8.0.0 and C:v8.1.0). The real 2.3.0 brokers of
``tests/fixtures/kafka-2.3.0/cluster`` advertised exactly the 2.3.0 row.

A line's patch releases advertise the line's versions; lines that raised none of the nine share
a row's versions, so a broker of either is placed in both (e.g. 2.5.0 to 2.6.x).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final

from offsets_auditor.versions import KafkaVersion

#: api key -> request name, for the keys of :data:`RELEASE_MAX_VERSIONS`
API_NAMES: Final = {
    0: "Produce",
    1: "Fetch",
    2: "ListOffsets",
    3: "Metadata",
    8: "OffsetCommit",
    9: "OffsetFetch",
    10: "FindCoordinator",
    11: "JoinGroup",
    18: "ApiVersions",
}

#: (first release of a line, {api key: highest request version}), oldest first
RELEASE_MAX_VERSIONS: Final[tuple[tuple[str, dict[int, int]], ...]] = (
    ("0.10.0.0", {0: 2, 1: 2, 2: 0, 3: 1, 8: 2, 9: 1, 10: 0, 11: 0, 18: 0}),
    ("0.10.1.0", {0: 2, 1: 3, 2: 1, 3: 2, 8: 2, 9: 1, 10: 0, 11: 1, 18: 0}),
    ("0.10.2.0", {0: 2, 1: 3, 2: 1, 3: 2, 8: 2, 9: 2, 10: 0, 11: 1, 18: 0}),
    ("0.11.0.0", {0: 3, 1: 5, 2: 2, 3: 4, 8: 3, 9: 3, 10: 1, 11: 2, 18: 1}),
    ("1.0.0", {0: 5, 1: 6, 2: 2, 3: 5, 8: 3, 9: 3, 10: 1, 11: 2, 18: 1}),
    ("1.1.0", {0: 5, 1: 7, 2: 2, 3: 5, 8: 3, 9: 3, 10: 1, 11: 2, 18: 1}),
    ("2.0.0", {0: 6, 1: 8, 2: 3, 3: 6, 8: 4, 9: 4, 10: 2, 11: 3, 18: 2}),
    ("2.1.0", {0: 7, 1: 10, 2: 4, 3: 7, 8: 6, 9: 5, 10: 2, 11: 3, 18: 2}),
    ("2.2.0", {0: 7, 1: 10, 2: 5, 3: 7, 8: 6, 9: 5, 10: 2, 11: 4, 18: 2}),
    ("2.3.0", {0: 7, 1: 11, 2: 5, 3: 8, 8: 7, 9: 5, 10: 2, 11: 5, 18: 2}),
    ("2.4.0", {0: 8, 1: 11, 2: 5, 3: 9, 8: 8, 9: 6, 10: 3, 11: 6, 18: 3}),
    ("2.5.0", {0: 8, 1: 11, 2: 5, 3: 9, 8: 8, 9: 7, 10: 3, 11: 7, 18: 3}),
    ("2.6.0", {0: 8, 1: 11, 2: 5, 3: 9, 8: 8, 9: 7, 10: 3, 11: 7, 18: 3}),
    ("2.7.0", {0: 8, 1: 12, 2: 5, 3: 9, 8: 8, 9: 7, 10: 3, 11: 7, 18: 3}),
    ("2.8.0", {0: 9, 1: 12, 2: 6, 3: 11, 8: 8, 9: 7, 10: 3, 11: 7, 18: 3}),
    ("3.0.0", {0: 9, 1: 12, 2: 7, 3: 11, 8: 8, 9: 8, 10: 4, 11: 7, 18: 3}),
    ("3.1.0", {0: 9, 1: 13, 2: 7, 3: 12, 8: 8, 9: 8, 10: 4, 11: 7, 18: 3}),
    ("3.2.0", {0: 9, 1: 13, 2: 7, 3: 12, 8: 8, 9: 8, 10: 4, 11: 9, 18: 3}),
    ("3.3.0", {0: 9, 1: 13, 2: 7, 3: 12, 8: 8, 9: 8, 10: 4, 11: 9, 18: 3}),
    ("3.4.0", {0: 9, 1: 13, 2: 7, 3: 12, 8: 8, 9: 8, 10: 4, 11: 9, 18: 3}),
    ("3.5.0", {0: 9, 1: 15, 2: 8, 3: 12, 8: 8, 9: 8, 10: 4, 11: 9, 18: 3}),
    ("3.6.0", {0: 9, 1: 15, 2: 8, 3: 12, 8: 8, 9: 8, 10: 4, 11: 9, 18: 3}),
    ("3.7.0", {0: 10, 1: 16, 2: 8, 3: 12, 8: 9, 9: 9, 10: 4, 11: 9, 18: 3}),
    ("3.8.0", {0: 11, 1: 16, 2: 8, 3: 12, 8: 9, 9: 9, 10: 5, 11: 9, 18: 3}),
    ("3.9.0", {0: 11, 1: 17, 2: 9, 3: 12, 8: 9, 9: 9, 10: 6, 11: 9, 18: 4}),
    ("4.0.0", {0: 12, 1: 17, 2: 10, 3: 13, 8: 9, 9: 9, 10: 6, 11: 9, 18: 4}),
    ("4.1.0", {0: 13, 1: 18, 2: 10, 3: 13, 8: 9, 9: 9, 10: 6, 11: 9, 18: 4}),
)


@dataclass(frozen=True, slots=True)
class ReleaseRange:
    """``low`` <= the broker's release < ``below`` (``below`` ``None``: no upper bound
    known: newer than every line in the table, or as new as the newest). ``text`` says it for
    a reader, e.g. ``2.3.x`` or ``2.5.0 to 2.6.x``."""

    low: KafkaVersion | None
    below: KafkaVersion | None
    text: str


def release_range(max_versions: Mapping[int, int]) -> ReleaseRange:
    """Where a broker that advertises these highest versions (api key -> max) sits. Keys
    missing from the answer count as not supported (-1)."""
    lines = [(KafkaVersion.parse(name), versions) for name, versions in RELEASE_MAX_VERSIONS]
    at_least = [
        i
        for i, (_, versions) in enumerate(lines)
        if all(max_versions.get(k, -1) >= v for k, v in versions.items())
    ]
    if not at_least:
        return ReleaseRange(None, lines[0][0], f"older than {lines[0][0]} (or not Apache Kafka)")
    last = at_least[-1]
    versions = lines[last][1]
    first = last
    while first > 0 and lines[first - 1][1] == versions:
        first -= 1
    low, newest = lines[first][0], lines[last][0]
    below = lines[last + 1][0] if last + 1 < len(lines) else None
    if below is None:
        text = f"{low} or newer"
    elif first == last:
        text = _line(low)
    else:
        text = f"{low} to {_line(newest)}"
    return ReleaseRange(low, below, text)


def _line(version: KafkaVersion) -> str:
    """``2.3.0`` -> ``2.3.x``, ``0.10.1.0`` -> ``0.10.1.x``."""
    major, minor, patch, _ = version.parts
    return f"0.{minor}.{patch}.x" if major == 0 else f"{major}.{minor}.x"
