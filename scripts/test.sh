#!/usr/bin/env bash
# Quick start, step 2: make sure the deps and the build are there, run every
# meson test suite, and end with "N passed, N failed, N skipped" (meson
# tests), then "subtests: N passed, N failed, N skipped" (every TAP line and
# Criterion test) and the skip reasons, most frequent first.
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
# run) both default to off; otherwise to 1 and 20.
set -uo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.." || exit 1
BUILD=${BRIG_BUILD_DIR:-build}
ASAN_BUILD=$BUILD-asan
FUZZ_BUILD=$BUILD-fuzz
if [ -n "${BRIG_TEST_ARGS:-}" ]; then
    SANITIZE=${BRIG_SANITIZE:-0} FUZZ_SECONDS=${BRIG_FUZZ_SECONDS:-0}
else
    SANITIZE=${BRIG_SANITIZE:-1} FUZZ_SECONDS=${BRIG_FUZZ_SECONDS:-20}
fi
export BRIG_FUZZ_SECONDS=$FUZZ_SECONDS

LOGS=()          # meson's JSON test logs, one object per test
# Criterion's unit tests also print TAP (on stderr, which meson logs): the
# summary counts their subtests and skip reasons like the TAP scripts'.
export CRITERION_OUTPUTS=tap:-
STEP_FAILED=()   # steps that produced no test log (a build that failed...)
step() { printf '\033[1m==> %s\033[0m\n' "$*" >&2; }

# run_suites DIR LOGBASE [meson test args]: meson test, its log remembered.
run_suites() {
    local dir=$1 base=$2; shift 2
    rm -f "$dir/meson-logs/$base.json"
    meson test -C "$dir" --print-errorlogs --logbase "$base" "$@"
    remember_log "$dir" "$base" $? "$@"
}
# remember_log DIR LOGBASE RC [meson test args]: the JSON log of a meson test
# that exited with RC, or the step's failure.
remember_log() {
    local dir=$1 base=$2 rc=$3; shift 3
    local log=$dir/meson-logs/$base.json
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

# The sanitizer and fuzz builds compile in the background, at the lowest
# priority, while the plain build's tests run: those run one at a time and
# mostly wait on containers, so the other cores are idle (minutes of CI).
# Each step below runs ninja again in the foreground: a no-op when the
# background build succeeded, the build's errors in the log when not.
prebuild() {
    if [ "$SANITIZE" = 1 ]; then
        [ -f "$ASAN_BUILD/build.ninja" ] ||
            meson setup "$ASAN_BUILD" -Db_sanitize=address,undefined -Db_lundef=false >/dev/null 2>&1 || return
        nice -n 19 ninja -C "$ASAN_BUILD" >/dev/null 2>&1
    fi
    if [ "$FUZZ_SECONDS" != 0 ]; then
        [ -f "$FUZZ_BUILD/build.ninja" ] ||
            CC=clang meson setup "$FUZZ_BUILD" -Dfuzz=true -Db_lundef=false >/dev/null 2>&1 || return
        nice -n 19 ninja -C "$FUZZ_BUILD" fuzz-targets >/dev/null 2>&1
    fi
}
PREBUILD=
if [ "$SANITIZE" = 1 ] || [ "$FUZZ_SECONDS" != 0 ]; then
    prebuild & PREBUILD=$!
fi
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
ASAN_INTEGRATION=(integration-lifecycle integration-exec integration-badinput integration-hooks
                  integration-policy integration-policy-compose integration-conformance-start
                  integration-sandbox integration-sandbox-session integration-rootfs-import
                  integration-egress)
sanitizer_run() {
    local reports
    [ -z "$PREBUILD" ] || { step "waiting for the background builds"; wait "$PREBUILD"; PREBUILD=; }
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
    # Without the TAP output: libcriterion keeps allocations of its own for
    # it that LeakSanitizer reports (its subtests are counted in the plain build).
    unset CRITERION_OUTPUTS
    ASAN_OPTIONS="detect_leaks=1:$asan" \
        run_suites "$ASAN_BUILD" asan-unit --suite unit --suite root --suite fuzz
    export CRITERION_OUTPUTS=tap:-
    # The security and integration suites run one test at a time: the
    # libFuzzer runs take the other core meanwhile (fuzz_start).
    [ "$FUZZ_SECONDS" != 0 ] && fuzz_start
    # Containers under ASan run 2-4 times slower: more time per test. Every
    # attack test, and the integration tests that drive the most of brig's
    # code with outside input (config, flags, policy, compose, images, the
    # sandbox, the proxy); the other integration tests run those same code
    # paths again in other shapes, in the plain build (CI's time budget).
    ASAN_OPTIONS="detect_leaks=0:$asan" \
        run_suites "$ASAN_BUILD" asan-security --suite security --timeout-multiplier 3
    ASAN_OPTIONS="detect_leaks=0:$asan" \
        run_suites "$ASAN_BUILD" asan-integration --timeout-multiplier 3 "${ASAN_INTEGRATION[@]}"
    unset UBSAN_OPTIONS
    local f
    for f in "$reports"/*; do
        [ -e "$f" ] || continue
        echo "== sanitizer report $f:"
        head -c 20000 "$f"
        STEP_FAILED+=("sanitizer report: $f")
    done
}

# ---- libFuzzer: every target for BRIG_FUZZ_SECONDS --------------------------
# fuzz_build: the clang build's fuzz targets (the background build's, if it
# succeeded; its errors in the log if not).
fuzz_build() {
    [ -z "$PREBUILD" ] || { step "waiting for the background builds"; wait "$PREBUILD"; PREBUILD=; }
    if [ ! -f "$FUZZ_BUILD/build.ninja" ]; then
        step "meson setup $FUZZ_BUILD (clang, libFuzzer)"
        CC=clang meson setup "$FUZZ_BUILD" -Dfuzz=true -Db_lundef=false >/dev/null ||
            { STEP_FAILED+=("meson setup $FUZZ_BUILD failed"); return 1; }
    fi
    step "ninja -C $FUZZ_BUILD fuzz-targets"
    # Only the fuzz targets: the rest of the tree is tested in the other builds.
    ninja -C "$FUZZ_BUILD" fuzz-targets || { STEP_FAILED+=("the fuzz build failed"); return 1; }
}
# fuzz_start: the timed runs in the background, one target at a time (one
# core for BRIG_FUZZ_SECONDS each, as when they ran two by two alone), while
# the sanitizer build's tests, which run one at a time, leave a core idle:
# ~1 min of CI. Their output is printed, and their log counted, by fuzz_run.
# Without the sanitizer build's settings (its UBSan log_path).
FUZZ_BG='' FUZZ_OUT=''
fuzz_start() {
    fuzz_build || { FUZZ_SECONDS=0; return; }
    step "fuzzing each target for ${FUZZ_SECONDS}s, in the background"
    FUZZ_OUT=$FUZZ_BUILD/meson-logs/fuzz-run.out
    mkdir -p "$FUZZ_BUILD/meson-logs"
    rm -f "$FUZZ_BUILD/meson-logs/fuzz-run.json"
    env -u UBSAN_OPTIONS -u ASAN_OPTIONS meson test -C "$FUZZ_BUILD" --print-errorlogs --logbase fuzz-run \
        --no-rebuild --suite fuzz-run --num-processes 1 >"$FUZZ_OUT" 2>&1 &
    FUZZ_BG=$!
}
fuzz_run() {
    if [ -n "$FUZZ_BG" ]; then
        step "the background fuzzing"
        wait "$FUZZ_BG"
        local rc=$?
        cat "$FUZZ_OUT"
        remember_log "$FUZZ_BUILD" fuzz-run "$rc" --suite fuzz-run
        return
    fi
    fuzz_build || return
    step "fuzzing each target for ${FUZZ_SECONDS}s"
    run_suites "$FUZZ_BUILD" fuzz-run --no-rebuild --suite fuzz-run
}

# The sanitizer build's tests, then the fuzzing (started in the background
# during those tests when both run).
[ "$SANITIZE" = 1 ] && sanitizer_run
[ "$FUZZ_SECONDS" != 0 ] && fuzz_run

# ---- where the time went ------------------------------------------------------
# The 15 slowest tests of every build, so that a CI log shows what to trim
# when the run nears its 30-minute budget.
slowest() {
    [ ${#LOGS[@]} -eq 0 ] && return
    echo "slowest tests (seconds, build, test):"
    local l
    for l in "${LOGS[@]}"; do
        jq -r --arg b "$(basename "$(dirname "$(dirname "$l")")")" \
            '"\(.duration) \($b) \(.name)"' "$l"
    done | sort -rn | head -n 15 | awk '{ printf "  %7.1f  %-12s %s\n", $1, $2, substr($0, index($0, $3)) }'
}
slowest

# ---- one line for CI ----------------------------------------------------------
# One JSON object per test; meson's results: OK, EXPECTEDFAIL, SKIP, FAIL,
# UNEXPECTEDPASS, TIMEOUT, ERROR.
count() {
    if [ ${#LOGS[@]} -eq 0 ]; then echo 0; return; fi
    cat "${LOGS[@]}" | jq -s "map(select(.result | IN($1))) | length"
}
# Subtests: each TAP line of each test's output ("ok", "not ok", "# SKIP
# reason", "1..0 # SKIP reason"), Criterion's included; a test that printed
# no TAP counts as one. Skip reasons are listed with how often each occurs,
# so a missing tool (strace, a python module) shows up in CI's last lines.
subtest_summary() {
    [ ${#LOGS[@]} -eq 0 ] && { echo "subtests: 0 passed, 0 failed, 0 skipped"; return; }
    cat "${LOGS[@]}" | python3 -c '
import json, re, sys, collections
passed = failed = skipped = 0
reasons = collections.Counter()
for line in sys.stdin:
    try:
        t = json.loads(line)
    except ValueError:
        continue
    out = (t.get("stdout") or "") + "\n" + (t.get("stderr") or "")
    n = 0
    for l in out.splitlines():
        m = re.match(r"^1\.\.0\s*#\s*SKIP\s*(.*)", l, re.I)
        if m:
            skipped += 1; n += 1; reasons[t["name"] + ": " + (m.group(1).strip() or "no reason")] += 1
            continue
        m = re.match(r"^(not ok|ok)\b(.*)", l)
        if not m:
            continue
        n += 1
        d = re.search(r"#\s*(SKIP|TODO)\S*\s*(.*)$", m.group(2), re.I)
        if m.group(1) == "not ok" and not (d and d.group(1).upper() == "TODO"):
            failed += 1
        elif d and d.group(1).upper() == "SKIP":
            skipped += 1; reasons[d.group(2).strip() or "no reason"] += 1
        else:
            passed += 1
    if n == 0:
        r = t.get("result")
        if r in ("OK", "EXPECTEDFAIL"): passed += 1
        elif r == "SKIP": skipped += 1; reasons[t["name"] + ": skipped (no reason printed)"] += 1
        else: failed += 1
    elif t.get("result") not in ("OK", "EXPECTEDFAIL", "SKIP") and failed == 0:
        failed += 1     # a crash after its last subtest
print("subtests: %d passed, %d failed, %d skipped" % (passed, failed, skipped))
for r, c in reasons.most_common(20):
    print("  skipped %3d x %s" % (c, r[:160]))
if len(reasons) > 20:
    print("  ... and %d other skip reasons" % (len(reasons) - 20))
'
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
subtests=$(subtest_summary)
echo "$subtests"
[ "$failed" -eq 0 ] && ! grep -q '^subtests: [0-9]* passed, [1-9]' <<<"$subtests"
