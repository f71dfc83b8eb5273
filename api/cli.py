"""``offsets-auditor serve``: the HTTP service over a results dir. Registered through the
``offsets_auditor.commands`` entry point; imports nothing heavy until it runs."""

from __future__ import annotations

import argparse
import contextlib
import signal
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

SUMMARY = (
    "serve the latest published run: Prometheus metrics, alerts, the on-call API, a status page"
)

EPILOG = """\
RESULTS is what `offsets-auditor scan --out RESULTS` publishes to: every scan (one per broker
host, or one scan of many log dirs) under its own RESULTS/publishers/NAME/. The service reads
only it (Parquet, manifests, failure records), merges the newest run of every publisher, picks
up each new run without a restart, and keeps serving a publisher's last good run when a newer
one cannot be read (GET /readyz and the offsets_auditor_results_* metrics say so). It may start
before the first scan: it waits, not ready, and says so. Every option can also be set as an
environment variable OFFSETS_AUDITOR_<OPTION> (e.g. OFFSETS_AUDITOR_RESULTS,
OFFSETS_AUDITOR_PORT); an option given here wins.

Endpoints: / (status page), /metrics, /alerts, /healthz, /readyz,
/groups/{id}/coordinator-partition, /groups/{id}, /groups/{id}/reset-offsets.csv (and their
query forms under /group?group=ID, the empty id's only form), /partitions, /brokers, /segments,
/indexes, /findings, /runs, /publishers, /clusters, /runbooks/{alert}; /openapi.json
describes them all.

With --bootstrap-server (and --command-config for TLS/SASL) the live cluster stands beside the
disk: its leaders and ISR (cached, read again every --live-refresh-seconds; a request never
waits on the cluster more than 2 s) and, for a looked-up group, FindCoordinator's answer and
whether that coordinator is loading.

Exit status: 0 after Ctrl-C or SIGTERM (how the service is stopped), 3 usage or input errors,
4 internal error (a bug)."""


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "serve",
        help=SUMMARY,
        description=SUMMARY[0].upper() + SUMMARY[1:] + ".",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--results", type=Path, metavar="RESULTS", help="the results dir")
    parser.add_argument("--host", metavar="H", help="address to listen on (default 127.0.0.1)")
    parser.add_argument("--port", type=int, metavar="P", help="port (default 8080; 0: any free)")
    parser.add_argument(
        "--never-compacted-threshold-bytes",
        type=int,
        metavar="BYTES",
        help="OffsetsPartitionNeverCompacted above this size (default 104857600, 100 MiB)",
    )
    parser.add_argument(
        "--coordinator-load-threshold-seconds",
        type=float,
        metavar="S",
        help="OffsetsCoordinatorLoadSlow above this load estimate (default 10, the consumers'"
        " session.timeout.ms)",
    )
    parser.add_argument(
        "--scan-interval-seconds",
        type=float,
        metavar="S",
        help="how often the scans run (their schedule; default 3600): a publisher's newest run"
        " is stale (OffsetsScanStale) after three intervals, and no run at all alerts"
        " (OffsetsNoScanYet) after two. Give scripts/deploy/rules.py the same",
    )
    parser.add_argument(
        "--poll-seconds",
        type=float,
        metavar="S",
        help="how often to look for a new run (default 5)",
    )
    parser.add_argument(
        "--runbook-base-url",
        metavar="URL",
        help="alerts' runbook_url prefix (default: this service's own /runbooks/)",
    )
    parser.add_argument(
        "--bootstrap-server",
        metavar="HOST:PORT",
        help="the live cluster beside the disk (optional; needs the 'live' extra): the leaders"
        " and ISR of __consumer_offsets, and for a looked-up group FindCoordinator's answer and"
        " whether that coordinator is loading. Without it everything works offline",
    )
    parser.add_argument(
        "--command-config",
        type=Path,
        metavar="FILE",
        help="client properties for --bootstrap-server (TLS, SASL), as Kafka's CLI takes them",
    )
    parser.add_argument(
        "--live-refresh-seconds",
        type=float,
        metavar="S",
        help="how often the live cluster's metadata is read again (default 30)",
    )
    parser.set_defaults(handler=run)


_OPTIONS = (
    "results",
    "host",
    "port",
    "never_compacted_threshold_bytes",
    "coordinator_load_threshold_seconds",
    "scan_interval_seconds",
    "poll_seconds",
    "runbook_base_url",
    "bootstrap_server",
    "command_config",
    "live_refresh_seconds",
)


def run(args: argparse.Namespace) -> int:
    from pydantic import ValidationError

    from api.settings import Settings

    given = {k: getattr(args, k) for k in _OPTIONS if getattr(args, k) is not None}
    try:
        settings = Settings(**given)
    except ValidationError as error:
        for e in error.errors():
            where = ".".join(str(x) for x in e["loc"])
            print(
                f"offsets-auditor serve: --{where.replace('_', '-')}: {e['msg']}", file=sys.stderr
            )
        return 3
    if settings.results.exists() and not settings.results.is_dir():
        print(
            f"offsets-auditor serve: {settings.results} is not a directory (give the --out of"
            " `offsets-auditor scan`)",
            file=sys.stderr,
        )
        return 3
    if settings.command_config is not None and settings.bootstrap_server is None:
        print("offsets-auditor serve: --command-config needs --bootstrap-server", file=sys.stderr)
        return 3
    if settings.bootstrap_server is not None:
        problem = live_problem(settings)
        if problem is not None:
            print(f"offsets-auditor serve: {problem}", file=sys.stderr)
            return 3
    if not settings.results.is_dir():
        print(
            f"offsets-auditor serve: {settings.results} does not exist yet: waiting for the first"
            " scan to publish there (GET /readyz says so until then)",
            file=sys.stderr,
        )
    serve(settings)
    return 0


def live_problem(settings: Any) -> str | None:
    """Why ``--bootstrap-server`` cannot be used as given (None: it can; the cluster itself
    may still be down: the service retries)."""
    try:
        import kafka  # noqa: F401
    except ImportError:
        return "--bootstrap-server needs kafka-python: pip install 'offsets-auditor[live]'"
    from offsets_auditor.live_cluster.client import parse_bootstrap

    if not parse_bootstrap(settings.bootstrap_server):
        return f"--bootstrap-server {settings.bootstrap_server!r}: give HOST:PORT[,HOST:PORT...]"
    from api.live import client_config

    try:
        client_config(settings.command_config)
    except (OSError, ValueError) as error:
        return f"--command-config {settings.command_config}: {error}"
    return None


def serve(settings: Any) -> None:

    from api.app import create_app

    server = stopped_by_signal(uvicorn_config(create_app(settings), settings.host, settings.port))
    _announce(server, settings)
    server.run()


def stopped_by_signal(config: Any) -> Any:
    """uvicorn's server, for which SIGINT and SIGTERM are a clean stop: it shuts down gracefully
    and ``serve`` exits 0. (uvicorn raises the signal again once it has shut down, so the
    process would end with 130 or 143, which a supervisor or a script reads as a failure.)"""
    import uvicorn

    class Server(uvicorn.Server):
        @contextlib.contextmanager
        def capture_signals(self) -> Iterator[None]:
            if threading.current_thread() is not threading.main_thread():
                yield  # only the main thread gets signals (a server in a test's thread)
                return
            stopping = (signal.SIGINT, signal.SIGTERM)
            previous = {s: signal.signal(s, self.handle_exit) for s in stopping}
            try:
                yield
            finally:
                for s, handler in previous.items():
                    signal.signal(s, handler)

    return Server(config)


#: The longest request head h11 reads (its default, 16 KiB, answers a longer URL with a bare
#: "Invalid HTTP request received."): a group id of 32767 UTF-8 bytes is up to 98,301
#: characters percent-encoded, so a long id gets the service's own 400 with its reason.
MAX_REQUEST_HEAD_BYTES = 1024 * 1024


def uvicorn_config(app: Any, host: str, port: int, log_level: str = "info") -> Any:
    import uvicorn

    return uvicorn.Config(
        app,
        host=host,
        port=port,
        log_level=log_level,
        access_log=False,
        h11_max_incomplete_event_size=MAX_REQUEST_HEAD_BYTES,
    )


def _announce(server: Any, settings: Any) -> None:
    """Print the URL once the socket listens (with --port 0, the port the system chose)."""
    started = server.startup

    async def startup(sockets: Any = None) -> None:
        await started(sockets=sockets)
        for s in server.servers:
            for sock in s.sockets:
                host, port = sock.getsockname()[:2]
                shown = "localhost" if host in ("127.0.0.1", "::1") else host
                if ":" in shown:
                    shown = f"[{shown}]"
                print(
                    f"offsets-auditor serve: serving {settings.results} at http://{shown}:{port}/"
                    " (Ctrl-C stops it)",
                    file=sys.stderr,
                    flush=True,
                )
                return

    server.startup = startup
