"""One client of the live run: commits offsets to a real Kafka 2.3.0 broker until its time is up.

Usage: live_clients.py ROLE INDEX SECONDS OUT_JSON   (started by live_driver.py, one process each)

Roles (kafka-python, the patterns of scripts/fixtures/k23_*.py):
- ``plain``: OffsetCommit for simple groups ``live-<index>-<n>`` (GROUPS_PER_CLIENT of them, in
  turn), PARTITIONS partitions of topic ``live-events`` per request (admin alter_group_offsets),
  PLAIN_COMMITS_PER_S requests a second;
- ``txn``: a transactional producer ``live-tx-<index>``: begin, one record, send_offsets_to_
  transaction for TXN_PARTITIONS partitions of group ``live-txg-<index>-<n>``, then commit, or
  abort every ABORT_EVERY-th transaction (so aborted commits and their markers reach the log);
- ``delete``: commits for fresh groups ``live-del-<index>-<n>``, then deletes them in batches
  (admin delete_groups: the coordinator writes their tombstones).
Writes what it did to OUT_JSON: requests, offset records, groups, transactions, errors.
"""

from __future__ import annotations

import json
import os
import sys
import time
from collections.abc import Callable
from typing import Any

from kafka import KafkaAdminClient, KafkaProducer, TopicPartition
from kafka.errors import KafkaError
from kafka.structs import OffsetAndMetadata

BOOTSTRAP = f"127.0.0.1:{os.environ.get('KAFKA_PORT', '29492')}"
TOPIC = "live-events"
TOPIC_PARTITIONS = 40
PARTITIONS = 40  # offset records per plain commit
GROUPS_PER_CLIENT = 400
#: the pace of a plain client: with 4 of them, ~6,400 offset records/s, so that with the other
#: roles 300 s write about the 2.1 M records of the issue's run
PLAIN_COMMITS_PER_S = 40
TXN_PARTITIONS = 10
TXN_GROUPS = 50
ABORT_EVERY = 3
DELETE_BATCH = 20
DELETE_PAUSE_S = 0.5
COORDINATOR = 0  # the only broker (broker.id=0) coordinates every group


def offsets(count: int, value: int, metadata: str) -> dict[TopicPartition, OffsetAndMetadata]:
    return {TopicPartition(TOPIC, p): OffsetAndMetadata(value, metadata, -1) for p in range(count)}


def commit(
    admin: KafkaAdminClient, group: str, count: int, value: int, stats: dict[str, Any]
) -> None:
    """One OffsetCommit request for a simple group; partition errors are counted, not fatal."""
    errors = admin.alter_group_offsets(group, offsets(count, value, "live"), COORDINATOR)
    bad = [e.__name__ for e in errors.values() if e.__name__ != "NoError"]
    stats["requests"] += 1
    stats["records"] += count - len(bad)
    stats["partition_errors"] += len(bad)
    if bad:
        stats["last_error"] = f"OffsetCommit {group}: {bad[0]}"


def plain(index: int, until: float, stats: dict[str, Any]) -> None:
    admin = KafkaAdminClient(bootstrap_servers=BOOTSTRAP, request_timeout_ms=30000)
    groups = [f"live-{index}-{n:05d}" for n in range(GROUPS_PER_CLIENT)]
    i, start = 0, time.time()
    while time.time() < until:
        guarded(stats, commit, admin, groups[i % len(groups)], PARTITIONS, i, stats)
        i += 1
        time.sleep(max(start + i / PLAIN_COMMITS_PER_S - time.time(), 0))
    stats["groups"] = min(i, len(groups))
    admin.close()


def txn(index: int, until: float, stats: dict[str, Any]) -> None:
    producer = KafkaProducer(
        bootstrap_servers=BOOTSTRAP, transactional_id=f"live-tx-{index}", linger_ms=0
    )
    producer.init_transactions()
    used: set[str] = set()
    i = 0
    while time.time() < until:
        group = f"live-txg-{index}-{i % TXN_GROUPS:03d}"
        if guarded(stats, transaction, producer, group, i, stats) is None:
            guarded(stats, producer.abort_transaction)
        used.add(group)
        i += 1
    stats["groups"] = len(used)
    producer.close()


def transaction(producer: KafkaProducer, group: str, i: int, stats: dict[str, Any]) -> bool:
    """begin, one record, TxnOffsetCommit via send_offsets_to_transaction, commit or abort."""
    producer.begin_transaction()
    producer.send(TOPIC, b"live-%d" % i, partition=i % TOPIC_PARTITIONS)
    producer.send_offsets_to_transaction(offsets(TXN_PARTITIONS, i, "tx"), group)
    if i % ABORT_EVERY == ABORT_EVERY - 1:
        producer.abort_transaction()
        stats["aborted"] += 1
    else:
        producer.commit_transaction()
        stats["committed"] += 1
    stats["records"] += TXN_PARTITIONS
    return True


def delete(index: int, until: float, stats: dict[str, Any]) -> None:
    admin = KafkaAdminClient(bootstrap_servers=BOOTSTRAP, request_timeout_ms=30000)
    n = 0
    while time.time() < until:
        batch = [f"live-del-{index}-{n + k:06d}" for k in range(DELETE_BATCH)]
        n += DELETE_BATCH
        for group in batch:
            guarded(stats, commit, admin, group, 5, n, stats)
        results = guarded(stats, admin.delete_groups, batch, COORDINATOR)
        for status in (results or {}).values():  # group id -> "OK" or the error's name
            stats["deleted" if status == "OK" else "delete_errors"] += 1
        time.sleep(DELETE_PAUSE_S)
    stats["groups"] = n
    admin.close()


def guarded(stats: dict[str, Any], call: Callable[..., Any], *args: Any) -> Any:
    """``call(*args)``; a broker error (coordinator loading, a timeout) is counted, not fatal:
    ``None`` then, and the loop goes on."""
    try:
        return call(*args)
    except KafkaError as error:
        stats["errors"] += 1
        stats["last_error"] = f"{type(error).__name__}: {error}"
        time.sleep(0.2)
        return None


ROLES = {"plain": plain, "txn": txn, "delete": delete}


def main(role: str, index: int, seconds: float, out: str) -> None:
    stats: dict[str, Any] = dict.fromkeys(
        ("requests", "records", "partition_errors", "errors", "committed", "aborted",
         "deleted", "delete_errors", "groups"), 0,
    )  # fmt: skip
    stats.update(role=role, index=index, last_error=None, started=time.time())
    try:
        ROLES[role](index, time.time() + seconds, stats)
    finally:
        stats["ended"] = time.time()
        with open(out, "w") as f:
            json.dump(stats, f, indent=1)


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]), float(sys.argv[3]), sys.argv[4])
