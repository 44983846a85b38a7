#!/usr/bin/env bash
# egress-cred-bench.sh [--build DIR] [--rounds N]: what a credential adds
# to the start of a sandbox (docs/egress.md, "Credentials"): `brig sandbox
# run -- true` under an egress policy with a credential (network.credentials,
# a tlsCA: the proxy reads the key, starts brig-egress-tls) against the same
# policy without it, and without egress at all; interleaved in rounds (the
# order rotates), medians and the ratio cred / egress. Then one request to
# a local HTTPS server through the credential path against a CONNECT
# tunnel to it (the client's own TLS is not timed: the tunnel's first
# answer byte), to show the first request's wait for the helper.
# Prints figures, asserts no time. Not a test: never run by meson.
#     sudo tests/bench/egress-cred-bench.sh [--build DIR] [--rounds N]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
build=${BRIG_BUILD:-$repo/build}
rounds=20
while [ $# -gt 0 ]; do
    case $1 in
        --build) build=${2:?}; shift 2 ;;
        --rounds) rounds=${2:?}; shift 2 ;;
        *) echo "usage: $0 [--build DIR] [--rounds N]" >&2; exit 2 ;;
    esac
done
[ "$(id -u)" = 0 ] || { echo "run as root" >&2; exit 77; }
brig=$build/runtime/brig
timer=$build/tests/bench/bench-timer
W=$(mktemp -d /tmp/brig-egress-cred-bench.XXXXXX)
trap 'kill $srv 2>/dev/null; rm -rf "$W"' EXIT
chmod 0755 "$W"
R=$W/rootfs
mkdir -p "$R"/{bin,usr/bin,etc,proc,sys,dev,tmp,var/tmp} "$W/res"
cp /bin/busybox "$R/bin/" && ln -s busybox "$R/bin/true" && ln -s busybox "$R/bin/sh"
cc -static -O2 -o "$R/usr/bin/egress-client" "$repo/tests/integration/egress-client.c"
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 1 -subj /CN=bench \
    -addext subjectAltName=DNS:bench.example.test -keyout "$W/k.pem" -out "$W/c.pem" 2>/dev/null
python3 "$repo/tests/integration/egress-tls-server.py" "$W/port" "$W/tls.log" "$W/c.pem" "$W/k.pem" & srv=$!
for _ in $(seq 100); do [ -s "$W/port" ] && break; sleep 0.05; done
port=$(cat "$W/port")
echo "127.0.0.1 bench.example.test" > "$W/hosts"
export BRIG_EGRESS_HOSTS=$W/hosts BRIG_BENCH_KEY=sk-bench-0123456789abcdef
policy() {  # NAME NETWORK
    printf '{"name": "%s", "network": %s, "workspace": null, "audit": {"path": "%s/audit.jsonl"}}\n' \
        "$1" "$2" "$W" > "$W/$1.json"
}
allow="\"allow\": [\"bench.example.test:$port\", \"127.0.0.1:$port\"]"
policy none '{"mode": "none"}'
policy egress "{\"mode\": \"egress\", $allow}"
policy cred "{\"mode\": \"egress\", $allow, \"tlsCA\": \"$W/c.pem\", \"credentials\":
    [{\"host\": \"bench.example.test\", \"port\": $port, \"header\": \"x-api-key\", \"value\": \"env:BRIG_BENCH_KEY\"}]}"
run() { "$timer" -e "$W/res/$1.err" "$brig" sandbox run --policy "$W/$1.json" --state-root "$W/state" --rootfs "$R" -- "${@:2}"; }

list=(none egress cred)
for p in "${list[@]}"; do     # warm-up; a failure stops the bench
    read -r _ _ st < <(run "$p" true)
    [ "$st" = 0 ] || { echo "$p failed (status $st):" >&2; cat "$W/res/$p.err" >&2; exit 1; }
done
echo "load: $(cut -d' ' -f1-3 /proc/loadavg) on $(nproc) cores; $rounds rounds of sandbox run -- true under: ${list[*]}"
for ((i = 0; i < rounds; i++)); do
    for ((k = 0; k < ${#list[@]}; k++)); do
        p=${list[$(((i + k) % ${#list[@]}))]}
        read -r ns _ st < <(run "$p" true)
        [ "$st" = 0 ] || { echo "$p failed in round $i" >&2; exit 1; }
        echo "$ns" >> "$W/res/$p"
    done
done
median() { sort -n "$1" | awk '{v[NR] = $1} END {print v[int((NR + 1) / 2)]}'; }
printf '%-8s %10s %10s %10s\n' policy median_ms min_ms max_ms
for p in "${list[@]}"; do
    sort -n "$W/res/$p" | awk -v p="$p" -v m="$(median "$W/res/$p")" \
        'NR == 1 { mn = $1 } { mx = $1 } END { printf "%-8s %10.1f %10.1f %10.1f\n", p, m / 1e6, mn / 1e6, mx / 1e6 }'
done
awk -v c="$(median "$W/res/cred")" -v e="$(median "$W/res/egress")" \
    'BEGIN { printf "with a credential: %+.1f ms on egress without one (%.3fx)\n", (c - e) / 1e6, c / e }'

echo "== the first answer byte of one request, in the sandbox (median of 5 runs, µs)"
get="GET http://bench.example.test:$port/echo HTTP/1.1\r\nHost: bench.example.test:$port\r\n\r\n"
for how in cred egress; do
    for _ in 1 2 3 4 5; do
        if [ "$how" = cred ]; then
            "$brig" sandbox run --policy "$W/cred.json" --state-root "$W/state" --rootfs "$R" -- \
                /usr/bin/egress-client setup 127.0.0.1 3128 1 "$get" 2>/dev/null
        else
            "$brig" sandbox run --policy "$W/egress.json" --state-root "$W/state" --rootfs "$R" -- \
                /usr/bin/egress-client setup 127.0.0.1 3128 1 "CONNECT bench.example.test:$port HTTP/1.1\r\n\r\n" 2>/dev/null
        fi
    done | sed -n 's/.*median=\([0-9]*\).*/\1/p' | sort -n | sed -n 3p |
        sed "s/^/$([ "$how" = cred ] && echo 'credential: plain GET, TLS by the helper, its answer' || echo 'no credential: CONNECT until the proxy'"'"'s 200'): /"
done
