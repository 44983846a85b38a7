#!/usr/bin/env bash
# Quick start, step 2: make sure the deps and the build are there, run every
# meson test suite, and end with one line: "N passed, N failed, N skipped".
# Exits non-zero if anything failed.
#
# Environment: BRIG_BUILD_DIR (default build), BRIG_TEST_ARGS (extra
# `meson test` arguments, e.g. "--suite integration").
set -uo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.." || exit 1
BUILD=${BRIG_BUILD_DIR:-build}

bash scripts/setup.sh --no-demo || { echo "setup failed"; echo "0 passed, 1 failed, 0 skipped"; exit 1; }

log=$BUILD/meson-logs/testlog.json
rm -f "$log"
# shellcheck disable=SC2086  # BRIG_TEST_ARGS is a list of words
meson test -C "$BUILD" --print-errorlogs ${BRIG_TEST_ARGS:-}
rc=$?

if [ ! -s "$log" ]; then
    echo "meson test wrote no $log (exit status $rc)"
    echo "0 passed, 1 failed, 0 skipped"
    exit 1
fi
# One JSON object per test; meson's results: OK, EXPECTEDFAIL, SKIP, FAIL,
# UNEXPECTEDPASS, TIMEOUT, ERROR.
count() { jq -s "map(select(.result | IN($1))) | length" "$log"; }
passed=$(count '"OK", "EXPECTEDFAIL"')
failed=$(count '"FAIL", "UNEXPECTEDPASS", "TIMEOUT", "ERROR"')
skipped=$(count '"SKIP"')
if [ "${CI:-}" = true ] && [ "$failed" -gt 0 ]; then
    echo "failed tests:"
    jq -r 'select(.result != "OK" and .result != "SKIP" and .result != "EXPECTEDFAIL") | "  \(.name): \(.result)"' "$log"
fi
echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ] && [ "$rc" -eq 0 ]
