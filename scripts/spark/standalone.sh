#!/usr/bin/env bash
# A real Spark standalone cluster on loopback (one master and ${SPARK_WORKERS:-2} workers of one
# core each: separate JVMs, executors in their own processes), the scan submitted to it with
# spark-submit, unchanged, then stopped.
#
#   scripts/spark/standalone.sh [spark-submit args after the master...] -- LOGDIR... --out RESULTS
#
# Uses the Spark that pyspark ships (the project's .venv); the executors run the venv's Python,
# where offsets-auditor is installed. Ports: master ${SPARK_MASTER_PORT:-17077}, its web UI off.
set -euo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
python=${PYTHON:-$repo/.venv/bin/python}
bin=$(dirname "$python")
port=${SPARK_MASTER_PORT:-17077}
work=$(mktemp -d)
export PYSPARK_PYTHON=$python SPARK_LOCAL_IP=127.0.0.1 SPARK_LOG_DIR=$work SPARK_WORKER_DIR=$work/worker
pids=()
stop() { for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done; wait 2>/dev/null; rm -rf "$work"; }
trap stop EXIT
"$bin/spark-class" org.apache.spark.deploy.master.Master --host 127.0.0.1 --port "$port" \
  --webui-port 0 >"$work/master.log" 2>&1 &
pids+=($!)
for _ in $(seq 60); do grep -q "I have been elected leader" "$work/master.log" && break; sleep 0.5; done
workers=${SPARK_WORKERS:-2}
for n in $(seq "$workers"); do
  SPARK_WORKER_DIR=$work/worker-$n "$bin/spark-class" org.apache.spark.deploy.worker.Worker \
    --host 127.0.0.1 --cores 1 --memory 1g --webui-port 0 "spark://127.0.0.1:$port" \
    >"$work/worker-$n.log" 2>&1 &
  pids+=($!)
done
for n in $(seq "$workers"); do
  for _ in $(seq 60); do grep -q "Successfully registered with master" "$work/worker-$n.log" && break; sleep 0.5; done
  grep -q "Successfully registered with master" "$work/worker-$n.log" || { cat "$work"/*.log >&2; exit 1; }
done
status=0
"$bin/spark-submit" --master "spark://127.0.0.1:$port" \
  --conf spark.ui.enabled=false --conf "spark.pyspark.python=$python" \
  "$repo/spark_jobs/scan.py" "$@" || status=$?
launched=$(cat "$work"/worker-*.log | grep -c "Asked to launch executor" || true)
echo "standalone cluster: $workers workers launched $launched executor(s) for the scan" >&2
exit $status
