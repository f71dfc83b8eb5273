"""Build hook for the two optional C extensions.

- ``offsets_auditor._speedups``: the decoder's fast lanes (summary totals, text lines) for plain
  offset commits;
- ``offsets_auditor._cleaner_speedups``: Kafka's SkimpyOffsetMap and the cleaner emulation's
  scan/map/clean lanes.

Both share ``offsets_auditor/_kafka_wire.h`` (big-endian reads, varints, CRC-32 and
CRC-32C). Everything else is declared in pyproject.toml. The extensions are ``optional``:
without a C compiler (or Python headers) the build prints a warning and the package runs on its
pure-Python code, only slower (``offsets_auditor.fastlane`` and ``offsets_auditor.cleaner.fast``
find out at run time).
"""

import sys

from setuptools import Extension, setup

FLAGS = [] if sys.platform.startswith("win") else ["-O3"]
SHARED = ["offsets_auditor/_kafka_wire.h"]

setup(
    ext_modules=[
        Extension(
            "offsets_auditor._native",
            ["offsets_auditor/_native.c"],
            depends=[*SHARED, "offsets_auditor/_md5.h"],
            extra_compile_args=[*FLAGS, "-Wall", "-Wextra"],
        ),
        Extension(
            "offsets_auditor._speedups",
            ["offsets_auditor/_speedups.c"],
            depends=SHARED,
            extra_compile_args=FLAGS,
            optional=True,
        ),
        Extension(
            "offsets_auditor._cleaner_speedups",
            ["offsets_auditor/_cleaner_speedups.c"],
            depends=SHARED,
            extra_compile_args=FLAGS,
            optional=True,
        ),
    ]
)
