#!/usr/bin/env bash
# What the service's tests need beyond Python: Debian's Chromium and ChromeDriver (the status
# page in a real browser, tests/api/test_service_browser.py) and wrk (the load test,
# benchmarks/service_load.py). Installs only what is missing; without root or apt-get it says
# what to install and leaves it (those tests then skip, saying why).
set -euo pipefail
need=()
command -v chromium >/dev/null || need+=(chromium)
command -v chromedriver >/dev/null || need+=(chromium-driver)
command -v wrk >/dev/null || need+=(wrk)
if [ ${#need[@]} -eq 0 ]; then
    exit 0
fi
if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null; then
    echo "service-test-deps: install ${need[*]} (Debian packages) for the browser and load tests" >&2
    exit 0
fi
echo "service-test-deps: apt-get install ${need[*]}" >&2
apt-get update -qq
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
