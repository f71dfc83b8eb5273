"""Build hook for the optional C accelerator (offsets_auditor/_speedups.c).

Everything else is declared in pyproject.toml. If no C compiler is available the package still
installs and runs on its pure-Python decoder, only slower.
"""

from setuptools import setup

setup()
