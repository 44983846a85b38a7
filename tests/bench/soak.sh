#!/bin/bash
# soak.sh: brig over many sandboxes, looking for what grows. A benchmark,
# not a test (outside CI but for --ci): it prints figures, and fails only
# when something leaks. Figures: docs/performance.md, "Soak".
#
#   soak.sh [--build DIR] [--runs N] [--concurrency C] [--execs N] [--conns N] [--ci]
#
# Three phases, each sampled ten times along the way:
#   runs     N one-shot `brig sandbox run -- true` at concurrency C, each
#            timed by bench-timer (fork to reap, peak RSS); at every sample
#            one run more that sleeps, whose brig's open fds and RSS are read
#            while it waits, and what the host holds of the runs: their
#            cgroup directories, state entries and owner files, mounts
#            under the test's directory, processes (tagged by --env)
#   session  one long-lived sandbox, N `sandbox exec -- true` one after
#            the other: its brig-init's fds and RSS, its exec cgroups, the
#            processes in its cgroup
#   egress   one sandbox under an egress policy whose command opens N
#            connections through brig's proxy, one after the other, to a
#            server on loopback: the proxy's and its audit writer's fds and
#            RSS, sampled every 0.2 s
# It fails (exit 1) if any count of what is left differs from before the
# phase at any sample, if a run or exec failed, or if a gauge (fds, RSS)
# of the last samples is above the first ones' (fds: by more than 2, RSS:
# by more than 10% and 1 MiB). --ci: 20 runs at concurrency 4, 20 execs,
# 100 connections (seconds); the default: 1000, 4, 1000, 2000.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=$here/../../build runs=1000 conc=4 execs=1000 conns=2000 ci=0
while [ $# -gt 0 ]; do
    case $1 in
        --build) build=$2; shift 2 ;;
        --runs) runs=$2; shift 2 ;;
        --concurrency) conc=$2; shift 2 ;;
        --execs) execs=$2; shift 2 ;;
        --conns) conns=$2; shift 2 ;;
        --ci) ci=1 runs=20 conc=4 execs=20 conns=100; shift ;;
        *) echo "usage: $0 [--build DIR] [--runs N] [--concurrency C] [--execs N] [--conns N] [--ci]" >&2; exit 2 ;;
    esac
done
if [ "$(id -u)" != 0 ]; then echo "soak.sh: SKIP: sandboxes need root"; exit 77; fi
[ -x /bin/busybox ] || { echo "soak.sh: SKIP: no static /bin/busybox"; exit 77; }
command -v cc >/dev/null || { echo "soak.sh: SKIP: no C compiler for the egress client"; exit 77; }
brig=$build/runtime/brig timer=$build/tests/bench/bench-timer
[ -x "$brig" ] && [ -x "$timer" ] || { echo "soak.sh: no $brig or $timer (ninja -C $build)"; exit 2; }

T=$(mktemp -d /tmp/brig-soak.XXXXXX)
chmod 0755 "$T"
TAG=soak$$
SB=$T/sb SESSION=soak-$$ SRV=
cleanup() {
    [ -z "$SRV" ] || kill "$SRV" 2>/dev/null
    "$brig" sandbox rm --force --state-root "$SB" "$SESSION" >/dev/null 2>&1
    local p
    for p in $(grep -lsz "^BRIG_SOAK_TAG=$TAG\$" /proc/[0-9]*/environ | cut -d/ -f3); do kill -9 "$p" 2>/dev/null; done
    rm -rf --one-file-system "$T"
}
trap cleanup EXIT
trap "exit 130" INT TERM
R=$T/rootfs
mkdir -p "$R"/{bin,usr/bin,etc,proc,sys,dev,tmp,var/tmp,workspace}
cp /bin/busybox "$R/bin/"
for a in sh true sleep echo; do ln -s busybox "$R/bin/$a"; done
printf 'root:x:0:0::/:/bin/sh\nuser:x:1000:1000::/:/bin/sh\n' > "$R/etc/passwd"
printf 'root:x:0:\nuser:x:1000:\n' > "$R/etc/group"
cc -static -O2 -o "$R/usr/bin/egress-client" "$here/../integration/egress-client.c" || exit 2
mkdir -p "$T/ws" && chown 1000:1000 "$T/ws"
sbargs=(--state-root "$SB" --rootfs "$R" --workspace "$T/ws" --env "BRIG_SOAK_TAG=$TAG")

FAIL=()
fail() { FAIL+=("$*"); echo "FAIL: $*"; }
# host side, as counts
tagged() { grep -lsz "^BRIG_SOAK_TAG=$TAG\$" /proc/[0-9]*/environ | wc -l; }
entries() { ls -A "$SB" 2>/dev/null | grep -vc '^\.seccomp-cache$'; }
mounts() { awk -v d="$T" 'index($5, d) == 1' /proc/self/mountinfo | wc -l; }
# cgroup directories of the ids in file $1 still there
leaves() {
    local n=0 id c
    while read -r id; do
        for c in /sys/fs/cgroup/*/brig-sandbox/"$id" /sys/fs/cgroup/brig-sandbox/"$id"; do
            [ -d "$c" ] && n=$((n + 1))
        done
    done < "$1"
    echo $n
}
fds() { ls "/proc/$1/fd" 2>/dev/null | wc -l; }
rss() { awk '/^VmRSS/ { print $2 }' "/proc/$1/status" 2>/dev/null; }
median() { sort -n | awk '{ v[NR] = $1 } END { print (NR ? v[int((NR + 1) / 2)] : 0) }'; }
pct() { sort -n | awk -v p="$1" '{ v[NR] = $1 } END { i = int(NR * p / 100 + 0.999); if (i < 1) i = 1; print (NR ? v[i] : 0) }'; }
# grows NAME FILE: the gauge in FILE (one value a line, in order) is not
# higher in its last third than in its first (fds +2, RSS +10% and 1 MiB)
grows() {
    local name=$1 f=$2 n first last
    n=$(wc -l < "$f")
    [ "$n" -ge 3 ] || return 0
    first=$(head -n $((n / 3)) "$f" | sort -n | tail -n 1)
    last=$(tail -n $((n / 3)) "$f" | sort -n | tail -n 1)
    case $name in
        *fds*) [ "$last" -le $((first + 2)) ] ;;
        *) [ "$last" -le $((first + (first / 10 > 1024 ? first / 10 : 1024))) ] ;;
    esac || fail "$name grows: $first in the first samples, $last in the last"
    echo "$name: first samples max $first, last samples max $last"
}

echo "soak: $runs runs at concurrency $conc, $execs execs, $conns connections; $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"

# ---- one-shot runs ----
"$brig" sandbox run "${sbargs[@]}" -- true >/dev/null 2>&1     # the seccomp cache, the rootfs checks
base_e=$(entries) base_m=$(mounts) base_p=$(tagged)
: > "$T/runs.txt"
chunk=$(((runs + 9) / 10)) done_runs=0 wall_ns=0
while [ $done_runs -lt "$runs" ]; do
    n=$((runs - done_runs < chunk ? runs - done_runs : chunk))
    : > "$T/ids"
    start=$(date +%s%N)
    for w in $(seq 1 "$conc"); do
        (
            for i in $(seq "$w" "$conc" "$n"); do
                line=$("$timer" -e "$T/err.$w" "$brig" sandbox run "${sbargs[@]}" -- true)
                id=$(grep -o 'sb-[0-9a-f]\{12\}' "$T/err.$w" | head -n 1)
                echo "$line ${id:-no-id}" >> "$T/runs.txt"
                if [ -n "$id" ]; then echo "$id" >> "$T/ids"; else cat "$T/err.$w" >> "$T/no-id"; fi
            done
        ) &
    done
    wait
    wall_ns=$((wall_ns + $(date +%s%N) - start))
    done_runs=$((done_runs + n))
    # one run more (not timed), read while it sleeps
    "$brig" sandbox run "${sbargs[@]}" -- sleep 0.5 >/dev/null 2>&1 &
    p=$!
    for _ in $(seq 100); do [ "$(entries)" -gt "$base_e" ] && break; sleep 0.02; done
    sleep 0.1
    echo "$(fds $p)" >> "$T/brig-fds"
    echo "$(rss $p)" >> "$T/brig-rss"
    wait $p
    l=$(leaves "$T/ids") e=$(entries) m=$(mounts) t=$(tagged)
    echo "  after $done_runs runs: left cgroups $l, state entries $((e - base_e)), mounts $((m - base_m)), processes $((t - base_p)); a live brig: $(tail -n 1 "$T/brig-fds") fds, $(tail -n 1 "$T/brig-rss") KiB"
    [ "$l" = 0 ] && [ "$e" = "$base_e" ] && [ "$m" = "$base_m" ] && [ "$t" = "$base_p" ] ||
        fail "runs: something left after $done_runs runs (cgroups $l, entries $e/$base_e, mounts $m/$base_m, processes $t/$base_p)"
done
bad=$(awk '$3 != 0' "$T/runs.txt" | wc -l)
[ "$bad" = 0 ] || fail "runs: $bad of $runs exited non-zero (first: $(awk '$3 != 0' "$T/runs.txt" | head -n 1))"
[ ! -s "$T/no-id" ] || fail "runs: a run's summary named no sandbox: $(head -c 300 "$T/no-id")"
awk '{ print $1 }' "$T/runs.txt" > "$T/lat"
awk '{ print $2 }' "$T/runs.txt" > "$T/peak"
p50=$(median < "$T/lat") p99=$(pct 99 < "$T/lat")
awk -v n="$runs" -v w="$wall_ns" -v p50="$p50" -v p99="$p99" -v pm="$(median < "$T/peak")" \
    -v px="$(sort -n "$T/peak" | tail -n 1)" 'BEGIN {
    printf "runs: %d in %.1f s: %.1f runs/s; latency p50 %.1f ms, p99 %.1f ms; peak RSS (brig and what it reaped) median %d KiB, max %d KiB\n",
        n, w / 1e9, n * 1e9 / w, p50 / 1e6, p99 / 1e6, pm, px }'
echo "runs: load average at the end $(cut -d' ' -f1-3 /proc/loadavg)"
grows "runs: a live brig's fds" "$T/brig-fds"
grows "runs: a live brig's RSS (KiB)" "$T/brig-rss"
# the peak RSS of each tenth of the runs, in order
split -n l/10 -d "$T/peak" "$T/peak."
for f in "$T"/peak.*; do median < "$f"; done > "$T/peak-med"
grows "runs: peak RSS, median of each tenth (KiB)" "$T/peak-med"

# ---- one session, many execs ----
"$brig" sandbox create "${sbargs[@]}" "$SESSION" >/dev/null || fail "session: create failed"
init=$("$brig" sandbox ls --json --state-root "$SB" | jq -r --arg n "$SESSION" '.[] | select(.name == $n) | .pid')
base_p=$(tagged)
cgdir=$(ls -d /sys/fs/cgroup/pids/brig-sandbox/"$SESSION" /sys/fs/cgroup/brig-sandbox/"$SESSION" 2>/dev/null | head -n 1)
: > "$T/execs.txt"
chunk=$(((execs + 9) / 10)) done_execs=0 wall_ns=0
while [ $done_execs -lt "$execs" ]; do
    n=$((execs - done_execs < chunk ? execs - done_execs : chunk))
    start=$(date +%s%N)
    for _ in $(seq "$n"); do
        "$timer" "$brig" sandbox exec --state-root "$SB" "$SESSION" -- true >> "$T/execs.txt"
    done
    wall_ns=$((wall_ns + $(date +%s%N) - start))
    done_execs=$((done_execs + n))
    echo "$(fds "$init")" >> "$T/init-fds"
    echo "$(rss "$init")" >> "$T/init-rss"
    kids=$(ls -d "$cgdir"/x-* 2>/dev/null | wc -l)
    procs=$(cat "$cgdir/cgroup.procs" 2>/dev/null | wc -l)
    echo "  after $done_execs execs: exec cgroups left $kids, processes in the sandbox $procs, tagged $(($(tagged) - base_p)); brig-init: $(tail -n 1 "$T/init-fds") fds, $(tail -n 1 "$T/init-rss") KiB"
    [ "$kids" = 0 ] && [ "$procs" = 1 ] && [ "$(tagged)" = "$base_p" ] ||
        fail "session: something left after $done_execs execs (exec cgroups $kids, processes $procs)"
done
bad=$(awk '$3 != 0' "$T/execs.txt" | wc -l)
[ "$bad" = 0 ] || fail "session: $bad of $execs execs exited non-zero"
awk -v n="$execs" -v w="$wall_ns" -v p50="$(awk '{ print $1 }' "$T/execs.txt" | median)" \
    -v p99="$(awk '{ print $1 }' "$T/execs.txt" | pct 99)" 'BEGIN {
    printf "session: %d execs in %.1f s: %.1f execs/s; latency p50 %.1f ms, p99 %.1f ms\n", n, w / 1e9, n * 1e9 / w,
        p50 / 1e6, p99 / 1e6 }'
echo "session: load average at the end $(cut -d' ' -f1-3 /proc/loadavg)"
grows "session: brig-init's fds" "$T/init-fds"
grows "session: brig-init's RSS (KiB)" "$T/init-rss"
"$brig" sandbox rm --state-root "$SB" "$SESSION" >/dev/null || fail "session: rm failed"

# ---- egress: one sandbox, many connections ----
port=$((20000 + RANDOM % 20000))
"$R/usr/bin/egress-client" serve "$port" & SRV=$!
echo "127.0.0.1 soak.example.test" > "$T/hosts"
cat > "$T/pol.json" <<POL
{"name": "soak-egress", "network": {"mode": "egress", "allow": ["soak.example.test:$port"]}, "workspace": null,
 "timeouts": {"wall": "30m", "idle": "30m"}, "audit": {"path": "$T/audit.jsonl", "maxSize": "1MiB"}}
POL
req="GET http://soak.example.test:$port/one HTTP/1.0\r\nHost: soak.example.test:$port\r\n\r\n"
BRIG_EGRESS_HOSTS=$T/hosts "$brig" sandbox run --policy "$T/pol.json" --state-root "$SB" --rootfs "$R" \
    --env "BRIG_SOAK_TAG=$TAG" -- /usr/bin/egress-client setup 127.0.0.1 3128 "$conns" "$req" > "$T/egress.out" 2>&1 &
eb=$!
: > "$T/proxy-fds"; : > "$T/proxy-rss"; : > "$T/log-fds"; : > "$T/log-rss"
while kill -0 $eb 2>/dev/null; do
    px=$(pgrep -P $eb -x brig-egress | head -n 1)
    if [ -n "$px" ]; then
        lg=$(pgrep -P "$px" -x brig-egress-log | head -n 1)
        f=$(fds "$px") r=$(rss "$px")
        [ -n "$r" ] && { echo "$f" >> "$T/proxy-fds"; echo "$r" >> "$T/proxy-rss"; }
        if [ -n "$lg" ]; then
            f=$(fds "$lg") r=$(rss "$lg")
            [ -n "$r" ] && { echo "$f" >> "$T/log-fds"; echo "$r" >> "$T/log-rss"; }
        fi
    fi
    sleep 0.2
done
wait $eb; rc=$?
[ $rc = 0 ] || fail "egress: the sandbox exited $rc: $(head -c 300 "$T/egress.out")"
echo "egress: $conns connections, set-up time per connection in µs: $(grep -o 'us=[0-9]* median=[0-9]*' "$T/egress.out" | head -n 1) ($(wc -l < "$T/proxy-fds") samples of the proxy)"
grows "egress: the proxy's fds" "$T/proxy-fds"
grows "egress: the proxy's RSS (KiB)" "$T/proxy-rss"
grows "egress: the audit writer's fds" "$T/log-fds"
grows "egress: the audit writer's RSS (KiB)" "$T/log-rss"
l=$(entries) t=$(tagged)
[ "$l" = 0 ] && [ "$t" = 0 ] || fail "egress: left state entries $l, processes $t"

if [ ${#FAIL[@]} -gt 0 ]; then
    echo "soak: ${#FAIL[@]} failure(s)"
    exit 1
fi
echo "soak: leaks 0"
