"""The Spark session: embedded ``local[*]`` by default, or whatever ``spark-submit`` (or
``--master``) says."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any


def spark_session(
    master: str | None, app_name: str = "offsets-auditor scan", driver_memory: str | None = None
) -> Any:
    """The session. Without ``master`` and outside ``spark-submit``: ``local[*]``, with the
    executors' Python the driver's own (the one offsets-auditor is installed in).
    ``driver_memory`` is ``spark.driver.memory`` (in local mode also the executors' heap); it
    takes effect only where this process starts the JVM (not under ``spark-submit``, whose
    ``--driver-memory`` says it)."""
    from pyspark.sql import SparkSession

    submitted = "SPARK_SUBMIT_OPTS" in os.environ or _submitted()
    builder = SparkSession.builder.appName(app_name)
    if master is not None:
        builder = builder.master(master)
    elif not submitted:
        builder = builder.master("local[*]")
    if driver_memory is not None:
        builder = builder.config("spark.driver.memory", driver_memory)
    if not submitted:
        os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
        os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
        os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
        log4j = Path(__file__).with_name("log4j2.properties")
        builder = builder.config("spark.ui.enabled", "false").config(
            "spark.driver.extraJavaOptions", f"-Dlog4j2.configurationFile={log4j.as_uri()}"
        )
    builder = (
        builder.config("spark.ui.showConsoleProgress", "false")
        # one row per segment (stage A) and per partition (stage B): small batches
        .config("spark.sql.execution.arrow.maxRecordsPerBatch", "64")
        .config("spark.sql.shuffle.partitions", "64")
        .config("spark.python.worker.reuse", "true")
    )
    session = builder.getOrCreate()
    session.sparkContext.setLogLevel("ERROR")
    return session


def _submitted() -> bool:
    """Started by ``spark-submit`` (which sets ``spark.master`` for the JVM it launched)."""
    return "PYSPARK_GATEWAY_PORT" in os.environ
