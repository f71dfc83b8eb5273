"""Build hook for the optional C accelerator (offsets_auditor/_speedups.c).

Everything else is declared in pyproject.toml. The extension is ``optional``: if no C compiler
(or no Python headers) is available the build prints a warning, the package still installs and
runs on its pure-Python decoder, only slower (``offsets_auditor.fastlane`` finds out at run time).
"""

from setuptools import Extension, setup

setup(
    ext_modules=[
        Extension(
            "offsets_auditor._speedups",
            ["offsets_auditor/_speedups.c"],
            extra_compile_args=["-O3"] if not __import__("sys").platform.startswith("win") else [],
            optional=True,
        ),
        Extension(
            "offsets_auditor._cleaner_speedups",
            ["offsets_auditor/_cleaner_speedups.c"],
            extra_compile_args=["-O3"] if not __import__("sys").platform.startswith("win") else [],
            optional=True,
        ),
    ]
)
