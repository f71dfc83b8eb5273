"""Shared test fixtures: paths to the real broker data under tests/fixtures."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

FIXTURES = Path(__file__).parent / "fixtures"

# Property tests assert outcomes, never how long an example took: a per-example deadline failed
# CI on a slower machine (3.6 s for an example that takes 0.17 s here, under the sanitizer).
# Speed is measured by benchmarks/, not by tests.
settings.register_profile(
    "offsets-auditor", deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.load_profile("offsets-auditor")


@pytest.fixture(scope="session")
def fixtures() -> Path:
    return FIXTURES


@pytest.fixture(scope="session")
def cleaner_died() -> Path:
    """Kafka 0.9.0.1: the cleaner thread died on __consumer_offsets-2 (shared fixture)."""
    return FIXTURES / "kafka-0.9.0.1" / "cleaner-died"


@pytest.fixture(scope="session")
def small_gzip() -> Path:
    """Kafka 2.3.0: gzip v2 batches, transactional commits, cleaned segments (shared fixture)."""
    return FIXTURES / "kafka-2.3.0" / "small-gzip"


@pytest.fixture(scope="session")
def prometheus_bin() -> Path:
    """The dir holding Debian's prometheus, promtool, prometheus-alertmanager and amtool
    (``scripts/tools/prometheus.sh`` unpacks them into .tools/ once)."""
    done = subprocess.run(
        [str(FIXTURES.parent.parent / "scripts" / "tools" / "prometheus.sh")],
        check=True,
        capture_output=True,
        text=True,
        timeout=600,
    )
    return Path(done.stdout.strip().splitlines()[-1])


# The service's tests: the real scan's run (Spark once per session) and the real server.
from tests.support.service import live_server, published_run, spark  # noqa: E402,F401
