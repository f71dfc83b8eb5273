"""The embedded scan's Python daemon (``spark.python.daemon.module``): pyspark's own, with
Spark's archives off its workers' import path.

Spark puts ``pyspark.zip``, py4j's zip and its ``spark-core`` jar first on every Python worker's
path. pyspark's worker calls ``importlib.invalidate_caches()`` at the start of every task, and
Python 3.11 then reads each of those archives' index again, in Python: 94 ms a task (spark-core
alone lists thousands of files). And what the workers import from those zips is compiled from
source, in every worker. Where this process starts the JVM (``spark_context``), the executors'
Python is this one, with pyspark and py4j installed: the same code as those archives. So the
daemon drops them before it imports pyspark; the workers it forks inherit the path.
"""

from __future__ import annotations

import sys
from pathlib import PurePath


def spark_archive(entry: str) -> bool:
    """An import path entry Spark adds for its own Python code: a jar, ``pyspark.zip``, py4j's."""
    name = PurePath(entry).name
    return name.endswith(".jar") or name == "pyspark.zip" or name.startswith("py4j-")


def drop_spark_archives() -> None:
    """Off the path, and out of the importers cached while this module was looked up (those are
    what ``invalidate_caches`` reads again)."""
    sys.path[:] = [entry for entry in sys.path if not spark_archive(entry)]
    for entry in [entry for entry in sys.path_importer_cache if spark_archive(entry)]:
        del sys.path_importer_cache[entry]


if __name__ == "__main__":
    drop_spark_archives()
    from pyspark import daemon

    daemon.manager()  # type: ignore[no-untyped-call]
