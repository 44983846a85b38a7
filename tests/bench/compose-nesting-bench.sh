#!/usr/bin/env bash
# `brig policy check --compose` on compose files nested ever deeper (flow
# sequences `[[[...]]]`, flow mappings `{a: {a: ...}}`) and on a flat one of
# the same size: the time of a refusal (past 64 levels) against the time of
# a file judged in full. A benchmark, not a test (outside CI): it prints
# figures only. With --compare OLD_BRIG the same files go through another
# brig too (an unbounded one took minutes at 520 KB; give it --max-depth).
#
#   tests/bench/compose-nesting-bench.sh [--build DIR] [--rounds N]
#       [--compare OLD_BRIG] [--max-depth N]
set -euo pipefail
build=build rounds=5 compare="" max_depth=260000
while [ $# -gt 0 ]; do
    case $1 in
    --build) build=$2; shift 2 ;;
    --rounds) rounds=$2; shift 2 ;;
    --compare) compare=$2; shift 2 ;;
    --max-depth) max_depth=$2; shift 2 ;;
    *) echo "usage: $0 [--build DIR] [--rounds N] [--compare OLD_BRIG] [--max-depth N]" >&2; exit 2 ;;
    esac
done
BRIG=$(realpath "$build/runtime/brig")
TIMER=$(realpath "$build/tests/bench/bench-timer")
[ -x "$BRIG" ] && [ -x "$TIMER" ] || { echo "no $BRIG or $TIMER: ninja -C $build first" >&2; exit 1; }
W=$(mktemp -d "${TMPDIR:-/tmp}/brig-compose-bench.XXXXXX")
trap 'rm -rf "$W"' EXIT

gen() { # FILE KIND N
    python3 - "$@" <<'PY'
import sys
path, kind, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
head = "services:\n  a:\n    image: busybox@sha256:" + "0" * 64 + "\n"
body = {"seq": lambda: "    x: " + "[" * n + "]" * n + "\n",
        "map": lambda: "    x: " + "{a: " * n + "1" + "}" * n + "\n",
        "flat": lambda: "    x: [" + ",".join("a" for _ in range(n)) + "]\n"}[kind]()
open(path, "w").write(head + body)
PY
}

# median of the wall times (ms) of ROUNDS runs of BRIG on FILE; the exit
# status of the last run
median_ms() { # BRIG FILE
    local i t st ts=()
    for i in $(seq "$rounds"); do
        read -r t _ st < <("$TIMER" "$1" policy check --policy agent --compose "$2")
        ts+=("$t")
    done
    printf '%s\n' "${ts[@]}" | sort -n | awk -v st="$st" '{a[NR]=$1} END {printf "%.1f ms (exit %s)", a[int((NR+1)/2)]/1e6, st}'
}

echo "# brig policy check --compose, median of $rounds runs (wall, fork to reap)"
printf '%-6s %8s %10s  %-28s %s\n' kind depth bytes "$(basename "$BRIG")" "${compare:+compare}"
for kind in seq map flat; do
    for n in 64 1000 4000 16000 65000 260000; do
        [ "$n" -le "$max_depth" ] || continue
        f=$W/$kind-$n.yaml
        gen "$f" "$kind" "$n"
        a=$(median_ms "$BRIG" "$f")
        b=""
        [ -n "$compare" ] && b=$(median_ms "$compare" "$f")
        printf '%-6s %8s %10s  %-28s %s\n' "$kind" "$n" "$(stat -c %s "$f")" "$a" "$b"
    done
done
