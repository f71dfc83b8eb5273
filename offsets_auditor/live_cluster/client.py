"""Read-only questions to a running cluster, through kafka-python (see the package docstring).

:func:`connect` bootstraps from ``--bootstrap-server`` (after an ApiVersions probe of the
bootstrap broker decides whether kafka-python may negotiate versions or must be told 0.9);
:class:`LiveCluster` then answers, each call bounded by the timeout and returning a value (a
:class:`LiveError` with a one-line reason when the cluster could not answer):

- :meth:`LiveCluster.offsets_topic`: Metadata for ``__consumer_offsets`` as
  :class:`~offsets_auditor.cluster.metadata.OffsetsTopicMetadata` (leader epochs from Metadata
  v7, Kafka 2.1+);
- :meth:`LiveCluster.find_coordinator`: FindCoordinator (0.9: GroupCoordinator v0) for a group,
  then DescribeGroups v0 to the broker named, whose error code says whether it is loading:
  ``COORDINATOR_LOAD_IN_PROGRESS`` (14; 0.9's ``GROUP_LOAD_IN_PROGRESS``, the same code). Kafka
  checks it for DescribeGroups and OffsetFetch alike (A:0.9.0.1 ``GroupCoordinator.scala``
  ``handleDescribeGroup``/``handleFetchOffsets``; A:2.3.0 ``validateGroupStatus``); DescribeGroups
  needs no topic. In 0.9.0.1 a broker answers ``NOT_COORDINATOR_FOR_GROUP`` (16) while it loads
  a partition it did not lead before: its not-coordinator check comes first and a partition is
  owned only when its load ends (A:0.9.0.1 ``GroupMetadataManager.loadGroupsForPartition``,
  ``ownedPartitions.add`` in ``finally``); from 2.x the load check comes first;
- :meth:`LiveCluster.broker_versions`: every broker's ApiVersions and release range.

Side effect to know: a cluster that has no ``__consumer_offsets`` yet creates it when asked
FindCoordinator (all versions) or, before 0.11, Metadata for it (A:0.9.0.1 ``KafkaApis``
``getTopicMetadata``); a cluster with groups has it already.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from offsets_auditor.cluster.metadata import (
    MetadataSource,
    OffsetsTopicMetadata,
    PartitionLeadership,
)
from offsets_auditor.constants import OFFSETS_TOPIC
from offsets_auditor.live_cluster.api_versions import ReleaseRange, release_range
from offsets_auditor.live_cluster.client_config import (
    ClientConfig,
    kafka_python_settings,
    ssl_context,
)
from offsets_auditor.live_cluster.probe import ProbeOutcome, probe_api_versions

#: kafka-python's setting for brokers without ApiVersions
PRE_API_VERSIONS = (0, 9)


@dataclass(frozen=True, slots=True)
class LiveError:
    """The cluster could not answer; ``reason`` is one line."""

    reason: str


class CoordinatorState(StrEnum):
    READY = "ready"  # DescribeGroups answered: the group is loaded
    LOADING = "loading"  # COORDINATOR_LOAD_IN_PROGRESS
    NOT_COORDINATOR = "not-coordinator"  # NOT_COORDINATOR (0.9: also while loading)
    NOT_AVAILABLE = "not-available"  # COORDINATOR_NOT_AVAILABLE, or no leader
    UNKNOWN = "unknown"  # not asked (FindCoordinator failed) or another error


@dataclass(frozen=True, slots=True)
class CoordinatorLookup:
    """FindCoordinator's answer for ``group_id`` (``node_id``/``host``/``port``: ``None``
    when it answered an error, named in ``error``), and the named broker's state for it."""

    group_id: str
    node_id: int | None
    host: str | None
    port: int | None
    error: str | None
    state: CoordinatorState
    reason: str
    group_state: str | None = None


@dataclass(frozen=True, slots=True)
class BrokerVersions:
    """One broker's ApiVersions: ``api_versions`` ``None`` when it has none (before 0.10.0)
    or could not be asked; ``release`` the range it places the broker in."""

    node_id: int
    host: str
    port: int
    api_versions: dict[int, tuple[int, int]] | None
    release: ReleaseRange | None
    reason: str


def _error_name(code: int) -> str:
    import kafka.errors as errors

    return str(getattr(errors.for_code(code), "message", code))


def parse_bootstrap(text: str) -> list[tuple[str, int]]:
    """``host:port[,host:port...]`` (a bare host gets 9092; ``[v6]:port`` brackets)."""
    out = []
    for item in (s.strip() for s in text.split(",")):
        if not item:
            continue
        host, _, port = (
            item.rpartition(":") if item.rsplit(":", 1)[-1].isdigit() else (item, "", "")
        )
        host = host.strip("[]")
        out.append((host, int(port) if port else 9092))
    return out


class LiveCluster:
    """A bootstrapped kafka-python client; close it (or use ``with``)."""

    def __init__(
        self, net_client: Any, config: ClientConfig, timeout_s: float, pre_api_versions: bool
    ):
        self._client = net_client
        self._config = config
        self._timeout_ms = int(timeout_s * 1000)
        self._timeout_s = timeout_s
        self.pre_api_versions = pre_api_versions

    def __enter__(self) -> LiveCluster:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self._client.close()

    def _ask(self, node_id: Any, request: Any) -> Any:
        return self._client.send_and_receive(node_id, request, self._timeout_ms)

    def _any_node(self) -> Any:
        return self._client.least_loaded_node(bootstrap_fallback=True)

    def brokers(self) -> list[tuple[int, str, int]]:
        """(node id, host, port) of every broker in the cluster's metadata."""
        return sorted((b.node_id, b.host, b.port) for b in self._client.cluster.brokers())

    def offsets_topic(self) -> OffsetsTopicMetadata | LiveError:
        from kafka.protocol.metadata import MetadataRequest

        node = self._any_node()
        try:
            request = MetadataRequest(topics=[OFFSETS_TOPIC], allow_auto_topic_creation=False)
            response = self._ask(node, request)
        except Exception as error:  # kafka-python's errors and socket errors alike
            return LiveError(f"Metadata from broker {node}: {type(error).__name__}: {error}")
        version = response.API_VERSION
        cluster_id = getattr(response, "cluster_id", None) if version >= 2 else None
        where = f"Metadata v{version} from broker {node}"
        topic = next((t for t in response.topics if t.name == OFFSETS_TOPIC), None)
        if topic is None or topic.error_code == 3:  # UNKNOWN_TOPIC_OR_PARTITION
            return OffsetsTopicMetadata(MetadataSource.LIVE, False, (), where, cluster_id)
        if topic.error_code != 0:
            return LiveError(f"{where}: {OFFSETS_TOPIC}: {_error_name(topic.error_code)}")
        partitions = tuple(
            PartitionLeadership(
                p.partition_index,
                p.leader_id,
                tuple(p.replica_nodes),
                tuple(p.isr_nodes),
                p.leader_epoch if version >= 7 else None,
            )
            for p in sorted(topic.partitions, key=lambda p: p.partition_index)
        )
        return OffsetsTopicMetadata(MetadataSource.LIVE, True, partitions, where, cluster_id)

    def find_coordinator(self, group_id: str) -> CoordinatorLookup | LiveError:
        from kafka.protocol.admin import DescribeGroupsRequest
        from kafka.protocol.metadata import FindCoordinatorRequest

        node = self._any_node()
        try:
            found = self._ask(node, FindCoordinatorRequest(key=group_id, key_type=0, max_version=3))
        except Exception as error:
            return LiveError(f"FindCoordinator to broker {node}: {type(error).__name__}: {error}")
        asked = f"FindCoordinator v{found.API_VERSION} to broker {node}"
        if found.error_code != 0:
            name = _error_name(found.error_code)
            return CoordinatorLookup(
                group_id, None, None, None, name, CoordinatorState.NOT_AVAILABLE, f"{asked}: {name}"
            )
        coordinator = found.node_id
        named = (group_id, coordinator, found.host, found.port, None)
        try:
            described = self._ask(
                coordinator, DescribeGroupsRequest(groups=[group_id], max_version=0)
            )
        except Exception as error:
            return CoordinatorLookup(
                *named,
                CoordinatorState.UNKNOWN,
                f"DescribeGroups to broker {coordinator}: {type(error).__name__}: {error}",
            )
        group = described.groups[0]
        state, reason = _state(group.error_code, coordinator, self.pre_api_versions)
        return CoordinatorLookup(*named, state, reason, group.group_state or None)

    def broker_versions(self) -> tuple[BrokerVersions, ...]:
        """Every broker's ApiVersions answer, one probe each (bounded by the timeout)."""
        context = ssl_context(self._config)
        out = []
        for node_id, host, port in self.brokers():
            probe = probe_api_versions(host, port, context, self._timeout_s, self._config.client_id)
            if probe.outcome is ProbeOutcome.ANSWERED and probe.versions is not None:
                maxima = {k: high for k, (_, high) in probe.versions.items()}
                release = release_range(maxima)
                reason = f"ApiVersions: Kafka {release.text}"
            else:
                release = None
                reason = probe.reason
            out.append(BrokerVersions(node_id, host, port, probe.versions, release, reason))
        return tuple(out)


def _state(code: int, node: int, pre_api_versions: bool) -> tuple[CoordinatorState, str]:
    name = _error_name(code)
    if code == 0:
        return CoordinatorState.READY, f"broker {node} has the group loaded"
    if code == 14:
        return CoordinatorState.LOADING, f"broker {node}: {name}: it is loading the partition"
    if code == 16:
        why = (
            "it has not taken up (or has given up) the partition's leadership that"
            " FindCoordinator's metadata names, as right after the topic is created or a"
            " leader moves"
        )
        if pre_api_versions:
            why += "; a 0.9 coordinator also answers this while it loads a partition"
        return CoordinatorState.NOT_COORDINATOR, f"broker {node}: {name}: {why}"
    if code == 15:
        return CoordinatorState.NOT_AVAILABLE, f"broker {node}: {name}"
    return CoordinatorState.UNKNOWN, f"DescribeGroups to broker {node}: {name}"


def connect(
    bootstrap: str, config: ClientConfig, timeout_s: float = 10.0
) -> LiveCluster | LiveError:
    """Bootstrap from ``bootstrap``: probe ApiVersions on each server until one answers (or
    shows it has none), then bootstrap kafka-python (told 0.9 when the broker has none).
    Never blocks longer than about ``timeout_s`` per server tried plus ``timeout_s``."""
    servers = parse_bootstrap(bootstrap)
    if not servers:
        return LiveError(f"no bootstrap server in {bootstrap!r}")
    try:
        context = ssl_context(config)
    except (OSError, ValueError) as error:
        return LiveError(f"TLS settings: {error}")
    failures: list[str] = []
    for host, port in servers:
        probe = probe_api_versions(host, port, context, timeout_s, config.client_id)
        if probe.outcome is ProbeOutcome.FAILED:
            failures.append(probe.reason)
            continue
        old = probe.outcome is ProbeOutcome.NO_API_VERSIONS
        return _bootstrap(f"{host}:{port}", config, timeout_s, old)
    return LiveError("; ".join(failures))


def _bootstrap(
    server: str, config: ClientConfig, timeout_s: float, old: bool
) -> LiveCluster | LiveError:
    from kafka.net.compat import KafkaNetClient

    settings = kafka_python_settings(config)
    timeout_ms = config.request_timeout_ms or int(timeout_s * 1000)
    client = None
    try:
        client = KafkaNetClient(
            bootstrap_servers=server,
            api_version=PRE_API_VERSIONS if old else None,
            request_timeout_ms=timeout_ms,
            socket_connection_setup_timeout_ms=timeout_ms,
            **settings,
        )
        started = time.monotonic()
        client._manager.bootstrap(int(timeout_s * 1000))
        if not client.cluster.brokers():
            raise RuntimeError(
                f"no brokers in the metadata after {time.monotonic() - started:.1f} s"
            )
    except Exception as error:
        if client is not None:
            client.close()
        return LiveError(f"bootstrap from {server}: {type(error).__name__}: {error}")
    return LiveCluster(client, config, timeout_ms / 1000, old)


def lookup_many(
    cluster: LiveCluster, group_ids: Sequence[str]
) -> list[CoordinatorLookup | LiveError]:
    """FindCoordinator (and the loading check) for each group, one after the other."""
    return [cluster.find_coordinator(g) for g in group_ids]
