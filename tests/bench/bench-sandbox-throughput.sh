#!/usr/bin/env bash
# bench-sandbox-throughput.sh: sustained throughput of one-shot sandboxes,
# `brig sandbox run --policy agent -- sh -c 'echo TOKEN'`, N runs kept C at
# a time (C = 1, 2, 4, 8), next to bwrap running the same command the same
# way. Prints runs per second; checks that every run printed its own token
# and that nothing (state, cgroup, process) is left. Asserts no time. Not a
# test: never run by meson.
#     sudo tests/bench/bench-sandbox-throughput.sh [--build DIR] [--runs N]
# Method and results: docs/performance.md ("Sustained throughput").
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
build=${BRIG_BUILD:-$repo/build}
runs=64
while [ $# -gt 0 ]; do
    case $1 in
        --build) build=${2:?}; shift 2 ;;
        --runs) runs=${2:?}; shift 2 ;;
        *) echo "usage: $0 [--build DIR] [--runs N]" >&2; exit 2 ;;
    esac
done
[ "$(id -u)" = 0 ] || { echo "run as root" >&2; exit 77; }
brig=$build/runtime/brig
W=$(mktemp -d /tmp/brig-bench-tput.XXXXXX)
trap 'rm -rf "$W"' EXIT
chmod 0755 "$W"
"$repo/rootfs-tools/brig-mkbundle" --probe "$build/tests/probe/brig-probe" --brig "$brig" --no-config "$W/b" >/dev/null 2>&1
R=$W/b/rootfs
mkdir -p "$W/ws" "$W/out" && chown 1000:1000 "$W/ws"

# one run: its token is its number; the result (JSON for brig) goes to out/
one_sandbox() {
    "$brig" sandbox run --policy agent --state-root "$W/state" --rootfs "$R" --workspace "$W/ws" \
        --json -- sh -c "echo tok$1" > "$W/out/$1" 2>&1
}
one_bwrap() {
    bwrap --unshare-all --die-with-parent --ro-bind "$R" / --dev /dev --proc /proc --tmpfs /tmp \
        --bind "$W/ws" /workspace --uid 1000 --gid 1000 --cap-drop ALL sh -c "echo tok$1" > "$W/out/$1" 2>&1
}
export -f one_sandbox one_bwrap
export brig W R

# verify RT: every output holds its own token and no other
verify() {
    local i bad=0
    for ((i = 0; i < runs; i++)); do
        grep -q "tok$i\b" "$W/out/$i" || bad=$((bad + 1))
        if [ "$1" = sandbox ] && ! jq -e '.exit_code == 0' "$W/out/$i" >/dev/null 2>&1; then
            bad=$((bad + 1))
        fi
    done
    echo "$bad"
}

kinds="sandbox"
command -v bwrap >/dev/null && kinds+=" bwrap"
echo "load: $(cut -d' ' -f1-3 /proc/loadavg) on $(nproc) cores; $runs runs per cell"
printf '%-8s %6s %10s %10s %8s\n' runtime conc wall_s runs_per_s wrong
for c in 1 2 4 8; do
    for k in $kinds; do
        rm -f "$W/out/"*
        t0=$(date +%s%N)
        seq 0 $((runs - 1)) | xargs -P "$c" -I{} bash -c "one_$k {}" || true
        t1=$(date +%s%N)
        bad=$(verify "$k")
        awk -v k="$k" -v c="$c" -v ns=$((t1 - t0)) -v n="$runs" -v bad="$bad" \
            'BEGIN { printf "%-8s %6d %10.2f %10.1f %8d\n", k, c, ns / 1e9, n / (ns / 1e9), bad }'
    done
done
# nothing left of the sandboxes: no state (the seccomp cache is the state
# root's own), no process of this bench's state root
left=$(find "$W/state" -mindepth 1 -maxdepth 1 ! -name .seccomp-cache 2>/dev/null | wc -l)
echo "state entries left: $left; brig processes left: $(pgrep -fc "state-root $W/state" || true)"
