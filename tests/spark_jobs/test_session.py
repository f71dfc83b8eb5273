"""The embedded session's executors: their Python without Spark's archives on its path."""

from __future__ import annotations

from typing import Any

import pytest

from spark_jobs.worker_daemon import spark_archive


def test_spark_archives_are_the_entries_spark_puts_on_its_workers_path() -> None:
    lib = "/venv/lib/python3.11/site-packages/pyspark"
    assert spark_archive(f"{lib}/python/lib/pyspark.zip")
    assert spark_archive(f"{lib}/python/lib/py4j-0.10.9.9-src.zip")
    assert spark_archive(f"{lib}/jars/spark-core_2.13-4.0.5.jar")
    assert not spark_archive("/usr/lib/python311.zip")
    assert not spark_archive("/venv/lib/python3.11/site-packages")
    assert not spark_archive("/tmp/spark-1/userFiles-2")


def _worker_imports(_: Any) -> tuple[list[str], list[str], str]:
    import sys

    import pyspark

    return list(sys.path), list(sys.path_importer_cache), str(pyspark.__file__)


def test_embedded_workers_import_the_installed_pyspark_not_spark_archives(spark: Any) -> None:
    """pyspark's worker re-reads every archive on its path at each task (94 ms)."""
    pyspark = pytest.importorskip("pyspark")
    [(path, cached, worker_pyspark)] = spark.parallelize([0], 1).map(_worker_imports).collect()
    assert [entry for entry in path + cached if spark_archive(entry)] == []
    assert worker_pyspark == pyspark.__file__
