"""``serve --bootstrap-server``: the live cluster's answers cached by one worker thread, and a
request that never waits on the cluster longer than the lookup wait. A stand-in for the client
here (the real one against real brokers: ``tests/cluster/test_cluster_acceptance.py``)."""

from __future__ import annotations

import asyncio
import threading
import time

import pytest

from api.live import LiveWatcher
from offsets_auditor.cluster.metadata import MetadataSource, OffsetsTopicMetadata
from offsets_auditor.cluster.metadata import PartitionLeadership as L
from offsets_auditor.live_cluster.client import CoordinatorLookup, CoordinatorState, LiveError
from offsets_auditor.live_cluster.client_config import ClientConfig


class FakeCluster:
    """What ``LiveCluster`` answers, with a delay for FindCoordinator."""

    def __init__(self, delay: float = 0.0, fail: bool = False) -> None:
        self.delay = delay
        self.fail = fail
        self.asked: list[str] = []
        self.closed = 0
        self.release = threading.Event()

    def offsets_topic(self) -> OffsetsTopicMetadata | LiveError:
        if self.fail:
            return LiveError("Metadata from broker 0: ConnectionError")
        parts = tuple(L(p, p % 3, (p % 3,), (p % 3,), 1) for p in range(6))
        return OffsetsTopicMetadata(MetadataSource.LIVE, True, parts, "Metadata v7", "c1")

    def brokers(self) -> list[tuple[int, str, int]]:
        return [(0, "h0", 9092), (1, "h1", 9092), (2, "h2", 9092)]

    def find_coordinator(self, group: str) -> CoordinatorLookup:
        self.asked.append(group)
        if self.delay:
            self.release.wait(self.delay)
        return CoordinatorLookup(group, 1, "h1", 9092, None, CoordinatorState.READY, "ok")

    def close(self) -> None:
        self.closed += 1


def watcher(cluster: FakeCluster | LiveError, **kw: float) -> LiveWatcher:
    return LiveWatcher(
        "h0:9092",
        ClientConfig(),
        connector=lambda: cluster,  # type: ignore[arg-type,return-value]
        **kw,
    )


def test_the_metadata_is_read_and_kept() -> None:
    w = watcher(FakeCluster())
    assert w.snapshot().metadata is None and w.snapshot().at is None
    w.refresh()
    snap = w.snapshot()
    assert snap.metadata is not None and snap.metadata.partition_count == 6
    assert snap.address(2) == ("h2", 9092) and snap.error is None


def test_a_failing_cluster_keeps_the_last_answer_and_says_why() -> None:
    cluster = FakeCluster()
    w = watcher(cluster)
    w.refresh()
    cluster.fail = True
    w.refresh()
    snap = w.snapshot()
    assert snap.metadata is not None  # the last good one, with its time
    assert snap.error == "Metadata from broker 0: ConnectionError" and cluster.closed == 1
    down = watcher(LiveError("bootstrap from h0:9092: no brokers"))
    down.refresh()
    assert down.snapshot().metadata is None
    assert down.snapshot().error == "bootstrap from h0:9092: no brokers"


def test_a_lookup_never_waits_longer_than_its_bound() -> None:
    """FindCoordinator slower than the wait: the request gets 'pending' after the wait, the
    answer lands in the cache, and the next lookup of that group takes it from there."""
    cluster = FakeCluster(delay=30.0)
    w = watcher(cluster, lookup_wait_seconds=0.3, refresh_seconds=3600)
    w.start()
    try:

        async def ask() -> tuple[float, object]:
            started = time.monotonic()
            found = await w.coordinator("g1")
            return time.monotonic() - started, found

        took, found = asyncio.run(ask())
        assert found.pending and found.answer is None  # type: ignore[attr-defined]
        assert 0.25 <= took < 2.0
        cluster.release.set()  # the cluster answers now
        deadline = time.monotonic() + 5
        while not w._lookups and time.monotonic() < deadline:
            time.sleep(0.02)
        took, found = asyncio.run(ask())
        assert took < 0.2 and not found.pending  # type: ignore[attr-defined]
        assert found.answer.node_id == 1  # type: ignore[attr-defined]
        assert cluster.asked == ["g1"]  # asked once: the second came from the cache
    finally:
        w.stop()


@pytest.mark.parametrize("groups", [1, 20])
def test_concurrent_lookups_each_answered(groups: int) -> None:
    w = watcher(FakeCluster(), lookup_wait_seconds=2.0, refresh_seconds=3600)
    w.start()
    try:

        async def many() -> list[object]:
            return list(await asyncio.gather(*(w.coordinator(f"g{i}") for i in range(groups))))

        found = asyncio.run(many())
        assert all(f.answer.group_id == f"g{i}" for i, f in enumerate(found))  # type: ignore[attr-defined]
    finally:
        w.stop()


def test_a_failing_call_is_an_answer_not_a_500() -> None:
    cluster = FakeCluster()

    def broken(group: str) -> CoordinatorLookup:
        raise RuntimeError("boom")

    cluster.find_coordinator = broken  # type: ignore[method-assign]
    w = watcher(cluster, lookup_wait_seconds=2.0, refresh_seconds=3600)
    w.start()
    try:
        found = asyncio.run(w.coordinator("g"))
        assert isinstance(found.answer, LiveError) and "boom" in found.answer.reason
        assert "g" not in w._asked  # asked again next time
    finally:
        w.stop()
