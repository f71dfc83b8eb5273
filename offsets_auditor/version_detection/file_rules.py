"""Pure rules over a log dir's files: the names it holds and the two small files that tell an
era (``meta.properties``, ``.kafka_cleanshutdown``) in, the :class:`~.model.Evidence` out.

Every rule is a fact read in Kafka's source at the tags named (docs/kafka-internals.md §8):

- WRITTEN: a file only a release from some version on creates: a lower bound.
- ABSENT: something every release from some version on creates whenever it runs on a log dir,
  found missing: an upper bound for the broker that last ran on it.
"""

from __future__ import annotations

from collections.abc import Iterable

from offsets_auditor.logdir.layout import (
    CLEAN_SHUTDOWN_FILE,
    LEADER_EPOCH_CHECKPOINT,
    META_PROPERTIES,
    PARTITION_METADATA,
    CheckpointFileName,
)
from offsets_auditor.version_detection.model import Evidence, Strength
from offsets_auditor.version_detection.observations import LogDirObservation
from offsets_auditor.versions import KafkaVersion

V = KafkaVersion.parse


def file_evidence(log_dir: LogDirObservation) -> list[Evidence]:
    """What the files of a log dir show (names and the two small files that tell an era)."""
    found: list[Evidence] = []
    partition_files = {name for p in log_dir.partitions for name in p.files}

    def add(
        seen: str,
        file: str | None,
        since: str | None,
        until: str | None,
        reason: str,
        source: str,
        strength: Strength = Strength.WRITTEN,
    ) -> None:
        found.append(
            Evidence(
                seen,
                file,
                None if since is None else V(since),
                None if until is None else V(until),
                reason,
                source,
                strength,
            )
        )

    def first_with(suffix: str) -> str | None:
        for p in log_dir.partitions:
            for name in sorted(p.files):
                if name.endswith(suffix):
                    return f"{p.name}/{name}"
        return None

    for suffix, since, what, source in (
        (
            ".timeindex",
            "0.10.1.0",
            "time index files",
            "A:0.10.1.0 core/src/main/scala/kafka/log/TimeIndex.scala (absent in A:0.10.0.1)",
        ),
        (
            ".txnindex",
            "0.11.0.0",
            "transaction index files",
            "A:0.11.0.0 core/src/main/scala/kafka/log/TransactionIndex.scala",
        ),
        (
            ".snapshot",
            "0.11.0.0",
            "producer state snapshots",
            "A:0.11.0.0 core/src/main/scala/kafka/log/ProducerStateManager.scala",
        ),
    ):
        where = first_with(suffix)
        if where is not None:
            add(f"{what} ({suffix})", where, since, None, f"first written by Kafka {since}", source)
    for name, since, source in (
        (
            LEADER_EPOCH_CHECKPOINT,
            "0.11.0.0",
            "A:0.11.0.0 core/src/main/scala/kafka/server/checkpoints/"
            "LeaderEpochCheckpointFile.scala",
        ),
        (
            PARTITION_METADATA,
            "2.8.0",
            "A:2.8.0 core/src/main/scala/kafka/server/PartitionMetadataFile.scala (topic IDs,"
            " KIP-516; absent in A:2.7.0)",
        ),
    ):
        where = first_with(name)
        if where is not None:
            add(name, where, since, None, f"first written by Kafka {since}", source)

    if CheckpointFileName.LOG_START in log_dir.root_files:
        add(
            CheckpointFileName.LOG_START.value,
            CheckpointFileName.LOG_START.value,
            "0.11.0.0",
            None,
            "first written by Kafka 0.11.0.0",
            "A:0.11.0.0 core/src/main/scala/kafka/log/LogManager.scala"
            " (LogStartOffsetCheckpointFile)",
        )
    elif CheckpointFileName.RECOVERY_POINT in log_dir.root_files:
        add(
            "no log-start-offset-checkpoint beside recovery-point-offset-checkpoint",
            None,
            None,
            "0.11.0.0",
            "from 0.11.0.0 LogManager creates log-start-offset-checkpoint as it opens a log dir,"
            " together with recovery-point-offset-checkpoint, so no broker that new ran here",
            "A:0.11.0.0 core/src/main/scala/kafka/log/LogManager.scala and"
            " server/checkpoints/CheckpointFile.scala (Files.createFile); same in A:2.3.0 and"
            " A:3.9.0-rc3 (server-common/.../CheckpointFile.java)",
            Strength.ABSENT,
        )
    largest = max((p.largest_log_bytes for p in log_dir.partitions), default=0)
    if (
        not any(name.endswith(".timeindex") for name in partition_files)
        and largest > 4096
        and CheckpointFileName.RECOVERY_POINT in log_dir.root_files
    ):
        add(
            "no .timeindex file in any partition, with segments of more than 4096 bytes",
            None,
            None,
            "0.10.1.0",
            "a 0.10.1+ broker creates the time index of every segment it loads and of every"
            " segment it appends more than index.interval.bytes (4096 by default) to",
            "A:0.10.1.0 core/src/main/scala/kafka/log/LogSegment.scala (new TimeIndex) and"
            " AbstractIndex.scala (createNewFile); A:2.3.0 LogSegment.scala (sanityCheck:"
            " timeIndex.resize(0); append); A:3.9.0-rc3 storage/.../log/LogSegment.java",
            Strength.ABSENT,
        )
    found.extend(_meta_evidence(log_dir))
    found.extend(_marker_evidence(log_dir))
    if "__cluster_metadata-0" in log_dir.root_dirs:
        add(
            "a __cluster_metadata-0 directory (KRaft metadata log)",
            "__cluster_metadata-0",
            "3.0.0",
            None,
            "the KRaft metadata topic is named __cluster_metadata from Kafka 3.0.0",
            "A:3.0.0 core/src/main/scala/kafka/server/KafkaRaftServer.scala (MetadataTopic;"
            ' "@metadata" in A:2.8.0)',
        )
    if "@metadata-0" in log_dir.root_dirs:
        add(
            "an @metadata-0 directory (KRaft metadata log, early access)",
            "@metadata-0",
            "2.8.0",
            "3.0.0",
            "Kafka 2.8.x named the KRaft metadata topic @metadata",
            "A:2.8.0 and A:3.0.0 core/src/main/scala/kafka/server/KafkaRaftServer.scala"
            " (MetadataTopic)",
        )
    return found


def _meta_evidence(log_dir: LogDirObservation) -> Iterable[Evidence]:
    meta = log_dir.meta
    if meta is None:
        return []
    source_v0 = (
        "A:2.4.0 core/src/main/scala/kafka/server/BrokerMetadataCheckpoint.scala (cluster.id)"
    )
    if meta.version == 1 or meta.has_node_id:
        found = [
            Evidence(
                "meta.properties version=1 with node.id (KRaft)",
                META_PROPERTIES,
                V("2.8.0"),
                None,
                "KRaft's meta.properties (version 1, node.id) exists from Kafka 2.8.0",
                "A:2.8.0 core/src/main/scala/kafka/server/BrokerMetadataCheckpoint.scala"
                " (NodeIdKey)",
                Strength.WRITTEN,
            )
        ]
    elif meta.version == 0 and meta.has_cluster_id:
        found = [
            Evidence(
                "meta.properties with cluster.id",
                META_PROPERTIES,
                V("2.4.0"),
                None,
                "brokers write cluster.id into meta.properties from Kafka 2.4.0",
                source_v0,
                Strength.WRITTEN,
            )
        ]
    elif meta.version == 0:
        found = [
            Evidence(
                "meta.properties version=0 without cluster.id",
                META_PROPERTIES,
                None,
                V("2.4.0"),
                "from 2.4.0 a ZooKeeper-mode broker rewrites meta.properties with cluster.id at"
                " every start, once it has registered with ZooKeeper",
                source_v0 + "; A:2.4.0 core/src/main/scala/kafka/server/KafkaServer.scala"
                " (startup: checkpointBrokerMetadata)",
                Strength.ABSENT,
            )
        ]
    else:
        found = []
    if meta.has_directory_id:
        found.append(
            Evidence(
                "meta.properties with directory.id",
                META_PROPERTIES,
                V("3.7.0"),
                None,
                "directory.id is first written by Kafka 3.7.0",
                "A:3.7.0 metadata/src/main/java/org/apache/kafka/metadata/properties/"
                "MetaProperties.java (DIRECTORY_ID_PROP; absent in A:3.6.0)",
                Strength.WRITTEN,
            )
        )
    return found


def _marker_evidence(log_dir: LogDirObservation) -> list[Evidence]:
    content = log_dir.clean_shutdown
    if content is None:
        return []
    source = (
        "A:3.7.0 storage/src/main/java/org/apache/kafka/storage/internals/checkpoint/"
        "CleanShutdownFileHandler.java, written by A:3.7.0 core/src/main/scala/kafka/log/"
        "LogManager.scala (shutdown); A:3.6.0 LogManager wrote an empty file"
    )
    if content.strip():
        return [
            Evidence(
                ".kafka_cleanshutdown holding JSON",
                CLEAN_SHUTDOWN_FILE,
                V("3.7.0"),
                None,
                'from Kafka 3.7.0 the clean-shutdown marker holds {"version":0,"brokerEpoch":N}',
                source,
                Strength.WRITTEN,
            )
        ]
    return [
        Evidence(
            "an empty .kafka_cleanshutdown",
            CLEAN_SHUTDOWN_FILE,
            None,
            V("3.7.0"),
            "from Kafka 3.7.0 a clean shutdown writes the marker with JSON content",
            source,
            Strength.ABSENT,
        )
    ]
