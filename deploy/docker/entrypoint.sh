#!/usr/bin/env bash
# The image's entry point: offsets-auditor's own commands, and the two roles Spark on Kubernetes
# starts this image in (the Spark operator, or spark-submit --master k8s://...).
#
#   <image> scan LOGDIR... --out RESULTS ...       offsets-auditor scan (Spark local[*] in-pod)
#   <image> serve --results RESULTS --port 8080    offsets-auditor serve
#   <image> driver ...                             Spark's driver pod: spark-submit in client mode
#                                                  (what Spark's own images do for the driver)
#   <image> executor                               Spark's executor pod: the executor backend
#
# Spark's Kubernetes backend passes "driver"/"executor" as the container's first argument and
# the rest in SPARK_* environment variables; Spark here is the one pyspark ships (SPARK_HOME).
set -euo pipefail

case "${1:-}" in
driver)
    shift
    exec "$SPARK_HOME/bin/spark-submit" \
        --conf "spark.driver.bindAddress=${SPARK_DRIVER_BIND_ADDRESS}" \
        --conf "spark.executorEnv.SPARK_DRIVER_POD_IP=${SPARK_DRIVER_BIND_ADDRESS}" \
        --deploy-mode client \
        "$@"
    ;;
executor)
    shift
    java_opts=()
    for name in "${!SPARK_JAVA_OPT_@}"; do
        java_opts+=("${!name}")
    done
    exec java "${java_opts[@]}" \
        -Xms"${SPARK_EXECUTOR_MEMORY}" -Xmx"${SPARK_EXECUTOR_MEMORY}" \
        -cp "${SPARK_CONF_DIR:-$SPARK_HOME/conf}:$SPARK_HOME/jars/*:$PWD" \
        org.apache.spark.scheduler.cluster.k8s.KubernetesExecutorBackend \
        --driver-url "${SPARK_DRIVER_URL}" \
        --executor-id "${SPARK_EXECUTOR_ID}" \
        --cores "${SPARK_EXECUTOR_CORES}" \
        --app-id "${SPARK_APPLICATION_ID}" \
        --hostname "${SPARK_EXECUTOR_POD_IP}" \
        --resourceProfileId "${SPARK_RESOURCE_PROFILE_ID}" \
        --podName "${SPARK_EXECUTOR_POD_NAME}"
    ;;
*)
    exec offsets-auditor "$@"
    ;;
esac
