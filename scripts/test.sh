#!/usr/bin/env bash
# Quick start, step 2: make sure the deps and the build are there, run every
# meson test suite, and end with one line: "N passed, N failed, N skipped".
# Exits non-zero if anything failed.
#
# Three builds, counted together in that last line (docs/testing.md):
#   BUILD        every suite
#   BUILD-asan   gcc, -fsanitize=address,undefined: the unit, root, fuzz
#                (replay), integration and security suites
#   BUILD-fuzz   clang, -Dfuzz=true: each libFuzzer target of
#                tests/fuzz/meson.build runs BRIG_FUZZ_SECONDS (suite fuzz-run)
#
# Environment: BRIG_BUILD_DIR (default build), BRIG_TEST_ARGS (extra
# `meson test` arguments for BUILD, e.g. "--suite integration"),
# BRIG_SANITIZE (1: run the sanitizer build; 0: skip it), BRIG_FUZZ_SECONDS
# (per target; 0: skip the fuzz build). With BRIG_TEST_ARGS set (a partial
# run) both default to off; otherwise to 1 and 60.
set -uo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.." || exit 1
BUILD=${BRIG_BUILD_DIR:-build}
ASAN_BUILD=$BUILD-asan
FUZZ_BUILD=$BUILD-fuzz
if [ -n "${BRIG_TEST_ARGS:-}" ]; then
    SANITIZE=${BRIG_SANITIZE:-0} FUZZ_SECONDS=${BRIG_FUZZ_SECONDS:-0}
else
    SANITIZE=${BRIG_SANITIZE:-1} FUZZ_SECONDS=${BRIG_FUZZ_SECONDS:-60}
fi
export BRIG_FUZZ_SECONDS=$FUZZ_SECONDS

LOGS=()          # meson's JSON test logs, one object per test
STEP_FAILED=()   # steps that produced no test log (a build that failed...)
step() { printf '\033[1m==> %s\033[0m\n' "$*" >&2; }

# run_suites DIR LOGBASE [meson test args]: meson test, its log remembered.
run_suites() {
    local dir=$1 base=$2; shift 2
    rm -f "$dir/meson-logs/$base.json"
    meson test -C "$dir" --print-errorlogs --logbase "$base" "$@"
    local rc=$? log=$dir/meson-logs/$base.json
    if [ ! -s "$log" ]; then
        STEP_FAILED+=("meson test -C $dir $*: exit status $rc, wrote no $log")
        return
    fi
    LOGS+=("$log")
    # A failure meson did not log as a test's (a rebuild that failed...).
    [ "$rc" = 0 ] || jq -se 'any(.result != "OK" and .result != "SKIP" and .result != "EXPECTEDFAIL")' "$log" >/dev/null ||
        STEP_FAILED+=("meson test -C $dir $*: exit status $rc")
}

# ---- the plain build: every suite ------------------------------------------
bash scripts/setup.sh --no-demo || { echo "setup failed"; echo "0 passed, 1 failed, 0 skipped"; exit 1; }
# shellcheck disable=SC2086  # BRIG_TEST_ARGS is a list of words
run_suites "$BUILD" testlog ${BRIG_TEST_ARGS:-}

# ---- ASan + UBSan: the suites that run brig's own code ---------------------
# brig-probe and vm-helper stay static and unsanitized (override_options in
# their meson.build). Reports go to files (a report from a process whose exit
# status no test looks at, such as a refused create a test expects to fail,
# would otherwise pass unseen); any file there is a failure. The leak check
# runs in the unit tests; brig runs containers in the others, where it would
# add ~0.1 s to every command and cannot stop the world in an init that has
# dropped its capabilities.
sanitizer_run() {
    local reports
    reports=$(realpath -m "$ASAN_BUILD/meson-logs/sanitizer")
    if [ ! -f "$ASAN_BUILD/build.ninja" ]; then
        step "meson setup $ASAN_BUILD (ASan + UBSan)"
        meson setup "$ASAN_BUILD" -Db_sanitize=address,undefined -Db_lundef=false >/dev/null ||
            { STEP_FAILED+=("meson setup $ASAN_BUILD failed"); return; }
    fi
    step "ninja -C $ASAN_BUILD"
    ninja -C "$ASAN_BUILD" || { STEP_FAILED+=("the sanitizer build failed"); return; }
    rm -rf "$reports" && mkdir -p "$reports"
    local asan="strict_string_checks=1:log_path=$reports/asan"
    export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1:log_path=$reports/ubsan"
    ASAN_OPTIONS="detect_leaks=1:$asan" \
        run_suites "$ASAN_BUILD" asan-unit --suite unit --suite root --suite fuzz
    # Containers under ASan run 2-4 times slower: more time per test.
    ASAN_OPTIONS="detect_leaks=0:$asan" \
        run_suites "$ASAN_BUILD" asan-containers --suite integration --suite security \
        --timeout-multiplier 3
    unset UBSAN_OPTIONS
    local f
    for f in "$reports"/*; do
        [ -e "$f" ] || continue
        echo "== sanitizer report $f:"
        head -c 20000 "$f"
        STEP_FAILED+=("sanitizer report: $f")
    done
}
[ "$SANITIZE" = 1 ] && sanitizer_run

# ---- libFuzzer: every target for BRIG_FUZZ_SECONDS --------------------------
fuzz_run() {
    if [ ! -f "$FUZZ_BUILD/build.ninja" ]; then
        step "meson setup $FUZZ_BUILD (clang, libFuzzer)"
        CC=clang meson setup "$FUZZ_BUILD" -Dfuzz=true -Db_lundef=false >/dev/null ||
            { STEP_FAILED+=("meson setup $FUZZ_BUILD failed"); return; }
    fi
    step "ninja -C $FUZZ_BUILD fuzz-targets"
    # Only the fuzz targets: the rest of the tree is tested in the other builds.
    ninja -C "$FUZZ_BUILD" fuzz-targets || { STEP_FAILED+=("the fuzz build failed"); return; }
    step "fuzzing each target for ${FUZZ_SECONDS}s"
    run_suites "$FUZZ_BUILD" fuzz-run --no-rebuild --suite fuzz-run
}
[ "$FUZZ_SECONDS" != 0 ] && fuzz_run

# ---- one line for CI ----------------------------------------------------------
# One JSON object per test; meson's results: OK, EXPECTEDFAIL, SKIP, FAIL,
# UNEXPECTEDPASS, TIMEOUT, ERROR.
count() {
    if [ ${#LOGS[@]} -eq 0 ]; then echo 0; return; fi
    cat "${LOGS[@]}" | jq -s "map(select(.result | IN($1))) | length"
}
passed=$(count '"OK", "EXPECTEDFAIL"')
failed=$(( $(count '"FAIL", "UNEXPECTEDPASS", "TIMEOUT", "ERROR"') + ${#STEP_FAILED[@]} ))
skipped=$(count '"SKIP"')
if [ "$failed" -gt 0 ]; then
    echo "failed:"
    [ ${#LOGS[@]} -eq 0 ] || for l in "${LOGS[@]}"; do
        jq -r --arg b "$(dirname "$(dirname "$l")")" \
            'select(.result != "OK" and .result != "SKIP" and .result != "EXPECTEDFAIL") | "  \($b): \(.name): \(.result)"' "$l"
    done
    [ ${#STEP_FAILED[@]} -eq 0 ] || printf '  %s\n' "${STEP_FAILED[@]}"
fi
echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
