#!/usr/bin/env bash
# The monitoring path against a REAL Kafka 2.3.0 broker under commit load (issue 18): scheduled
# `offsets-auditor scan` of its live log dir, `offsets-auditor serve` (started before the first
# scan), and Prometheus with the project's rules (written for this schedule) scraping the service;
# then scans made to fail, then `kill -9` of the broker and its restart.
#
#   scripts/live/monitor_run.sh [--seconds 600] [--interval 30] [--clients 7] [--work DIR] [--out FILE]
#
# The broker is scripts/fixtures/kafka23.sh's (Kafka 2.3.0 + ZooKeeper, fetched from the package
# registries once), with what makes the cleaner swap segments all the time (1 MiB offsets segments,
# a 1 MiB dedupe buffer, min.cleanable.dirty.ratio 0.01, 200 ms cleaner backoff). Prometheus is
# Debian's, unpacked by scripts/tools/prometheus.sh. The driver (monitor_driver.py) prints the
# summary JSON; everything is stopped on exit, whatever happens.
# Ports: ZooKeeper ${ZK_PORT:-22482}, Kafka ${KAFKA_PORT:-29492}, the service ${SERVICE_PORT:-18480},
# Prometheus ${PROMETHEUS_PORT:-19490}.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
seconds=600 interval=30 clients=7 work=$here/work-monitor out= fail_scans=2
while (($#)); do
  case $1 in
    --seconds) seconds=$2; shift 2 ;;
    --interval) interval=$2; shift 2 ;;
    --clients) clients=$2; shift 2 ;;
    --fail-scans) fail_scans=$2; shift 2 ;;
    --work) work=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    *) echo "usage: $0 [--seconds N] [--interval S] [--clients N] [--fail-scans N] [--work DIR] [--out FILE]" >&2; exit 2 ;;
  esac
done
export ZK_PORT=${ZK_PORT:-22482} KAFKA_PORT=${KAFKA_PORT:-29492} PHASE=live
service_port=${SERVICE_PORT:-18480} prometheus_port=${PROMETHEUS_PORT:-19490}
k23=$repo/scripts/fixtures/kafka23.sh
python=${PYTHON:-$repo/.venv/bin/python}
auditor=$(dirname "$python")/offsets-auditor
promdir=$("$repo/scripts/tools/prometheus.sh")
mkdir -p "$work"
work=$(cd "$work" && pwd)
rm -rf "$work/kafka-logs" "$work/zk" "$work"/logs-* "$work/results" "$work/prometheus-data" "$work"/client-*.json
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  "$k23" stop "$work" >/dev/null 2>&1 || true
}
trap cleanup EXIT
settings=(
  offsets.topic.segment.bytes=1048576 log.cleaner.dedupe.buffer.size=1048577 log.cleaner.threads=1
  log.cleaner.min.cleanable.ratio=0.01 log.cleaner.backoff.ms=200 log.segment.delete.delay.ms=1000
  offsets.retention.minutes=525600 transaction.state.log.num.partitions=4
)
"$k23" start "$work" "${settings[@]}" >&2
# the service first: it waits for the first scan
"$auditor" serve --results "$work/results" --port "$service_port" \
  --scan-interval-seconds "$interval" --poll-seconds 1 > "$work/serve.log" 2>&1 &
pids+=($!)
# the project's rules, written for this schedule; Prometheus scraping the service every 2 s
"$python" "$repo/scripts/deploy/rules.py" --scan-interval-seconds "$interval" --print > "$work/rules.yml"
cat > "$work/prometheus.yml" <<YML
global: {scrape_interval: 2s, evaluation_interval: 2s}
rule_files: ["$work/rules.yml"]
scrape_configs:
  - job_name: offsets-auditor
    static_configs: [{targets: ["127.0.0.1:$service_port"]}]
YML
"$promdir/prometheus" --config.file="$work/prometheus.yml" --storage.tsdb.path="$work/prometheus-data" \
  --web.listen-address="127.0.0.1:$prometheus_port" > "$work/prometheus.log" 2>&1 &
pids+=($!)
args=(--work "$work" --results "$work/results" --config "$work/server-live.properties"
      --service "http://127.0.0.1:$service_port" --prometheus "http://127.0.0.1:$prometheus_port"
      --seconds "$seconds" --interval "$interval" --clients "$clients" --fail-scans "$fail_scans"
      --auditor "$auditor")
[[ -n $out ]] && args+=(--out "$out")
cd "$here" && "$python" monitor_driver.py "${args[@]}" "${settings[@]}"
