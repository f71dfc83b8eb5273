"""The broker settings the log cleaner runs with, read and validated as the broker does.

Settings come from the broker's ``server.properties`` and are overridden by the operator's
flags. Defaults and checks by version: 0.9.0.1 / 2.3.0 / 3.8.0
``core/src/main/scala/kafka/server/KafkaConfig.scala`` (``Defaults``, ``validateValues``),
docs/kafka-internals.md §4.1. Topic-level names (``min.cleanable.dirty.ratio`` …) override the
broker-wide defaults (``log.cleaner.min.cleanable.ratio`` …) for ``__consumer_offsets``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from offsets_auditor.cleaner.behaviour import CleanerBehaviour, behaviour_of
from offsets_auditor.constants import INT_MAX
from offsets_auditor.versions import DEFAULT_KAFKA_VERSION, KafkaVersion

LONG_MAX = 2**63 - 1


class ConfigError(ValueError):
    """A setting the broker itself rejects; the message is the broker's reason."""


@dataclass(frozen=True, slots=True)
class CleanerConfig:
    """What the cleaner of one broker runs with. Durations in milliseconds, sizes in bytes."""

    kafka_version: KafkaVersion
    dedupe_buffer_size: int = 134_217_728
    threads: int = 1
    load_factor: float = 0.9
    enabled: bool = True
    min_cleanable_ratio: float = 0.5
    delete_retention_ms: int = 86_400_000
    min_compaction_lag_ms: int = 0
    max_compaction_lag_ms: int = LONG_MAX
    offsets_topic_partitions: int = 50
    segment_bytes: int = 104_857_600
    max_index_bytes: int = 10_485_760
    max_message_bytes: int = 1_000_012
    #: the topic's ``max.message.bytes`` when overridden (else the broker's ``message.max.bytes``)
    topic_max_message_bytes: int | None = None
    #: ``log.cleaner.io.buffer.size``: all threads' read and write buffers together
    io_buffer_size: int = 524_288
    #: ``transaction.max.timeout.ms``: no transaction stays open longer; the coordinator aborts
    #: one whose producer's ``transaction.timeout.ms`` (at most this) expires
    transaction_max_timeout_ms: int = 900_000
    #: how the cleaner of ``kafka_version`` behaves (resolved once, from the version)
    behaviour: CleanerBehaviour = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "behaviour", behaviour_of(self.kafka_version))

    @property
    def memory_per_thread(self) -> int:
        """``min(dedupeBufferSize / numThreads, Int.MaxValue)`` with long division
        (``LogCleaner.CleanerThread``)."""
        return min(self.dedupe_buffer_size // self.threads, INT_MAX)

    @property
    def log_max_message_bytes(self) -> int:
        """``maxLogMessageSize``: the offsets topic's ``max.message.bytes``."""
        if self.topic_max_message_bytes is not None:
            return self.topic_max_message_bytes
        return self.max_message_bytes


#: property name -> (field, parser). Later names in a group win (topic-level over broker-wide).
_PROPERTIES: dict[str, tuple[str, type]] = {
    "log.cleaner.dedupe.buffer.size": ("dedupe_buffer_size", int),
    "log.cleaner.threads": ("threads", int),
    "log.cleaner.io.buffer.load.factor": ("load_factor", float),
    "log.cleaner.enable": ("enabled", bool),
    "log.cleaner.min.cleanable.ratio": ("min_cleanable_ratio", float),
    "log.cleaner.delete.retention.ms": ("delete_retention_ms", int),
    "log.cleaner.min.compaction.lag.ms": ("min_compaction_lag_ms", int),
    "log.cleaner.max.compaction.lag.ms": ("max_compaction_lag_ms", int),
    "offsets.topic.num.partitions": ("offsets_topic_partitions", int),
    "offsets.topic.segment.bytes": ("segment_bytes", int),
    "log.index.size.max.bytes": ("max_index_bytes", int),
    "message.max.bytes": ("max_message_bytes", int),
    "log.cleaner.io.buffer.size": ("io_buffer_size", int),
    "transaction.max.timeout.ms": ("transaction_max_timeout_ms", int),
    # topic-level names, for __consumer_offsets overrides
    "min.cleanable.dirty.ratio": ("min_cleanable_ratio", float),
    "delete.retention.ms": ("delete_retention_ms", int),
    "min.compaction.lag.ms": ("min_compaction_lag_ms", int),
    "max.compaction.lag.ms": ("max_compaction_lag_ms", int),
    "segment.bytes": ("segment_bytes", int),
    "segment.index.bytes": ("max_index_bytes", int),
    "max.message.bytes": ("topic_max_message_bytes", int),
}
_TOPIC_LEVEL = {
    k for k in _PROPERTIES if not k.startswith(("log.", "offsets.", "message.", "transaction."))
}


def default_cleaner_enabled(version: KafkaVersion) -> bool:
    """``log.cleaner.enable`` defaults to false up to 0.9.0.0 and to true from 0.9.0.1."""
    return behaviour_of(version).cleaner_enabled_by_default


def cleaner_config(
    properties: Iterable[tuple[str, str]],
    overrides: Mapping[str, str] | None = None,
    kafka_version: str | None = None,
) -> CleanerConfig:
    """The cleaner config from ``server.properties`` pairs (in file order; a repeated key keeps
    its last value, as ``java.util.Properties`` does) and the operator's overrides.

    Raises :class:`ConfigError` for values the broker would refuse, with its message.
    """
    version = KafkaVersion.parse(kafka_version or DEFAULT_KAFKA_VERSION)
    behaviour = behaviour_of(version)
    values: dict[str, Any] = {}
    merged: dict[str, str] = {}
    for key, value in properties:
        merged[key] = value
    merged.update(overrides or {})
    # broker-wide names first, so topic-level overrides of the same field win
    for key in sorted(merged, key=lambda k: k in _TOPIC_LEVEL):
        if key not in _PROPERTIES:
            continue
        if key == "offsets.topic.segment.bytes" and not behaviour.honours_offsets_segment_bytes:
            # KAFKA-3718: before 0.10.1.0 GroupCoordinator.create never passed it on; the topic
            # was created with segment.bytes=104857600 (a topic override still applies)
            continue
        name, kind = _PROPERTIES[key]
        values[name] = _parse(key, merged[key].strip(), kind)
    values.setdefault("enabled", default_cleaner_enabled(version))
    config = CleanerConfig(kafka_version=version, **values)
    validate(config)
    return config


def _parse(key: str, text: str, kind: type) -> object:
    try:
        if kind is bool:
            if text.lower() not in ("true", "false"):
                raise ValueError
            return text.lower() == "true"
        if kind is int:
            return int(text)
        return float(text)
    except ValueError:
        raise ConfigError(
            f"Invalid value {text} for configuration {key}: Not a number of type"
            f" {'BOOLEAN' if kind is bool else 'LONG' if kind is int else 'DOUBLE'}"
        ) from None


def validate(config: CleanerConfig) -> None:
    """The broker's own checks, in its words (``KafkaConfig`` ``atLeast`` and ``require``)."""
    if config.threads < 0:
        raise ConfigError(
            f"Invalid value {config.threads} for configuration log.cleaner.threads:"
            " Value must be at least 0"
        )
    if config.threads == 0:
        # require(logCleanerDedupeBufferSize / logCleanerThreads > ...) divides by zero
        raise ConfigError(
            "java.lang.ArithmeticException: / by zero (log.cleaner.threads=0: the broker's check"
            " of log.cleaner.dedupe.buffer.size divides by the thread count)"
        )
    if config.dedupe_buffer_size // config.threads <= 1024 * 1024:
        raise ConfigError(
            "requirement failed: log.cleaner.dedupe.buffer.size must be at least 1MB per cleaner"
            f" thread. ({config.dedupe_buffer_size} bytes / {config.threads} threads ="
            f" {config.dedupe_buffer_size // config.threads} bytes; it must be more than 1048576)"
        )
    if config.offsets_topic_partitions < 1:
        raise ConfigError(
            f"Invalid value {config.offsets_topic_partitions} for configuration"
            " offsets.topic.num.partitions: Value must be at least 1"
        )
