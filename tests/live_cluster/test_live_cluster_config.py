"""--command-config (Kafka CLI client properties) -> kafka-python settings, the ApiVersions ->
release table, and the ApiVersions probe against a local socket that behaves like 0.9.0.1."""

from __future__ import annotations

import socket
import ssl
import struct
import threading

import pytest

from offsets_auditor.live_cluster.api_versions import RELEASE_MAX_VERSIONS, release_range
from offsets_auditor.live_cluster.client import connect, parse_bootstrap
from offsets_auditor.live_cluster.client_config import (
    ClientConfig,
    ClientConfigError,
    kafka_python_settings,
    parse_client_properties,
    parse_jaas_config,
)
from offsets_auditor.live_cluster.probe import ProbeOutcome, probe_api_versions
from offsets_auditor.versions import KafkaVersion

SCRAM = (
    "security.protocol=SASL_SSL\n"
    "sasl.mechanism=SCRAM-SHA-512\n"
    "sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required \\\n"
    r'    username="alice" password="p\\\\w\\\"d";'
    "\n"  # properties escapes, then JAAS's
    "ssl.endpoint.identification.algorithm=\n"
    "ssl.enabled.protocols=TLSv1.3,TLSv1.2\n"
    "max.poll.records=10\n"
)


def test_scram_over_tls() -> None:
    config = parse_client_properties(SCRAM)
    assert config.security_protocol == "SASL_SSL" and config.sasl_mechanism == "SCRAM-SHA-512"
    assert (config.sasl_username, config.sasl_password) == ("alice", 'p\\w"d')
    assert config.check_hostname is False and config.minimum_tls is ssl.TLSVersion.TLSv1_2
    assert config.ignored == ("max.poll.records",)
    assert "p\\w" not in repr(config)
    settings = kafka_python_settings(config)
    assert (
        settings["sasl_plain_username"] == "alice" and settings["sasl_plain_password"] == 'p\\w"d'
    )
    context = settings["ssl_context"]
    assert isinstance(context, ssl.SSLContext)
    assert context.check_hostname is False and context.verify_mode == ssl.CERT_REQUIRED
    assert context.minimum_version is ssl.TLSVersion.TLSv1_2


def test_plain_and_defaults() -> None:
    config = parse_client_properties(
        "security.protocol=SASL_PLAINTEXT\nsasl.mechanism=PLAIN\n"
        "sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required"
        ' username="u" password="p";\nclient.id=oncall\nrequest.timeout.ms=5000\n'
    )
    settings = kafka_python_settings(config)
    assert settings == {
        "security_protocol": "SASL_PLAINTEXT",
        "client_id": "oncall",
        "sasl_mechanism": "PLAIN",
        "sasl_plain_username": "u",
        "sasl_plain_password": "p",
    }
    assert config.request_timeout_ms == 5000
    assert kafka_python_settings(parse_client_properties("")) == {
        "security_protocol": "PLAINTEXT",
        "client_id": "offsets-auditor",
    }


def test_pem_truststore_and_keystore(tmp_path) -> None:  # type: ignore[no-untyped-def]
    config = parse_client_properties(
        "security.protocol=SSL\nssl.truststore.type=PEM\nssl.truststore.location=/etc/ca.pem\n"
        "ssl.keystore.type=PEM\nssl.keystore.location=/etc/client.pem\nssl.key.password=k\n"
    )
    assert (config.ca_file, config.cert_file, config.key_password) == (
        "/etc/ca.pem",
        "/etc/client.pem",
        "k",
    )
    assert config.check_hostname is True
    with pytest.raises(OSError):  # the files do not exist: said when the context is built
        kafka_python_settings(config)


@pytest.mark.parametrize(
    ("text", "says"),
    [
        (
            "security.protocol=SSL\nssl.truststore.location=/x.jks\nssl.truststore.password=p",
            "ssl.truststore.type=JKS",
        ),
        (
            "security.protocol=SSL\nssl.keystore.type=PKCS12\nssl.keystore.location=/x.p12",
            "ssl.keystore.type=PKCS12",
        ),
        ("security.protocol=SSL\nssl.keystore.key=-----BEGIN", "inline keystore"),
        ("security.protocol=SSL\nssl.cipher.suites=TLS_AES_128_GCM_SHA256", "ssl.cipher.suites"),
        ("security.protocol=SSL\nssl.provider=SunJSSE", "ssl.provider: not supported"),
        ("security.protocol=SASL_SSL\nsasl.mechanism=OAUTHBEARER", "OAUTHBEARER"),
        ("security.protocol=SASL_SSL\nsasl.mechanism=PLAIN", "needs sasl.jaas.config"),
        (
            "security.protocol=SASL_PLAINTEXT\nsasl.mechanism=GSSAPI\nsasl.jaas.config="
            "com.sun.security.auth.module.Krb5LoginModule required"
            ' useKeyTab=true keyTab="/k" principal="p";',
            "kinit",
        ),
        (
            "security.protocol=SASL_PLAINTEXT\nsasl.mechanism=PLAIN\nsasl.jaas.config="
            "org.apache.kafka.common.security.scram.ScramLoginModule required"
            ' username="u" password="p";',
            "does not go with sasl.mechanism=PLAIN",
        ),
        ("security.protocol=PLAINTEXT\nsasl.mechanism=PLAIN", "use SASL_PLAINTEXT or SASL_SSL"),
        ("security.protocol=TLS", "security.protocol=TLS"),
        ("ssl.enabled.protocols=TLSv1.1", "TLSv1.1"),
        ("request.timeout.ms=-1", "request.timeout.ms=-1"),
    ],
)
def test_unsupported_is_a_clear_error(text: str, says: str) -> None:
    with pytest.raises(ClientConfigError) as error:
        parse_client_properties(text)
    assert says in str(error.value)
    assert "password=p" not in str(error.value)


def test_gssapi_from_the_ticket_cache() -> None:
    config = parse_client_properties(
        "security.protocol=SASL_SSL\nsasl.kerberos.service.name=kafka-prod\nsasl.jaas.config="
        "com.sun.security.auth.module.Krb5LoginModule required useTicketCache=true;"
    )
    settings = kafka_python_settings(config)
    assert (
        settings["sasl_mechanism"] == "GSSAPI"
        and settings["sasl_kerberos_service_name"] == "kafka-prod"
    )


def test_jaas_grammar() -> None:
    module, options = parse_jaas_config('a.B required x=1 y="two words" z="q\\"uote";')
    assert module == "a.B" and options == {"x": "1", "y": "two words", "z": 'q"uote'}


def test_release_range_from_the_table_rows() -> None:
    """Every row of the table places a broker advertising it in its own line (or the range of
    lines sharing its versions); one version less on the discriminating key places it below."""
    for name, versions in RELEASE_MAX_VERSIONS:
        found = release_range(versions)
        assert found.low is not None and found.low <= KafkaVersion.parse(name), name
        assert found.below is None or found.below > KafkaVersion.parse(name), name
    # the real 2.3.0 brokers of tests/fixtures/kafka-2.3.0/cluster advertised these (measured)
    real_230 = {0: 7, 1: 11, 2: 5, 3: 8, 4: 2, 8: 7, 9: 5, 10: 2, 11: 5, 18: 2, 44: 0}
    assert release_range(real_230).text == "2.3.x"
    assert release_range({**real_230, 3: 7}).text == "2.2.x"
    assert (
        release_range({0: 8, 1: 11, 2: 5, 3: 9, 8: 8, 9: 7, 10: 3, 11: 7, 18: 3}).text
        == "2.5.0 to 2.6.x"
    )
    assert (
        release_range({0: 13, 1: 18, 2: 10, 3: 13, 8: 9, 9: 10, 10: 6, 11: 9, 18: 4}).text
        == "4.1.0 or newer"
    )
    assert release_range({}).low is None


def test_parse_bootstrap() -> None:
    assert parse_bootstrap("a:1, b ,[::1]:9093") == [("a", 1), ("b", 9092), ("::1", 9093)]


class _FakeBroker:
    """A listener that behaves like a 0.9.0.1 broker: ApiVersions is read and never answered
    (the connection stays open), ListGroups v0 gets an answer. Or one that answers ApiVersions."""

    def __init__(self, answers_api_versions: bool) -> None:
        self.server = socket.create_server(("127.0.0.1", 0))
        self.port = self.server.getsockname()[1]
        self.answers = answers_api_versions
        self.held: list[socket.socket] = []
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        self.server.settimeout(10)
        for _ in range(2):
            try:
                conn, _ = self.server.accept()
            except OSError:
                return
            size = struct.unpack(">i", conn.recv(4))[0]
            request = conn.recv(size)
            key, _version, correlation = struct.unpack_from(">hhi", request)
            if key == 18 and self.answers:
                body = struct.pack(">ihi", correlation, 0, 2) + struct.pack(
                    ">hhhhhh", 3, 0, 8, 18, 0, 2
                )
            elif key == 18:
                self.held.append(conn)  # 0.9.0.1: dropped, connection left open
                continue
            else:
                body = struct.pack(">ihi", correlation, 0, 0)
            conn.sendall(struct.pack(">i", len(body)) + body)
            conn.close()

    def close(self) -> None:
        for c in self.held:
            c.close()
        self.server.close()


@pytest.mark.parametrize("answers", [True, False])
def test_probe(answers: bool) -> None:
    broker = _FakeBroker(answers)
    try:
        probe = probe_api_versions("127.0.0.1", broker.port, None, 3.0, api_versions_wait_s=0.5)
    finally:
        broker.close()
    if answers:
        assert probe.outcome is ProbeOutcome.ANSWERED and probe.versions == {3: (0, 8), 18: (0, 2)}
    else:
        assert probe.outcome is ProbeOutcome.NO_API_VERSIONS and probe.versions is None
        assert "before Kafka 0.10.0" in probe.reason


def test_nothing_listening_is_an_error_value_quickly() -> None:
    with socket.create_server(("127.0.0.1", 0)) as s:
        port = s.getsockname()[1]
    result = connect(f"127.0.0.1:{port}", ClientConfig(), timeout_s=1.0)
    assert not hasattr(result, "close")
    assert "cannot connect" in result.reason  # type: ignore[union-attr]
