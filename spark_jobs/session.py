"""The Spark context: embedded ``local[*]`` by default, or whatever ``spark-submit`` (or
``--master``) says."""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

#: The JIT of the JVM this process starts (the driver's; in local mode the executors' too): the
#: quick compiler only. That JVM mostly starts: the executors' work is their Python workers',
#: the JVM only moves their small rows and schedules. Its optimizing compiler's work at start-up
#: took the CPU the scan needs: Spark's start and first two jobs took 29.3-33.1 s pinned to one
#: core, 13.5-15.3 s with the quick compiler only (two cores: 12.3-15.2 s, 11.2-12.1 s); a scan
#: of one broker of the cluster benchmark gains about a second.
EMBEDDED_JIT = "-XX:TieredStopAtLevel=1"
#: The Python daemon of the executors this process starts (``spark_jobs.worker_daemon``).
EMBEDDED_DAEMON = "spark_jobs.worker_daemon"


def spark_context(
    master: str | None, app_name: str = "offsets-auditor scan", driver_memory: str | None = None
) -> Any:
    """The ``SparkContext``. Without ``master`` and outside ``spark-submit``: ``local[*]``, with
    the executors' Python the driver's own (the one offsets-auditor is installed in).
    ``driver_memory`` is ``spark.driver.memory`` (in local mode also the executors' heap); it
    takes effect only where this process starts the JVM (not under ``spark-submit``, whose
    ``--driver-memory`` says it).

    A context, not a ``SparkSession``: the scan's jobs are RDDs of Python functions, and the
    session's SQL engine only cost start-up time (a session took 4.1-4.6 s to start, a context
    2.4-2.7 s; its first DataFrame job 2.2 s more)."""
    from pyspark import SparkConf, SparkContext

    submitted = "SPARK_SUBMIT_OPTS" in os.environ or _submitted()
    conf = SparkConf().setAppName(app_name)
    if master is not None:
        conf.setMaster(master)
    elif not submitted:
        conf.setMaster("local[*]")
    if driver_memory is not None:
        conf.set("spark.driver.memory", driver_memory)
    conf.set("spark.ui.showConsoleProgress", "false").set("spark.python.worker.reuse", "true")
    if submitted:
        context = SparkContext.getOrCreate(conf)
    else:
        os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
        os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
        os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
        log4j = Path(__file__).with_name("log4j2.properties")
        conf.set("spark.ui.enabled", "false").set(
            "spark.driver.extraJavaOptions",
            f"-Dlog4j2.configurationFile={log4j.as_uri()} {EMBEDDED_JIT}",
        )
        # the executors' Python is this one: its daemon can drop Spark's archives
        conf.set("spark.python.daemon.module", EMBEDDED_DAEMON)
        with _jvm_stderr_filtered():
            context = SparkContext.getOrCreate(conf)
    context.setLogLevel("ERROR")
    return context


#: What the embedded JVM says at every start that is no news to anyone: Spark 4's launcher
#: always adds ``--add-modules=jdk.incubator.vector``, and the JVM warns about it.
_JVM_NOISE = (b"WARNING: Using incubator modules: jdk.incubator.vector",)


@contextmanager
def _jvm_stderr_filtered() -> Iterator[None]:
    """Start the JVM with its stderr through a pipe that drops :data:`_JVM_NOISE` and passes
    every other line on (an OutOfMemoryError, a crash) to this process's stderr, for the JVM's
    whole life; this process's own stderr is back in place once the JVM has started."""
    read_end, write_end = os.pipe()
    saved = os.dup(2)
    forward = os.dup(2)

    def relay() -> None:
        with os.fdopen(read_end, "rb") as lines, os.fdopen(forward, "wb", buffering=0) as out:
            for line in lines:
                if line.rstrip(b"\n") not in _JVM_NOISE:
                    out.write(line)

    threading.Thread(target=relay, name="jvm-stderr", daemon=True).start()
    sys.stderr.flush()
    os.dup2(write_end, 2)
    os.close(write_end)
    try:
        yield
    finally:
        sys.stderr.flush()
        os.dup2(saved, 2)
        os.close(saved)


def _submitted() -> bool:
    """Started by ``spark-submit`` (which sets ``spark.master`` for the JVM it launched)."""
    return "PYSPARK_GATEWAY_PORT" in os.environ
