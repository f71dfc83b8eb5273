"""The live cluster beside the disk (optional: only with ``--bootstrap-server``).

What it asks a running cluster, and nothing else (no group is joined, no offset committed):

- each broker's ApiVersions answer, mapped to a Kafka release range (:mod:`.api_versions`;
  0.9 brokers have no ApiVersions and close the connection on it);
- Metadata for ``__consumer_offsets``: every partition's leader, replicas and ISR;
- FindCoordinator for a group (0.9's GroupCoordinator request, v0), and DescribeGroups v0 sent
  to that coordinator, whose error says whether it is still loading the partition
  (:mod:`.client`).

The client library is kafka-python (pure Python, no native library, already the project's
independent record-format implementation in the tests): it speaks every request version from
0.8.0 to 4.x and picks the highest both sides support from the broker's ApiVersions answer
(``kafka/protocol/broker_version_data.py``: tables up to 4.3); for brokers without ApiVersions
(before 0.10.0) it takes the version from its ``api_version`` setting, which :mod:`.client` sets
to (0, 9) when the broker leaves ApiVersions unanswered, as 0.9.0.1 does (:mod:`.probe`;
left to itself, kafka-python 3.0.12 retries ApiVersions until its bootstrap times out: measured
on the real 0.9.0.1 brokers). Against
Kafka 4.x, which removed old request versions (KIP-896), it negotiates versions still served
(Metadata, FindCoordinator and DescribeGroups v0 are kept by 4.1). confluent-kafka (librdkafka)
would need ``broker.version.fallback=0.9.0.1`` and ``api.version.request=false`` set by hand for
0.9 brokers (librdkafka ``CONFIGURATION.md``), and brings a native library; the Java AdminClient
does not support brokers before 0.10.0 at all.
"""
