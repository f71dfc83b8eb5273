#!/usr/bin/env bash
# Regenerate docs/screenshots/: the status page at 1400 and 1024 px and on a 390 px phone, and
# the lookup box's answer at 1024 px, as headless Chromium shows them.
#
#   scripts/screenshots.sh [PYTHON]      (default .venv/bin/python)
#
# The pictures are the ones tests/api/test_service_browser.py takes after its assertions on
# what a person sees (the run it serves: the four sample brokers of `make demo`), so a picture
# is only replaced when the page it shows passed them. Needs Debian's chromium and
# chromium-driver (scripts/service-test-deps.sh); the test skips without them, and then this
# script fails and leaves docs/screenshots/ as it was.
set -euo pipefail
cd "$(dirname "$0")/.."
python=${1:-.venv/bin/python}
shots=(status-1400 status-1024 status-phone lookup-1024)
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
OFFSETS_AUDITOR_SCREENSHOTS="$scratch" "$python" -m pytest -p no:randomly -rs \
    tests/api/test_service_browser.py
for shot in "${shots[@]}"; do
    if [ ! -s "$scratch/$shot.png" ]; then
        echo "scripts/screenshots.sh: the browser test took no $shot.png (skipped?):" \
            "docs/screenshots/ left as it was" >&2
        exit 1
    fi
done
for shot in "${shots[@]}"; do
    cp "$scratch/$shot.png" "docs/screenshots/$shot.png"
done
echo "docs/screenshots/: ${shots[*]/%/.png}"
