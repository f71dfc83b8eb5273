#!/usr/bin/env bash
# Capture the outputs of `audit --json`, `audit` (text; both also with the version detected),
# `groups --json`, `dump`, `dump --json` and `dump --summary` on every real-broker log dir under
# tests/fixtures (and the benchmark segments when they exist), one file per command, into
# OUT_DIR. Run it before and after a change to the core and compare the two directories
# (`diff -r`): a refactor must leave every byte equal.
#
#   scripts/golden/capture.sh OUT_DIR [OFFSETS_AUDITOR]
set -euo pipefail
out=${1:?usage: capture.sh OUT_DIR [offsets-auditor command]}
oa=${2:-.venv/bin/offsets-auditor}
cd "$(dirname "$0")/../.."
mkdir -p "$out"
now=1800000000000  # a fixed "now" (2027-01-15) so the delete horizons do not move
for logs in tests/fixtures/kafka-*/*/kafka-logs tests/fixtures/kafka-*/*/kafka-logs-after; do
    [ -d "$logs" ] || continue
    fixture=$(dirname "$logs")
    version=$(basename "$(dirname "$fixture")"); version=${version#kafka-}
    tag=$(echo "${fixture#tests/fixtures/}-$(basename "$logs")" | tr / _)
    props=()
    [ -f "$fixture/broker-server.properties" ] && props=(--broker-config "$fixture/broker-server.properties")
    "$oa" audit "$logs" --json --now "$now" --kafka-version "$version" "${props[@]}" \
        > "$out/$tag.audit.json" 2> "$out/$tag.audit.err" || echo "exit $?" >> "$out/$tag.audit.err"
    "$oa" audit "$logs" --json --no-groups --now "$now" --kafka-version "$version" "${props[@]}" \
        > "$out/$tag.audit-no-groups.json" 2>&1 || true
    "$oa" audit "$logs" --now "$now" --kafka-version "$version" "${props[@]}" \
        > "$out/$tag.audit.txt" 2>&1 || true
    if [ -f "$fixture/broker-server-load.properties" ]; then
        "$oa" audit "$logs" --json --now "$now" --kafka-version "$version" \
            --broker-config "$fixture/broker-server-load.properties" > "$out/$tag.audit-load.json" 2>&1 || true
    fi
    "$oa" audit "$logs" --json --now "$now" --kafka-version "$version" "${props[@]}" \
        --set min.cleanable.dirty.ratio=0.01 --dedupe-buffer-size 2097154 --cleaner-threads 2 \
        > "$out/$tag.audit-small-map.json" 2>&1 || true
    # the version detected, not given: detection's own path (text and JSON)
    "$oa" audit "$logs" --now "$now" "${props[@]}" > "$out/$tag.audit-detected.txt" 2>&1 || true
    "$oa" audit "$logs" --json --now "$now" "${props[@]}" \
        > "$out/$tag.audit-detected.json" 2>&1 || true
    for era in 0.10.0.1 0.10.1.1 1.1.0 2.4.1 3.9.0 4.0.0; do  # every era's rules on the same bytes
        "$oa" audit "$logs" --json --now "$now" --kafka-version "$era" "${props[@]}" \
            > "$out/$tag.audit-as-$era.json" 2>&1 || true
    done
    "$oa" groups "$logs" --json --kafka-version "$version" > "$out/$tag.groups.json" 2>&1 || true
    segments=$(find "$logs" -name '*.log' -path '*__consumer_offsets-*' | sort)
    # shellcheck disable=SC2086
    "$oa" dump $segments > "$out/$tag.dump.txt" 2> "$out/$tag.dump.err" || true
    # shellcheck disable=SC2086
    "$oa" dump --json $segments > "$out/$tag.dump.jsonl" 2> "$out/$tag.dump-json.err" || true
    # shellcheck disable=SC2086
    "$oa" dump --summary $segments > "$out/$tag.summary.json" 2> "$out/$tag.summary.err" || true
done
for seg in benchmarks/data/*/00000000000000000000.log; do
    [ -f "$seg" ] || continue
    tag=bench_$(basename "$(dirname "$seg")")
    "$oa" dump --summary "$seg" > "$out/$tag.summary.json" 2>&1 || true
    "$oa" dump "$seg" | sha256sum > "$out/$tag.dump.sha256"
done
echo "captured $(ls "$out" | wc -l) files in $out"
