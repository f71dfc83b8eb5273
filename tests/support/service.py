"""Fixtures for the service's tests: a run published by the real scan of real broker fixtures
(Spark started once per session), and the real server (uvicorn on loopback, a free port) in a
thread.

The session's run covers five log dirs: Kafka 0.9.0.1 ``cleaner-died`` and ``unclean-shutdown``,
2.3.0 ``multi-pass`` and ``transactions`` (all as one cluster without a cluster.id, the
brokers' shared test config from ``cleaner-died/broker-server.properties``: one cleaner thread,
a 1 MiB dedupe buffer), and a copy of 2.3.0 ``small-gzip`` whose meta.properties is given
``cluster.id=cluster-b`` and ``broker.id=1``, a second cluster.
"""

from __future__ import annotations

import json
import shutil
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
CLEANER_DIED = FIXTURES / "kafka-0.9.0.1" / "cleaner-died"
SESSION_LOG_DIRS = (
    CLEANER_DIED / "kafka-logs",
    FIXTURES / "kafka-2.3.0" / "multi-pass" / "kafka-logs",
    FIXTURES / "kafka-2.3.0" / "transactions" / "kafka-logs",
    FIXTURES / "kafka-0.9.0.1" / "unclean-shutdown" / "kafka-logs",
)
SECOND_CLUSTER = "cluster-b"


def scan_options(log_dirs: tuple[Path, ...], out: Path) -> Any:
    from offsets_auditor.logdir.meta_properties import parse_java_properties
    from spark_jobs.job import ScanOptions

    text = (CLEANER_DIED / "broker-server.properties").read_text(encoding="utf-8")
    return ScanOptions(
        log_dirs=log_dirs, out=out, properties=tuple(parse_java_properties(text)), keep=10
    )


def second_cluster_copy(tmp: Path) -> Path:
    """A copy of 2.3.0 small-gzip, its meta.properties naming another cluster and broker."""
    copy = tmp / "cluster-b" / "kafka-logs"
    shutil.copytree(FIXTURES / "kafka-2.3.0" / "small-gzip" / "kafka-logs", copy)
    meta = copy / "meta.properties"
    text = meta.read_text(encoding="utf-8").replace("broker.id=0", "broker.id=1")
    meta.write_text(text + f"cluster.id={SECOND_CLUSTER}\n", encoding="utf-8")
    return copy


@dataclass
class Published:
    results: Path
    run_id: str
    run_dir: Path
    log_dirs: tuple[Path, ...]


@pytest.fixture(scope="session")
def spark() -> Iterator[Any]:
    """The embedded ``SparkContext`` the scan runs on."""
    pytest.importorskip("pyspark")
    from spark_jobs.session import spark_context

    sc = spark_context(None, "offsets-auditor service tests")
    yield sc
    sc.stop()


@pytest.fixture(scope="session")
def published_run(spark: Any, tmp_path_factory: pytest.TempPathFactory) -> Published:
    """The real scan of the session's log dirs, published to a results dir."""
    from spark_jobs.job import run_scan

    tmp = tmp_path_factory.mktemp("service-run")
    log_dirs = (*SESSION_LOG_DIRS, second_cluster_copy(tmp))
    results = tmp / "results"
    result = run_scan(spark, scan_options(log_dirs, results))
    return Published(results, result.run_id, result.run_dir, log_dirs)


class LiveServer:
    """``offsets-auditor serve`` as the CLI runs it (uvicorn, the app factory), in a thread."""

    def __init__(self, results: Path, **settings: Any) -> None:
        import uvicorn

        from api.app import create_app
        from api.cli import uvicorn_config
        from api.settings import Settings

        self.settings = Settings(results=results, host="127.0.0.1", port=0, **settings)
        self.app = create_app(self.settings)
        config = uvicorn_config(self.app, "127.0.0.1", 0, log_level="warning")
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(target=self.server.run, daemon=True)

    def __enter__(self) -> LiveServer:
        self.thread.start()
        deadline = time.monotonic() + 30
        while not self.server.started:
            if not self.thread.is_alive() or time.monotonic() > deadline:
                raise RuntimeError("the server did not start")
            time.sleep(0.02)
        port = self.server.servers[0].sockets[0].getsockname()[1]
        self.url = f"http://127.0.0.1:{port}"
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=15)

    def get(self, path: str) -> tuple[int, dict[str, str], bytes]:
        """(status, headers, body) of ``GET path`` (``path`` sent as given, already encoded)."""
        request = urllib.request.Request(self.url + path)
        try:
            with urllib.request.urlopen(request, timeout=30) as response:
                return response.status, dict(response.headers), response.read()
        except urllib.error.HTTPError as error:
            return error.code, dict(error.headers), error.read()

    def json(self, path: str, status: int = 200) -> Any:
        code, _, body = self.get(path)
        assert code == status, (path, code, body[:500])
        return json.loads(body)

    @property
    def store(self) -> Any:
        return self.app.state.store


@pytest.fixture(scope="session")
def live_server(published_run: Published) -> Iterator[LiveServer]:
    with LiveServer(published_run.results, poll_seconds=0.2) as server:
        yield server
