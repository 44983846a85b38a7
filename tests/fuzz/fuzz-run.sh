#!/usr/bin/env bash
# fuzz-run.sh TARGET-BINARY FUZZ-SRC-DIR ARTIFACT-DIR: one timed libFuzzer run
# of a target built with -Dfuzz=true (tests/fuzz/meson.build, suite fuzz-run).
#
# Environment: BRIG_FUZZ_SECONDS (default 60; 0 skips), BRIG_FUZZ_ARGS (more
# libFuzzer flags, e.g. "-jobs=2 -workers=2").
#
# The seeds (FUZZ-SRC-DIR/corpus/NAME) are read, never written: new inputs go
# to a temporary corpus. A crash, leak, timeout or sanitizer report fails the
# run; the input that caused it is kept in ARTIFACT-DIR and printed here
# (base64) so a CI log alone is enough to reproduce it:
#   base64 -d > crash && TARGET-BINARY crash
set -uo pipefail

bin=$1 src=$2 artifacts=$3
name=$(basename "$bin")
secs=${BRIG_FUZZ_SECONDS:-60}
case $secs in ''|*[!0-9]*) echo "BRIG_FUZZ_SECONDS=$secs is not a number of seconds"; exit 1 ;; esac
if [ "$secs" = 0 ]; then echo "BRIG_FUZZ_SECONDS=0: not fuzzing $name"; exit 77; fi

work=$(mktemp -d "/tmp/brig-$name.XXXXXX") || exit 1
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/corpus" "$artifacts" || exit 1
opts=(-max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1
      -artifact_prefix="$work/")
[ -f "$src/$name.dict" ] && opts+=(-dict="$src/$name.dict")
# shellcheck disable=SC2086  # BRIG_FUZZ_ARGS is a list of words
timeout -k 10 $((secs + 120)) "$bin" "${opts[@]}" ${BRIG_FUZZ_ARGS:-} "$work/corpus" "$src/corpus/$name"
rc=$?

found=0
for f in "$work"/crash-* "$work"/leak-* "$work"/timeout-* "$work"/oom-*; do
    [ -e "$f" ] || continue
    found=1
    cp "$f" "$artifacts/$name-${f##*/}"
    echo "== $name: ${f##*/} ($(stat -c %s "$f") bytes), kept as $artifacts/$name-${f##*/}; base64:"
    base64 "$f" | head -c 65536
    echo
done
if [ "$rc" != 0 ] || [ "$found" = 1 ]; then
    echo "$name: libFuzzer exited with status $rc"
    exit 1
fi
echo "$name: ${secs}s without a finding ($(find "$work/corpus" -type f | wc -l) new corpus inputs)"
