#!/usr/bin/env bash
# Build the C extensions with AddressSanitizer and UndefinedBehaviorSanitizer and run the tests
# that drive them hardest (both readers compared on real, edge-case and fuzzed segments, and the
# primitives) against that build. Any sanitizer report fails the run.
#
#   scripts/sanitize.sh [PYTHON]      (default .venv/bin/python; `make sanitize` calls it)
#
# The sanitized build goes into build/sanitize/offsets_auditor/ beside a copy of the package's
# Python files; PYTHONPATH puts it ahead of the installed package for this run only.
set -euo pipefail
cd "$(dirname "$0")/.."
python=${1:-.venv/bin/python}
out=build/sanitize
rm -rf "$out" && mkdir -p "$out"
cp -r offsets_auditor "$out/"
find "$out/offsets_auditor" -name '*.so' -delete
include=$("$python" -c 'import sysconfig; print(sysconfig.get_paths()["include"])')
suffix=$("$python" -c 'import sysconfig; print(sysconfig.get_config_var("EXT_SUFFIX"))')
for module in _native _folds; do
    gcc -O1 -g -Wall -Wextra -Werror -fPIC -shared -fno-omit-frame-pointer \
        -fsanitize=address,undefined -fno-sanitize-recover=all \
        -I"$include" "offsets_auditor/$module.c" -o "$out/offsets_auditor/$module$suffix"
done
asan=$(gcc -print-file-name=libasan.so)
ubsan=$(gcc -print-file-name=libubsan.so)
# CPython keeps memory until exit: leaks are not what this run looks for.
export ASAN_OPTIONS=detect_leaks=0:abort_on_error=1:halt_on_error=1
export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
# PYTHONMALLOC=malloc: every allocation through malloc, where ASan sees it (pymalloc's arenas
# hide overflows of small buffers). The editable install's import hook is dropped so that the
# copy in $out, first on sys.path, is the package imported.
PYTHONMALLOC=malloc LD_PRELOAD="$asan $ubsan" "$python" - "$PWD/$out" <<'PY'
import sys

sys.meta_path = [f for f in sys.meta_path if not type(f).__module__.startswith("__editable__")]
sys.path.insert(0, sys.argv[1])
import offsets_auditor._folds as folds  # noqa: E402
import offsets_auditor._native as native  # noqa: E402

assert native.__file__.startswith(sys.argv[1]), native.__file__
assert folds.__file__.startswith(sys.argv[1]), folds.__file__
import pytest  # noqa: E402

sys.exit(
    pytest.main(
        [
            "-q",
            "-p",
            "no:cacheprovider",
            "-o",
            "addopts=--strict-markers",
            "tests/reader/test_native.py",
            "tests/reader/test_reader_backends.py",
            "tests/reader/test_decoder_fuzz.py",
            "tests/reader/test_column_decode.py",
            "tests/cleaner/test_writer_shares.py",
            "tests/groups/test_commit_folds.py",
        ]
    )
)
PY
echo "sanitized run: no ASan/UBSan report"
