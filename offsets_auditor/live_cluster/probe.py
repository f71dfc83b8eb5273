"""One ApiVersions v0 request to one broker, over a plain socket (TLS when configured).

Done here rather than through kafka-python because its answer decides how kafka-python must be
set up: a broker that answers is 0.10.0 or later (kafka-python then negotiates by itself); a
0.9 broker has no ApiVersions and drops the request without an answer, keeping the connection
open: its network thread fails to parse api key 18 ("Processor got uncaught exception ...
ArrayIndexOutOfBoundsException: Index 18 out of bounds for length 17", measured on the real
0.9.0.1 brokers), an exception ``Processor.run`` logs and swallows without closing the channel
(A:0.9.0.1 ``core/src/main/scala/kafka/network/SocketServer.scala``: only
``InvalidRequestException``/``SchemaException`` close it). So a broker silent on ApiVersions is
asked ListGroups v0 (api key 16, no body; in 0.9, never creating anything) on a new connection:
an answer there means a broker before 0.10.0, and kafka-python must be told the version.
ApiVersions is answered before SASL authentication (KIP-43, A:0.10.0.0
``SaslServerAuthenticator``), so only TLS is needed for it; a SASL listener of 0.9 is not
reachable this way (0.9 has no SaslHandshake either).

Wire format (A:3.9 ``clients/src/main/resources/common/message/ApiVersionsRequest.json`` v0,
``RequestHeader.json`` v1, ``ApiVersionsResponse.json`` v0; the response header of ApiVersions
is always v0)::

    request  = size:int32 api_key:int16(18) api_version:int16(0) correlation_id:int32
               client_id:string
    response = size:int32 correlation_id:int32 error_code:int16
               [api_key:int16 min_version:int16 max_version:int16]:array(int32 count)

Kafka 4.x still serves ApiVersions v0 (its minimum is 0; C:v8.1.0 ApiVersionsRequest.json).
"""

from __future__ import annotations

import socket
import ssl
import struct
import time
from dataclasses import dataclass
from enum import StrEnum
from typing import Final

API_VERSIONS_KEY: Final = 18
LIST_GROUPS_KEY: Final = 16
_HEADER: Final = struct.Struct(">hhih")  # api_key, api_version, correlation_id, client_id length
_RESPONSE_HEAD: Final = struct.Struct(">ihi")  # correlation_id, error_code, entry count
_ENTRY: Final = struct.Struct(">hhh")  # api_key, min_version, max_version
_MAX_RESPONSE: Final = 1 << 20
_CORRELATION: Final = 0x0A0D17E5


class ProbeOutcome(StrEnum):
    ANSWERED = "answered"  # the broker listed its API versions
    NO_API_VERSIONS = "no-api-versions"  # silent on ApiVersions, answers ListGroups v0: < 0.10.0
    FAILED = "failed"  # could not connect, TLS failed, timed out, or a malformed answer


@dataclass(frozen=True, slots=True)
class ApiVersionsProbe:
    """``versions``: api key -> (min, max), set when ``ANSWERED``; ``reason`` one line."""

    outcome: ProbeOutcome
    versions: dict[int, tuple[int, int]] | None
    reason: str
    error_code: int | None = None


def probe_api_versions(
    host: str,
    port: int,
    context: ssl.SSLContext | None,
    timeout_s: float,
    client_id: str = "offsets-auditor",
    api_versions_wait_s: float = 2.0,
) -> ApiVersionsProbe:
    """Ask ``host:port`` for its API versions, waiting at most ``api_versions_wait_s`` (any
    broker from 0.10.0 answers at once); when it stays silent, ask ListGroups v0 within
    ``timeout_s``."""
    where = f"{host}:{port}"
    answer = _exchange(
        host, port, context, min(timeout_s, api_versions_wait_s), API_VERSIONS_KEY, client_id
    )
    if isinstance(answer, bytes):
        return _parse(answer, where)
    if answer != "timed out":
        return ApiVersionsProbe(ProbeOutcome.FAILED, None, f"ApiVersions to {where}: {answer}")
    fallback = _exchange(host, port, context, timeout_s, LIST_GROUPS_KEY, client_id)
    if isinstance(fallback, bytes):
        return ApiVersionsProbe(
            ProbeOutcome.NO_API_VERSIONS,
            None,
            f"{where} did not answer ApiVersions but answered ListGroups v0: a broker before"
            " Kafka 0.10.0 (0.9.x has no ApiVersions)",
        )
    return ApiVersionsProbe(
        ProbeOutcome.FAILED,
        None,
        f"{where}: no answer to ApiVersions, nor to ListGroups: {fallback}",
    )


def _exchange(
    host: str,
    port: int,
    context: ssl.SSLContext | None,
    timeout_s: float,
    api_key: int,
    client_id: str,
) -> bytes | str:
    """One request (``api_key`` v0, empty body) on a new connection: the response body after
    its correlation id check, or a one-line reason (``"timed out"`` exactly when it did)."""
    deadline = time.monotonic() + timeout_s
    try:
        raw = socket.create_connection((host, port), timeout=timeout_s)
    except TimeoutError:
        return "timed out"
    except OSError as error:
        return f"cannot connect: {error}"
    try:
        sock: socket.socket = raw
        if context is not None:
            sock = context.wrap_socket(raw, server_hostname=host)
        cid = client_id.encode()
        header = _HEADER.pack(api_key, 0, _CORRELATION, len(cid)) + cid
        sock.settimeout(max(deadline - time.monotonic(), 0.001))
        sock.sendall(struct.pack(">i", len(header)) + header)
        size_bytes = _read(sock, 4, deadline)
        if size_bytes is None:
            return "the broker closed the connection"
        (size,) = struct.unpack(">i", size_bytes)
        if not 4 <= size <= _MAX_RESPONSE:
            return f"response size {size}"
        body = _read(sock, size, deadline)
        if body is None:
            return "response cut short"
        if struct.unpack_from(">i", body)[0] != _CORRELATION:
            return "unexpected correlation id"
        return body
    except TimeoutError:
        return "timed out"
    except (OSError, ssl.SSLError) as error:
        return str(error)
    finally:
        raw.close()


def _read(sock: socket.socket, size: int, deadline: float) -> bytes | None:
    """Exactly ``size`` bytes, or ``None`` when the peer closed first (TimeoutError past
    ``deadline``)."""
    chunks = bytearray()
    while len(chunks) < size:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise TimeoutError
        sock.settimeout(remaining)
        chunk = sock.recv(size - len(chunks))
        if not chunk:
            return None
        chunks += chunk
    return bytes(chunks)


def _parse(body: bytes, where: str) -> ApiVersionsProbe:
    if len(body) < _RESPONSE_HEAD.size:
        return ApiVersionsProbe(ProbeOutcome.FAILED, None, f"{where}: ApiVersions answer too short")
    _correlation, error_code, count = _RESPONSE_HEAD.unpack_from(body)
    if count < 0 or _RESPONSE_HEAD.size + count * _ENTRY.size > len(body):
        return ApiVersionsProbe(ProbeOutcome.FAILED, None, f"{where}: {count} entries do not fit")
    versions = {}
    for i in range(count):
        key, low, high = _ENTRY.unpack_from(body, _RESPONSE_HEAD.size + i * _ENTRY.size)
        versions[key] = (low, high)
    if error_code != 0:
        return ApiVersionsProbe(
            ProbeOutcome.FAILED, None, f"{where}: ApiVersions error {error_code}", error_code
        )
    return ApiVersionsProbe(ProbeOutcome.ANSWERED, versions, f"{where} answered ApiVersions")
