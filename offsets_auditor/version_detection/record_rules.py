"""Pure rules over what ``__consumer_offsets`` and the server log hold: an observation in,
the :class:`~.model.Evidence` it gives out.

Every rule is a fact read in Kafka's source at the tags named (``A:<tag>`` = apache/kafka at that
tag; docs/kafka-internals.md §8 has the table). A record format only a release from X on writes
is a lower bound; data outlives the broker that wrote it, so never an upper bound. The broker's
own version line pins the version.
"""

from __future__ import annotations

import re

from offsets_auditor.version_detection.model import Evidence, Strength, exactly_after
from offsets_auditor.version_detection.observations import RecordFormats, ServerLogVersion
from offsets_auditor.versions import KafkaVersion

V = KafkaVersion.parse
_GMM_09 = "core/src/main/scala/kafka/coordinator/GroupMetadataManager.scala"
_GMM = "core/src/main/scala/kafka/coordinator/group/GroupMetadataManager.scala"

#: record label -> (first release writing it, what it is, source)
_WRITTEN_RECORDS: dict[str, tuple[str, str, str]] = {
    "offset_commit/v0": (
        "0.8.2.0",
        "OffsetCommitKey v0",
        "A:0.8.2.2 core/src/main/scala/kafka/server/OffsetManager.scala (key and value v0)",
    ),
    "offset_commit/v1": (
        "0.9.0.0",
        "OffsetCommitKey v1",
        f"A:0.9.0.0 {_GMM_09} (CURRENT_OFFSET_KEY_SCHEMA_VERSION = 1)",
    ),
    "group_metadata/v2": (
        "0.9.0.0",
        "GroupMetadataKey (key version 2)",
        f"A:0.9.0.0 {_GMM_09} (GROUP_METADATA_KEY_SCHEMA; absent in A:0.8.2.2)",
    ),
    "offset_commit/v1:v1": (
        "0.9.0.0",
        "OffsetCommitValue v1",
        f"A:0.9.0.0 {_GMM_09} (OFFSET_COMMIT_VALUE_SCHEMA_V1)",
    ),
    "offset_commit/v1:v2": (
        "2.1.0",
        "OffsetCommitValue v2",
        f"A:2.1.0 {_GMM} (OFFSET_COMMIT_VALUE_SCHEMA_V2; absent in A:2.0.1)",
    ),
    "offset_commit/v1:v3": (
        "2.1.0",
        "OffsetCommitValue v3",
        f"A:2.1.0 {_GMM} (OFFSET_COMMIT_VALUE_SCHEMA_V3; absent in A:2.0.1)",
    ),
    "offset_commit/v1:v4": (
        "4.1.0",
        "OffsetCommitValue v4 (flexible)",
        "C:v8.1.0 GroupCoordinatorRecordHelpers.offsetCommitValueVersion (first writer of v4;"
        " docs/kafka-internals.md §2.3)",
    ),
    "group_metadata/v2:v0": (
        "0.9.0.0",
        "GroupMetadataValue v0",
        f"A:0.9.0.0 {_GMM_09} (GROUP_METADATA_VALUE_SCHEMA_V0)",
    ),
    "group_metadata/v2:v1": (
        "0.10.1.0",
        "GroupMetadataValue v1",
        f"A:0.10.1.0 {_GMM_09} (GROUP_METADATA_VALUE_SCHEMA_V1; absent in A:0.10.0.1)",
    ),
    "group_metadata/v2:v2": (
        "2.1.0",
        "GroupMetadataValue v2",
        f"A:2.1.0 {_GMM} (GROUP_METADATA_VALUE_SCHEMA_V2; absent in A:2.0.1)",
    ),
    "group_metadata/v2:v3": (
        "2.3.0",
        "GroupMetadataValue v3",
        f"A:2.3.0 {_GMM} (GROUP_METADATA_VALUE_SCHEMA_V3; absent in A:2.2.2)",
    ),
}

#: new-coordinator record types (the key's int16): (first type, last type, first release, source)
_RECORD_TYPES: tuple[tuple[int, int, str, str], ...] = (
    (
        3,
        8,
        "3.6.0",
        "A:3.6.0 group-coordinator/src/main/java/org/apache/kafka/coordinator/group/"
        "RecordHelpers.java (first release writing consumer-group records; absent in A:3.5.0)",
    ),
    (
        9,
        11,
        "3.9.0",
        "A:3.9.0-rc3 group-coordinator/src/main/resources/common/message/ShareGroup*Key.json"
        " (first release defining share-group records)",
    ),
    (
        12,
        16,
        "4.0.0",
        "C:v8.0.0 group-coordinator/src/main/resources/common/message (docs/kafka-internals.md"
        " §2.6)",
    ),
    (
        17,
        23,
        "4.1.0",
        "C:v8.1.0 group-coordinator/src/main/resources/common/message/StreamsGroup*Key.json"
        " (docs/kafka-internals.md §2.6)",
    ),
)

_MAGICS: dict[int, tuple[str, str]] = {
    1: (
        "0.10.0.0",
        "A:0.10.0.0 core/src/main/scala/kafka/message/Message.scala (MagicValue_V1)",
    ),
    2: (
        "0.11.0.0",
        "A:0.11.0.0 clients/src/main/java/org/apache/kafka/common/record/DefaultRecordBatch.java",
    ),
}

_KEY_LABEL = re.compile(r"^(?P<type>[a-z_]+)/v(?P<version>\d+)$")


def record_evidence(formats: RecordFormats) -> list[Evidence]:
    """What a segment's records show: each magic, key version, value version and codec only
    a release from some version on writes, gives that version as a lower bound."""
    found: list[Evidence] = []

    def written(seen: str, since: str, reason: str, source: str) -> None:
        found.append(Evidence(seen, formats.file, V(since), None, reason, source, Strength.WRITTEN))

    for magic in sorted(formats.magics):
        if magic in _MAGICS:
            since, source = _MAGICS[magic]
            written(
                f"message format v{magic} (magic {magic}) batches",
                since,
                f"magic {magic} is first written by Kafka {since}",
                source,
            )
    for label in sorted(formats.keys | formats.values):
        if label in _WRITTEN_RECORDS:
            since, what, source = _WRITTEN_RECORDS[label]
            written(
                f"{what} records ({label})",
                since,
                f"{what} is first written by Kafka {since}",
                source,
            )
            continue
        match = _KEY_LABEL.match(label)
        if match is None or match["type"] in ("offset_commit", "group_metadata", "unknown"):
            continue
        record_type = int(match["version"])
        for first, last, since, source in _RECORD_TYPES:
            if first <= record_type <= last:
                written(
                    f"new group coordinator record type {record_type} ({label})",
                    since,
                    f"record type {record_type} is first written by Kafka {since}",
                    source,
                )
    if "zstd" in formats.codecs:
        written(
            "zstd-compressed batches",
            "2.1.0",
            "zstd (codec id 4) exists from Kafka 2.1.0",
            "A:2.1.0 clients/src/main/java/org/apache/kafka/common/record/CompressionType.java"
            " (ZSTD; absent in A:2.0.1)",
        )
    return found


def server_log_evidence(seen: ServerLogVersion) -> Evidence | None:
    """The broker's own start-up line (``AppInfoParser.registerAppInfo``): "Kafka version : X"
    (A:0.9.0.1 .. A:2.1.1) or "Kafka version: X" (A:2.2.0+). With Kafka's default
    ``config/log4j.properties`` it reaches ``server.log`` from 0.11.0 (root logger on the
    ``kafkaAppender``); 0.9-0.10.2 print it to stdout only (``kafkaServer.out``). ``None`` for a
    version text that is not an Apache Kafka release number (a vendor build such as
    ``7.3.0-ccs``)."""
    text = seen.version.strip()
    if re.fullmatch(r"\d+\.\d+(\.\d+){0,2}", text) is None:
        return None
    version = V(text)
    return Evidence(
        f"the broker's start-up line {seen.line.strip()!r}",
        seen.file,
        version,
        exactly_after(version),
        "the broker prints its own version when it starts (the last start in the file counts)",
        "A:0.9.0.1 / A:2.2.0 clients/src/main/java/org/apache/kafka/common/utils/"
        "AppInfoParser.java (registerAppInfo)",
        Strength.SERVER_LOG,
    )
