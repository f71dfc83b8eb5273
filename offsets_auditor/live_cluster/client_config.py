"""A Kafka CLI ``--command-config`` file (client properties) turned into kafka-python's settings.

Kafka's names (A:3.9 ``clients/src/main/java/org/apache/kafka/common/config/SslConfigs.java``,
``SaslConfigs.java``, ``CommonClientConfigs.java``) and what each becomes:

===============================================  ===============================================
``security.protocol``                            ``security_protocol`` (PLAINTEXT, SSL,
                                                 SASL_PLAINTEXT, SASL_SSL)
``ssl.truststore.type=PEM`` + ``.location``      CA file; ``ssl.truststore.certificates``: CA PEM
``ssl.keystore.type=PEM`` + ``.location``        client certificate chain and key, one PEM file
``ssl.key.password`` (else keystore password)    the private key's password
``ssl.endpoint.identification.algorithm``        ``https`` (default): check the host name; empty:
                                                 do not
``ssl.protocol`` / ``ssl.enabled.protocols``     the lowest TLS version allowed
``sasl.mechanism``                               PLAIN, SCRAM-SHA-256, SCRAM-SHA-512, GSSAPI
``sasl.jaas.config``                             PlainLoginModule / ScramLoginModule ``username``
                                                 and ``password``; Krb5LoginModule from the
                                                 ticket cache
``sasl.kerberos.service.name``                   the broker's Kerberos service name
``client.id``, ``request.timeout.ms``            the same
===============================================  ===============================================

Unsupported, each with a clear error rather than a silent difference: JKS and PKCS12 stores
(Python's ``ssl`` reads PEM: convert them), the inline keystore (``ssl.keystore.key``,
``ssl.keystore.certificate.chain``), ``ssl.cipher.suites`` (Java names), OAUTHBEARER (needs a
token provider), a Kerberos keytab login (``useKeyTab=true``: kafka-python uses the ticket
cache; run ``kinit`` first), and any other ``ssl.``/``sasl.``/``security.`` key. Other keys
(producer or consumer settings in a shared file) are listed in ``ignored``.
"""

from __future__ import annotations

import re
import ssl
from dataclasses import dataclass, field
from typing import Any, Final

from offsets_auditor.logdir.meta_properties import parse_java_properties

PROTOCOLS: Final = ("PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL")
MECHANISMS: Final = ("PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512", "GSSAPI")
_TLS: Final = {"TLSv1.2": ssl.TLSVersion.TLSv1_2, "TLSv1.3": ssl.TLSVersion.TLSv1_3}
_LOGIN_MODULES: Final = {
    "org.apache.kafka.common.security.plain.PlainLoginModule": ("PLAIN",),
    "org.apache.kafka.common.security.scram.ScramLoginModule": ("SCRAM-SHA-256", "SCRAM-SHA-512"),
    "com.sun.security.auth.module.Krb5LoginModule": ("GSSAPI",),
}
#: keys read here; any other ssl./sasl./security. key is refused
_HANDLED: Final = frozenset(
    {
        "security.protocol",
        "ssl.truststore.type",
        "ssl.truststore.location",
        "ssl.truststore.certificates",
        "ssl.truststore.password",
        "ssl.keystore.type",
        "ssl.keystore.location",
        "ssl.keystore.password",
        "ssl.key.password",
        "ssl.endpoint.identification.algorithm",
        "ssl.protocol",
        "ssl.enabled.protocols",
        "ssl.keystore.key",
        "ssl.keystore.certificate.chain",
        "ssl.cipher.suites",
        "ssl.keymanager.algorithm",  # JVM key manager factories: nothing to map, nothing lost
        "ssl.trustmanager.algorithm",
        "sasl.mechanism",
        "sasl.jaas.config",
        "sasl.kerberos.service.name",
        "client.id",
        "request.timeout.ms",
    }
)


class ClientConfigError(ValueError):
    """A property this client cannot honour; the message names it and says what to do."""


@dataclass(frozen=True)
class ClientConfig:
    """The settings read from a client properties file. ``ignored``: keys not about the
    connection. Passwords are kept out of ``repr``."""

    security_protocol: str = "PLAINTEXT"
    ca_file: str | None = None
    ca_pem: str | None = None
    cert_file: str | None = None
    key_password: str | None = field(default=None, repr=False)
    check_hostname: bool = True
    minimum_tls: ssl.TLSVersion | None = None
    sasl_mechanism: str | None = None
    sasl_username: str | None = None
    sasl_password: str | None = field(default=None, repr=False)
    kerberos_service_name: str = "kafka"
    client_id: str = "offsets-auditor"
    request_timeout_ms: int | None = None
    ignored: tuple[str, ...] = ()

    @property
    def uses_tls(self) -> bool:
        return self.security_protocol in ("SSL", "SASL_SSL")

    @property
    def uses_sasl(self) -> bool:
        return self.security_protocol in ("SASL_PLAINTEXT", "SASL_SSL")


def parse_client_properties(text: str) -> ClientConfig:
    """The :class:`ClientConfig` of a properties file's text; raises
    :class:`ClientConfigError` for what it cannot honour."""
    props = dict(parse_java_properties(text))
    refused = sorted(
        k for k in props if k.startswith(("ssl.", "sasl.", "security.")) and k not in _HANDLED
    )
    if refused:
        raise ClientConfigError(
            f"{', '.join(refused)}: not supported by offsets-auditor's client (kafka-python);"
            " remove them or use a properties file with only the connection settings"
        )
    protocol = props.get("security.protocol", "PLAINTEXT").strip().upper()
    if protocol not in PROTOCOLS:
        raise ClientConfigError(
            f"security.protocol={protocol}: expected one of {', '.join(PROTOCOLS)}"
        )
    settings: dict[str, Any] = {"security_protocol": protocol}
    settings.update(_trust(props))
    settings.update(_identity(props))
    settings.update(_tls_rules(props))
    if protocol.startswith("SASL_"):
        settings.update(_sasl(props))
    elif "sasl.mechanism" in props or "sasl.jaas.config" in props:
        raise ClientConfigError(
            f"sasl.* is set but security.protocol={protocol}: use SASL_PLAINTEXT or SASL_SSL"
        )
    if "client.id" in props:
        settings["client_id"] = props["client.id"]
    if "request.timeout.ms" in props:
        settings["request_timeout_ms"] = _positive_int(props, "request.timeout.ms")
    settings["ignored"] = tuple(sorted(k for k in props if k not in _HANDLED))
    return ClientConfig(**settings)


def _trust(props: dict[str, str]) -> dict[str, Any]:
    kind = props.get("ssl.truststore.type", "JKS" if "ssl.truststore.location" in props else "PEM")
    stores = "ssl.truststore.location" in props or "ssl.truststore.certificates" in props
    if stores and kind.upper() != "PEM":
        raise ClientConfigError(
            f"ssl.truststore.type={kind}: only PEM is read here (Python's ssl). Export the CA"
            " certificates (keytool -exportcert -rfc -keystore STORE -alias CA > ca.pem) and"
            " set ssl.truststore.type=PEM, ssl.truststore.location=ca.pem"
        )
    out: dict[str, Any] = {}
    if "ssl.truststore.location" in props:
        out["ca_file"] = props["ssl.truststore.location"]
    if "ssl.truststore.certificates" in props:
        out["ca_pem"] = props["ssl.truststore.certificates"]
    return out


def _identity(props: dict[str, str]) -> dict[str, Any]:
    if "ssl.keystore.key" in props or "ssl.keystore.certificate.chain" in props:
        raise ClientConfigError(
            "ssl.keystore.key / ssl.keystore.certificate.chain (an inline keystore) are not"
            " supported: put the certificate chain and key in one PEM file and set"
            " ssl.keystore.type=PEM, ssl.keystore.location=FILE"
        )
    if "ssl.keystore.location" not in props:
        return {}
    kind = props.get("ssl.keystore.type", "JKS")
    if kind.upper() != "PEM":
        raise ClientConfigError(
            f"ssl.keystore.type={kind}: only PEM is read here. Convert the keystore (openssl"
            " pkcs12 -in store.p12 -out client.pem) and set ssl.keystore.type=PEM,"
            " ssl.keystore.location=client.pem (certificate chain and private key in one file)"
        )
    return {
        "cert_file": props["ssl.keystore.location"],
        "key_password": props.get("ssl.key.password", props.get("ssl.keystore.password")),
    }


def _tls_rules(props: dict[str, str]) -> dict[str, Any]:
    if props.get("ssl.cipher.suites", "").strip():
        raise ClientConfigError(
            "ssl.cipher.suites is not supported (Java cipher suite names): remove it to use"
            " Python's default suites"
        )
    out: dict[str, Any] = {}
    algorithm = props.get("ssl.endpoint.identification.algorithm", "https").strip().lower()
    if algorithm not in ("https", ""):
        raise ClientConfigError(
            f"ssl.endpoint.identification.algorithm={algorithm}: expected https or empty"
        )
    out["check_hostname"] = algorithm == "https"
    names = [props["ssl.protocol"]] if "ssl.protocol" in props else []
    names += [n.strip() for n in props.get("ssl.enabled.protocols", "").split(",") if n.strip()]
    if names:
        unknown = [n for n in names if n not in _TLS and n != "TLS"]
        if unknown:
            raise ClientConfigError(
                f"TLS protocol(s) {', '.join(unknown)}: expected TLSv1.2, TLSv1.3"
            )
        known = [_TLS[n] for n in names if n in _TLS]
        if known:
            out["minimum_tls"] = min(known)
    return out


def _sasl(props: dict[str, str]) -> dict[str, Any]:
    mechanism = props.get("sasl.mechanism", "GSSAPI").strip().upper()  # Kafka's default
    if mechanism == "OAUTHBEARER":
        raise ClientConfigError(
            "sasl.mechanism=OAUTHBEARER is not supported (it needs a token provider); use"
            " PLAIN, SCRAM-SHA-256, SCRAM-SHA-512 or GSSAPI"
        )
    if mechanism not in MECHANISMS:
        raise ClientConfigError(
            f"sasl.mechanism={mechanism}: expected one of {', '.join(MECHANISMS)}"
        )
    out: dict[str, Any] = {"sasl_mechanism": mechanism}
    if "sasl.kerberos.service.name" in props:
        out["kerberos_service_name"] = props["sasl.kerberos.service.name"]
    jaas = props.get("sasl.jaas.config")
    if jaas is None:
        if mechanism != "GSSAPI":
            raise ClientConfigError(f"sasl.mechanism={mechanism} needs sasl.jaas.config")
        return out
    module, options = parse_jaas_config(jaas)
    allowed = _LOGIN_MODULES.get(module)
    if allowed is None or mechanism not in allowed:
        raise ClientConfigError(
            f"sasl.jaas.config: {module} does not go with sasl.mechanism={mechanism}"
        )
    if mechanism == "GSSAPI":
        if options.get("useKeyTab", "false").lower() == "true":
            raise ClientConfigError(
                "sasl.jaas.config: Krb5LoginModule with useKeyTab=true is not supported:"
                " kafka-python uses the Kerberos ticket cache. Run kinit -kt KEYTAB PRINCIPAL"
                " first and drop useKeyTab"
            )
        return out
    if "username" not in options or "password" not in options:
        raise ClientConfigError("sasl.jaas.config: username and password are required")
    out["sasl_username"] = options["username"]
    out["sasl_password"] = options["password"]
    return out


_JAAS: Final = re.compile(
    r"""\s*([\w.$]+)\s+(required|requisite|sufficient|optional)\s*(.*?);?\s*$""", re.S
)
_OPTION: Final = re.compile(r"""\s*([\w.\-]+)\s*=\s*("(?:[^"\\]|\\.)*"|[^\s;]+)""")


def parse_jaas_config(text: str) -> tuple[str, dict[str, str]]:
    """``Module flag key="value" ...;`` (Kafka's ``JaasConfig`` grammar, one login module) as
    (module class, options)."""
    match = _JAAS.match(text)
    if match is None:
        raise ClientConfigError(
            "sasl.jaas.config: expected 'LoginModuleClass required key=\"value\" ...;'"
        )
    module, _flag, rest = match.groups()
    options: dict[str, str] = {}
    pos = 0
    rest = rest.strip()
    while pos < len(rest):
        option = _OPTION.match(rest, pos)
        if option is None:
            raise ClientConfigError(
                f"sasl.jaas.config: cannot read the options from {rest[pos:][:20]!r}..."
            )
        key, value = option.groups()
        if value.startswith('"'):
            value = re.sub(r"\\(.)", r"\1", value[1:-1])
        options[key] = value
        pos = option.end()
        while pos < len(rest) and rest[pos].isspace():
            pos += 1
    return module, options


def _positive_int(props: dict[str, str], key: str) -> int:
    try:
        value = int(props[key].strip())
    except ValueError:
        value = 0
    if value <= 0:
        raise ClientConfigError(f"{key}={props[key]}: expected a positive number of milliseconds")
    return value


def ssl_context(config: ClientConfig) -> ssl.SSLContext | None:
    """The TLS context for ``config`` (``None`` without TLS). Raises ``OSError``/
    ``ssl.SSLError`` when a file named in it cannot be read."""
    if not config.uses_tls:
        return None
    context = ssl.create_default_context(cafile=config.ca_file, cadata=config.ca_pem)
    context.check_hostname = config.check_hostname
    if not config.check_hostname:
        context.verify_mode = ssl.CERT_REQUIRED  # still verify the chain, as Java does
    if config.minimum_tls is not None:
        context.minimum_version = config.minimum_tls
    if config.cert_file:
        context.load_cert_chain(config.cert_file, password=config.key_password)
    return context


def kafka_python_settings(config: ClientConfig) -> dict[str, Any]:
    """kafka-python's keyword settings for ``config`` (its TLS context built once here)."""
    settings: dict[str, Any] = {
        "security_protocol": config.security_protocol,
        "client_id": config.client_id,
    }
    context = ssl_context(config)
    if context is not None:
        settings["ssl_context"] = context
    if config.uses_sasl:
        settings["sasl_mechanism"] = config.sasl_mechanism
        if config.sasl_mechanism == "GSSAPI":
            settings["sasl_kerberos_service_name"] = config.kerberos_service_name
        else:
            settings["sasl_plain_username"] = config.sasl_username
            settings["sasl_plain_password"] = config.sasl_password
    return settings
