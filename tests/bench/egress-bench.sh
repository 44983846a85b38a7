#!/bin/bash
# egress-bench.sh [--build DIR] [--size MiB] [--conns N]: throughput and
# connection set-up through brig's egress proxy (docs/egress.md) against
# the same client straight to the same server on loopback. A benchmark,
# not a test (outside CI): it prints figures, docs/performance.md has them.
#   - the server: busybox httpd on 127.0.0.1, one file of SIZE MiB;
#   - direct: egress-client fetch on the host, GET over loopback;
#   - proxied: the same client in a sandbox (brig sandbox run), CONNECT
#     through the proxy then the same GET (spliced both ways);
#   - curl (when the host has it; copied into the rootfs with its
#     libraries): the same download, direct and through the proxy
#     (CONNECT tunnel), as a user would;
#   - set-up: N connections one after the other until the first answer
#     byte of the server: direct GET of a 1-byte file vs the same GET
#     through the proxy (plain HTTP: accept, parse, rules, connect); the
#     difference is the proxy's share. CONNECT until the proxy's "200".
# Each round runs direct and proxied back to back and prints their ratio:
# on a shared machine only figures of one moment compare.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=$here/../../build size=1024 conns=200
while [ $# -gt 0 ]; do
    case $1 in
        --build) build=$2; shift 2 ;;
        --size) size=$2; shift 2 ;;
        --conns) conns=$2; shift 2 ;;
        *) echo "usage: $0 [--build DIR] [--size MiB] [--conns N]" >&2; exit 2 ;;
    esac
done
brig=$build/runtime/brig
T=$(mktemp -d /tmp/brig-egress-bench.XXXXXX)
trap 'kill $srv $fast 2>/dev/null; rm -rf "$T"' EXIT
mkdir -p "$T/www" "$T/rootfs"/{bin,usr/bin,etc,proc,sys,dev,tmp}
head -c $((size << 20)) /dev/zero > "$T/www/big"
printf x > "$T/www/one"
cc -static -O2 -o "$T/rootfs/usr/bin/egress-client" "$here/../integration/egress-client.c"
printf 'root:x:0:0::/:/bin/sh\nuser:x:1000:1000::/:/bin/sh\n' > "$T/rootfs/etc/passwd"
port=$((20000 + RANDOM % 20000))
busybox httpd -f -p "127.0.0.1:$port" -h "$T/www" & srv=$!
fport=$((port + 1))
"$T/rootfs/usr/bin/egress-client" serve "$fport" & fast=$!
sleep 0.5
echo "127.0.0.1 bench.example.test" > "$T/hosts"
cat > "$T/pol.json" <<POL
{"network": {"mode": "egress", "allow": ["bench.example.test:$port", "127.0.0.1:$port", "bench.example.test:$fport", "127.0.0.1:$fport"], "maxConnections": 64},
 "workspace": null, "limits": {"memory": "512MiB"}, "timeouts": {"wall": "30m", "idle": "30m"},
 "audit": {"path": "$T/audit.jsonl"}}
POL
get="GET /big HTTP/1.0\r\nHost: bench.example.test:$port\r\n\r\n"
one="GET /one HTTP/1.0\r\nHost: bench.example.test:$port\r\n\r\n"
sb_cmd() {
    BRIG_EGRESS_HOSTS=$T/hosts "$brig" sandbox run --policy "$T/pol.json" --state-root "$T/sb" --rootfs "$T/rootfs" \
        -- "$@" 2>/dev/null
}
sb() { sb_cmd /usr/bin/egress-client "$@"; }
ms() { sed -n 's/.*ms=\([0-9]*\).*/\1/p'; }
ratio() { awk -v d="$1" -v p="$2" 'BEGIN { printf "%d%%", (p > 0 ? 100 * d / p : 0) }'; }
echo "== ${size} MiB download, egress-client (3 rounds)"
for i in 1 2 3; do
    direct=$("$T/rootfs/usr/bin/egress-client" fetch 127.0.0.1 "$port" "$get")
    proxied=$(sb fetch 127.0.0.1 3128 "CONNECT bench.example.test:$port HTTP/1.1\r\n\r\n$get")
    echo "direct: $direct  proxied: $proxied  proxied/direct throughput: $(ratio "$(ms <<< "$direct")" "$(ms <<< "$proxied")")"
done
if command -v curl >/dev/null; then
    for f in /usr/bin/curl $(ldd /usr/bin/curl | awk '/=> \//{print $3} /^\t\/lib/{print $1}'); do
        mkdir -p "$T/rootfs$(dirname "$f")"
        cp -L "$f" "$T/rootfs$f"
    done
    echo "== ${size} MiB download, curl (3 rounds; ms)"
    fmt='%{time_total}'
    for i in 1 2 3; do
        direct=$(curl -s -o /dev/null -w "$fmt" "http://127.0.0.1:$port/big" | awk '{ printf "%d", $1 * 1000 }')
        proxied=$(sb_cmd /usr/bin/curl -s -o /dev/null -p -w "$fmt" "http://bench.example.test:$port/big" |
                  awk '{ printf "%d", $1 * 1000 }')
        echo "direct: ms=$direct  proxied: ms=$proxied  proxied/direct throughput: $(ratio "$direct" "$proxied")"
    done
fi
echo "== connection set-up, $conns connections one after the other (mean per connection, µs)"
# The one-byte server answers without a fork: what is left is loopback
# TCP and, through the proxy, the proxy's work.
for srvport in "$fport" "$port"; do
    what="egress-client serve"
    [ "$srvport" = "$port" ] && what="busybox httpd (forks per connection)"
    direct=$("$T/rootfs/usr/bin/egress-client" setup 127.0.0.1 "$srvport" "$conns" "$one")
    proxied=$(sb setup 127.0.0.1 3128 "$conns" "GET http://bench.example.test:$srvport/one HTTP/1.0\r\nHost: bench.example.test:$srvport\r\n\r\n")
    literal=$(sb setup 127.0.0.1 3128 "$conns" "GET http://127.0.0.1:$srvport/one HTTP/1.0\r\nHost: 127.0.0.1:$srvport\r\n\r\n")
    connect=$(sb setup 127.0.0.1 3128 "$conns" "CONNECT bench.example.test:$srvport HTTP/1.1\r\n\r\n")
    echo "$what: direct GET $direct; through the proxy: GET by name $proxied, by address $literal, CONNECT until the proxy's 200 $connect"
done
