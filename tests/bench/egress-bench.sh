#!/bin/bash
# egress-bench.sh [--build DIR] [--size MiB] [--conns N]: throughput and
# connection set-up through brig's egress proxy (docs/egress.md) against
# the same client straight to the same server on loopback. A benchmark,
# not a test (outside CI): it prints figures, docs/performance.md has them.
#   - the server: busybox httpd on 127.0.0.1, one file of SIZE MiB;
#   - direct: egress-client fetch on the host, GET over loopback;
#   - proxied: the same client in a sandbox (brig sandbox run), CONNECT
#     through the proxy then the same GET (spliced both ways);
#   - set-up: N connections one after the other until the first answer
#     byte: direct (a GET of a 1-byte file) vs CONNECT through the proxy.
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
trap 'kill $srv 2>/dev/null; rm -rf "$T"' EXIT
mkdir -p "$T/www" "$T/rootfs"/{bin,usr/bin,etc,proc,sys,dev,tmp}
head -c $((size << 20)) /dev/zero > "$T/www/big"
printf x > "$T/www/one"
cc -static -O2 -o "$T/rootfs/usr/bin/egress-client" "$here/../integration/egress-client.c"
printf 'root:x:0:0::/:/bin/sh\nuser:x:1000:1000::/:/bin/sh\n' > "$T/rootfs/etc/passwd"
port=$((20000 + RANDOM % 20000))
busybox httpd -f -p "127.0.0.1:$port" -h "$T/www" & srv=$!
sleep 0.5
echo "127.0.0.1 bench.example.test" > "$T/hosts"
cat > "$T/pol.json" <<POL
{"network": {"mode": "egress", "allow": ["bench.example.test:$port", "127.0.0.1:$port"], "maxConnections": 64},
 "workspace": null, "limits": {"memory": "512MiB"}, "timeouts": {"wall": "30m", "idle": "30m"},
 "audit": {"path": "$T/audit.jsonl"}}
POL
get="GET /big HTTP/1.0\r\nHost: bench.example.test:$port\r\n\r\n"
one="GET /one HTTP/1.0\r\nHost: bench.example.test:$port\r\n\r\n"
sb() {
    BRIG_EGRESS_HOSTS=$T/hosts "$brig" sandbox run --policy "$T/pol.json" --state-root "$T/sb" --rootfs "$T/rootfs" \
        -- /usr/bin/egress-client "$@" 2>/dev/null
}
echo "== ${size} MiB download (best of 3)"
for i in 1 2 3; do
    echo "direct:  $("$T/rootfs/usr/bin/egress-client" fetch 127.0.0.1 "$port" "$get")"
    echo "proxied: $(sb fetch 127.0.0.1 3128 "CONNECT bench.example.test:$port HTTP/1.1\r\n\r\n$get")"
done
echo "== connection set-up, $conns connections one after the other"
echo "direct GET of 1 byte:      $("$T/rootfs/usr/bin/egress-client" setup 127.0.0.1 "$port" "$conns" "$one")"
echo "CONNECT through the proxy: $(sb setup 127.0.0.1 3128 "$conns" "CONNECT bench.example.test:$port HTTP/1.1\r\n\r\n")"
