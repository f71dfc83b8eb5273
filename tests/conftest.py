"""Shared test fixtures: paths to the real broker data under tests/fixtures."""

from __future__ import annotations

from pathlib import Path

import pytest

FIXTURES = Path(__file__).parent / "fixtures"


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


# The service's tests: the real scan's run (Spark once per session) and the real server.
from tests.support.service import live_server, published_run, spark  # noqa: E402,F401
