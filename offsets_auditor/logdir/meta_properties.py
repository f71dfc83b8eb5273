"""The small text files beside the checkpoints that say who a log dir belongs to and how the
broker stopped: ``meta.properties`` (and the Java properties format it shares with
``server.properties``) and the ``.kafka_cleanshutdown`` marker. Pure parsers: bytes or text in,
typed values and findings out.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

from offsets_auditor.findings import Finding, FindingKind, Severity
from offsets_auditor.logdir.checkpoints import (
    INT32_RANGE,
    JavaNumberFormatError,
    java_int,
    read_lines,
)
from offsets_auditor.logdir.layout import CLEAN_SHUTDOWN_FILE, META_PROPERTIES

# --- meta.properties -------------------------------------------------------------------------

_PROPERTY_WS = " \t\f"
_ESCAPES = {"t": "\t", "n": "\n", "r": "\r", "f": "\f"}


@dataclass(frozen=True, slots=True)
class MetaProperties:
    """``meta.properties``: the broker's identity in this log dir.

    v0 (ZooKeeper mode, 0.9.0.1 ``server/BrokerMetadataCheckpoint.scala``): ``version=0``,
    ``broker.id`` (+ ``cluster.id`` from 2.4.0). v1 (KRaft, 3.9.0-rc3
    ``metadata/.../properties/MetaProperties.java``): ``version=1``, ``node.id``, ``cluster.id``
    and from 3.7 ``directory.id``. ``broker_id`` is ``broker.id``, else ``node.id``.
    """

    properties: tuple[tuple[str, str], ...]
    version: int | None
    broker_id: int | None
    node_id: int | None
    cluster_id: str | None
    directory_id: str | None
    findings: tuple[Finding, ...]

    def get(self, key: str) -> str | None:
        return dict(self.properties).get(key)


def _unescape(text: str) -> str:
    """``java.util.Properties`` escapes: ``\\uXXXX``, ``\\t \\n \\r \\f``, else the char itself."""
    out: list[str] = []
    i = 0
    while i < len(text):
        char = text[i]
        if char != "\\" or i + 1 >= len(text):
            out.append(char)
            i += 1
            continue
        nxt = text[i + 1]
        if nxt == "u" and re.fullmatch(r"[0-9a-fA-F]{4}", text[i + 2 : i + 6]):
            out.append(chr(int(text[i + 2 : i + 6], 16)))
            i += 6
            continue
        out.append(_ESCAPES.get(nxt, nxt))
        i += 2
    return "".join(out)


def parse_java_properties(text: str) -> list[tuple[str, str]]:
    """``Properties.load``: ``#``/``!`` comments, ``=``/``:``/whitespace separators, backslash
    continuation lines, escapes. Returns ``(key, value)`` pairs in file order (later wins)."""
    pairs: list[tuple[str, str]] = []
    logical = ""
    continuing = False
    for natural, _ in read_lines(text):
        line = natural.lstrip(_PROPERTY_WS)
        if not continuing and (not line or line[0] in "#!"):
            continue
        trailing = len(line) - len(line.rstrip("\\"))
        if trailing % 2 == 1:
            logical += line[:-1]
            continuing = True
            continue
        logical += line
        continuing = False
        pairs.append(_split_property(logical))
        logical = ""
    if continuing:
        pairs.append(_split_property(logical))
    return pairs


def _split_property(line: str) -> tuple[str, str]:
    """``Properties.load``'s key/value split (``java.util.Properties.load0``)."""
    key_len, value_start, has_sep, backslash = 0, len(line), False, False
    while key_len < len(line):
        char = line[key_len]
        if char in "=:" and not backslash:
            value_start, has_sep = key_len + 1, True
            break
        if char in _PROPERTY_WS and not backslash:
            value_start = key_len + 1
            break
        backslash = (not backslash) if char == "\\" else False
        key_len += 1
    while value_start < len(line):
        char = line[value_start]
        if char not in _PROPERTY_WS:
            if not has_sep and char in "=:":
                has_sep = True
            else:
                break
        value_start += 1
    return _unescape(line[:key_len]), _unescape(line[value_start:])


def parse_meta_properties(data: bytes, *, file: str | None = META_PROPERTIES) -> MetaProperties:
    """Parse ``meta.properties`` (read as ISO-8859-1, as ``Properties.load(InputStream)`` does)."""
    pairs = parse_java_properties(data.decode("latin-1"))
    props = dict(pairs)
    findings: list[Finding] = []

    def bad(detail: str, field: str) -> None:
        findings.append(
            Finding(
                FindingKind.MALFORMED_META_PROPERTIES,
                Severity.WARNING,
                detail,
                file=file,
                field=field,
            )
        )

    def integer(key: str) -> int | None:
        raw = props.get(key)
        if raw is None:
            return None
        try:
            value = java_int(raw, INT32_RANGE)
        except JavaNumberFormatError as error:
            bad(f"{key}: java.lang.NumberFormatException: {error}", key)
            return None
        if value < 0:
            bad(f"{key}={value} is not in the range 0 .. 2147483647", key)
        return value

    version = integer("version")
    broker_id = integer("broker.id")
    node_id = integer("node.id")
    if "version" not in props:
        bad("Missing required property 'version'", "version")
    elif version == 0 and "broker.id" not in props:
        bad("Missing required property 'broker.id'", "broker.id")
    elif version == 1:
        for key in ("node.id", "cluster.id"):
            if key not in props:
                bad(f"{key} was not found.", key)
    elif version is not None and version not in (0, 1):
        bad(f"Unrecognized version of the server meta.properties file: {version}", "version")
    return MetaProperties(
        properties=tuple(pairs),
        version=version,
        broker_id=broker_id if broker_id is not None else node_id,
        node_id=node_id,
        cluster_id=props.get("cluster.id"),
        directory_id=props.get("directory.id"),
        findings=tuple(findings),
    )


# --- .kafka_cleanshutdown --------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class CleanShutdownContent:
    """What a present ``.kafka_cleanshutdown`` holds. Empty up to 3.6 (0.9.0.1
    ``Log.CleanShutdownFile``); 3.7+ writes ``{"version":0,"brokerEpoch":N}`` (3.7.0/3.9.0-rc3
    ``storage/.../checkpoint/CleanShutdownFileHandler.java``). The broker skips recovery when the
    file *exists*, whatever it holds; an unparsable body only loses the broker epoch."""

    empty: bool
    version: int | None
    broker_epoch: int | None
    findings: tuple[Finding, ...]


def parse_clean_shutdown(
    data: bytes, *, file: str | None = CLEAN_SHUTDOWN_FILE
) -> CleanShutdownContent:
    if not data.strip():
        return CleanShutdownContent(True, None, None, ())
    try:
        content = json.loads(data.decode("utf-8"))
        if not isinstance(content, dict):
            raise ValueError("not a JSON object")
        version = content.get("version")
        epoch = content.get("brokerEpoch")
        if not isinstance(version, int) or not (epoch is None or isinstance(epoch, int)):
            raise ValueError("version/brokerEpoch are not integers")
    except (UnicodeDecodeError, ValueError) as error:
        finding = Finding(
            FindingKind.MALFORMED_CLEAN_SHUTDOWN_FILE,
            Severity.INFO,
            f"unparsable clean shutdown file ({error}); the broker still treats the shutdown "
            "as clean because the file exists",
            file=file,
        )
        return CleanShutdownContent(False, None, None, (finding,))
    return CleanShutdownContent(False, version, epoch, ())
