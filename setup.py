"""Build hook for the C extensions: ``offsets_auditor._native``, the record reader (one parser per
Kafka message format) and the interning tables the rules use (``offsets_auditor/reader``); and
``offsets_auditor._folds``, the per-record folds of a chunk's columns.

It includes ``offsets_auditor/_kafka_wire.h`` (big-endian reads, varints, CRC-32, CRC-32C) and
``offsets_auditor/_md5.h``. Everything else is declared in pyproject.toml. The extension is
required: installing needs a C compiler and the Python headers (gcc on Linux).
"""

import sys

from setuptools import Extension, setup

FLAGS = [] if sys.platform.startswith("win") else ["-O3", "-Wall", "-Wextra"]

setup(
    ext_modules=[
        Extension(
            "offsets_auditor._native",
            ["offsets_auditor/_native.c"],
            depends=["offsets_auditor/_kafka_wire.h", "offsets_auditor/_md5.h"],
            extra_compile_args=FLAGS,
        ),
        Extension("offsets_auditor._folds", ["offsets_auditor/_folds.c"], extra_compile_args=FLAGS),
    ]
)
