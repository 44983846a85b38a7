# Shared by t-egress.sh and t-egress-escape.sh (sourced after lib.sh and
# it_init): the tests' "internet" (an HTTP server on the host's loopback,
# fake names in a hosts file the proxy reads through BRIG_EGRESS_HOSTS),
# a rootfs with the static egress-client, and one sandbox run per call.
# No traffic leaves the machine: every name resolves through the file.
# shellcheck shell=bash

# eg_server WHAT PORTFILE CMD...: a server of the test's, started in the
# background (stderr in PORTFILE.err) and ended with the test (one exit
# trap for all of them); returns once it wrote its port to PORTFILE.
EG_SERVERS=
eg_server() {
    local what=$1 portfile=$2 _; shift 2
    "$@" 2>"$portfile.err" &
    EG_SERVERS="$EG_SERVERS $!"
    trap 'kill $EG_SERVERS 2>/dev/null; it_finish' EXIT
    for _ in $(seq 100); do [ -s "$portfile" ] && break; sleep 0.05; done
    [ -s "$portfile" ] || bail "the test's $what did not start: $(cat "$portfile.err")"
}

eg_setup() {
    local here; here=$(dirname "${BASH_SOURCE[0]}")
    command -v cc >/dev/null || skip_all "no C compiler (bash scripts/setup.sh installs gcc)"
    [ -x /usr/bin/python3 ] || skip_all "no /usr/bin/python3 for the test's HTTP server"
    # A small rootfs of its own (brig-mkbundle links every busybox applet:
    # seconds of forks on a loaded machine): the client, sh and wget.
    ROOTFS=$T/b/rootfs
    mkdir -p "$ROOTFS"/{bin,usr/bin,etc,proc,sys,dev,tmp,var/tmp}
    install -m 0755 /bin/busybox "$ROOTFS/bin/busybox"
    local a
    for a in sh env grep wget wc; do ln -s /bin/busybox "$ROOTFS/bin/$a"; done
    printf 'root:x:0:0::/:/bin/sh\nuser:x:1000:1000::/:/bin/sh\n' > "$ROOTFS/etc/passwd"
    printf 'root:x:0:\nuser:x:1000:\n' > "$ROOTFS/etc/group"
    cc -static -O1 -o "$ROOTFS/usr/bin/egress-client" "$here/egress-client.c" 2>"$T/cc.log" ||
        bail "cannot compile egress-client.c: $(head -c 300 "$T/cc.log")"
    SRV_LOG=$T/server.log
    : > "$SRV_LOG"
    eg_server "HTTP server" "$T/port" /usr/bin/python3 "$here/egress-server.py" "$T/port" "$SRV_LOG"
    PORT=$(cat "$T/port")
    AUDIT=$T/audit.jsonl
    export BRIG_EGRESS_HOSTS=$T/hosts
    cat > "$BRIG_EGRESS_HOSTS" <<HOSTS
127.0.0.1 api.example.test
127.0.0.1 evil.example.test
169.254.169.254 meta.example.test
10.1.2.3 lan.example.test
127.0.0.1 rebind.example.test
192.0.2.1 rebind.example.test
HOSTS
    SB_STATE=$T/sbstate
}

# eg_policy NETWORK_JSON [KEYS]: the policy file $T/pol.json (no workspace);
# KEYS: more top-level members ("limits": {...}), comma-separated.
eg_policy() {
    cat > "$T/pol.json" <<POL
{"name": "egress-test", "network": $1, "workspace": null, "audit": {"path": "$AUDIT"}${2:+, $2}}
POL
}

# eg_hold_server: a server on the host's loopback (port HPORT) that
# accepts connections, holds them and never reads, answers or closes; a
# line "accepted" in $T/hold.log for each. Ended with the test.
eg_hold_server() {
    : > "$T/hold.log"
    eg_server "holding server" "$T/hport" /usr/bin/python3 -c '
import socket, sys, os
s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen(64)
open(sys.argv[1] + ".tmp", "w").write(str(s.getsockname()[1])); os.rename(sys.argv[1] + ".tmp", sys.argv[1])
held = []
while True:
    held.append(s.accept())
    with open(sys.argv[2], "a") as log: log.write("accepted\n")' "$T/hport" "$T/hold.log"
    HPORT=$(cat "$T/hport")
}

# eg_run CMD...: one sandbox under $T/pol.json; stdout in $T/out, status in $RC.
eg_run() {
    : > "$AUDIT"
    [ -z "${EG_TIME:-}" ] || diag "$(date +%s.%N) $*"
    timeout -k 5 60 "$BRIG" sandbox run --policy "$T/pol.json" --state-root "$SB_STATE" --rootfs "$ROOTFS" \
        --env "BRIG_IT_TAG=$TAG-sb" -- "$@" > "$T/out" 2> "$T/err"
    RC=$?
}
eg_client() { eg_run /usr/bin/egress-client "$@"; }
# Through the HTTP proxy in the sandbox.
eg_get() {
    local host=${1#http://}
    eg_client send 127.0.0.1 3128 "GET $1 HTTP/1.1\r\nHost: ${2:-${host%%/*}}\r\n\r\n"
}
eg_connect() { eg_client send 127.0.0.1 3128 "CONNECT $1 HTTP/1.1\r\n\r\nGET / HTTP/1.0\r\n\r\n"; }
# The egress audit lines' fields a test compares exactly.
eg_audit() {
    jq -c 'select(.op == "egress") | {proto, name, address, port, decision, reason, bytes_out, bytes_in}' "$AUDIT"
}
eg_accepted() { wc -l < "$SRV_LOG"; }
# eg_own_pids NAME: the processes named NAME (brig-egress, brig-egress-log)
# of this test: forked from a brig whose command line names the test's
# temp dir (--policy, --state-root, -b under $T), never another test's or
# another user's on the same machine.
eg_own_pids() {
    local p
    for p in $(pgrep -x "$1"); do
        tr '\0' ' ' < "/proc/$p/cmdline" 2>/dev/null | grep -qF "$T/" && echo "$p"
    done
}
# eg_own_proxy: this test's running proxy (waits up to 10 s for it).
eg_own_proxy() {
    local p _
    for _ in $(seq 100); do
        p=$(eg_own_pids brig-egress | head -1)
        [ -n "$p" ] && { echo "$p"; return 0; }
        sleep 0.1
    done
    return 1
}
# The proxy of the last run is gone (its pid is in its audit lines), and
# no proxy or audit writer of this test runs. A proxy ends within ms of
# its container: wait up to 10 s (a loaded host) before calling it left
# behind.
eg_proxy_gone_now() {
    local pid
    for pid in $(jq -r 'select(.op == "egress") | .pid' "$AUDIT" | sort -u); do
        [ ! -e "/proc/$pid" ] || grep -q '^State:.*Z' "/proc/$pid/status" 2>/dev/null ||
            { echo "proxy $pid still runs"; return 1; }
    done
    [ -z "$(eg_own_pids brig-egress)" ] || { echo "a brig-egress of this test runs: $(eg_own_pids brig-egress)"; return 1; }
    # The proxy's audit writer (egress_auditor.c) ends with it.
    [ -z "$(eg_own_pids brig-egress-log)" ] ||
        { echo "a brig-egress-log of this test runs: $(eg_own_pids brig-egress-log)"; return 1; }
}
eg_proxy_gone() {
    local _
    for _ in $(seq 100); do eg_proxy_gone_now >/dev/null && return 0; sleep 0.1; done
    eg_proxy_gone_now
}

# eg_vhost_setup SERVER.py: the attack tests' keep-alive server answering
# two names on one port (VP; its log VLOG), the policy allowing API and
# denying EVIL, and queue REQUEST: one raw request more in the rootfs's
# /usr/bin/attacks script, each run headed by "@@@ N".
eg_vhost_setup() {
    VLOG=$T/vhost.log
    : > "$VLOG"
    eg_server "keep-alive server" "$T/vport" /usr/bin/python3 "$1" "$T/vport" "$VLOG"
    VP=$(cat "$T/vport")
    # shellcheck disable=SC2034  # the sourcing test uses EVIL
    API="api.example.test:$VP" EVIL="evil.example.test:$VP"
    eg_policy "{\"mode\": \"egress\", \"allow\": [\"$API\", \"127.0.0.1:$VP\"], \"deny\": [\"evil.example.test:*\"]}"
    ATTACKS=$ROOTFS/usr/bin/attacks
    : > "$ATTACKS"
    n=0
}
queue() {
    n=$((n + 1))
    printf 'echo "@@@ %d"; /usr/bin/egress-client send 127.0.0.1 3128 %q\n' "$n" "$1" >> "$ATTACKS"
}

# eg_hello NAME [split|padded]: a minimal TLS ClientHello whose server_name
# is NAME, as \xHH text for egress-client; split: in two records (a server
# joins them), the name in the second; padded: one record of 2^14 bytes, a
# padding extension first.
eg_hello() {
    /usr/bin/python3 - "$1" "${2:-}" <<'PY'
import struct, sys
name, how = sys.argv[1].encode(), sys.argv[2]
sni = struct.pack('>HBH', len(name) + 3, 0, len(name)) + name
ext = struct.pack('>HH', 0, len(sni)) + sni
head = b'\x03\x03' + b'\x00' * 32 + b'\x00' + b'\x00\x02\x13\x01' + b'\x01\x00'
if how == 'padded':
    pad = 16384 - 4 - len(head) - 2 - 4 - len(ext)
    ext = struct.pack('>HH', 21, pad) + b'\x00' * pad + ext
body = head + struct.pack('>H', len(ext)) + ext
hs = b'\x01' + struct.pack('>I', len(body))[1:] + body
cut = len(hs) - len(ext) + 4 if how == 'split' else len(hs)
rec = b''.join(b'\x16\x03\x01' + struct.pack('>H', len(p)) + p for p in (hs[:cut], hs[cut:]) if p)
print(''.join('\\x%02x' % c for c in rec), end='')
PY
}

# eg_tls_setup: the HTTPS "model API" (egress-tls-server.py) on the host's
# loopback as api.example.test, its certificate from a CA made now
# ($T/ca.pem), and a second CA that signed nothing it serves
# ($T/other-ca.pem). TPORT its port, TLOG its request log. Names in
# $BRIG_EGRESS_HOSTS (eg_setup): wrong.example.test is the same server
# under a name its certificate does not carry.
eg_tls_setup() {
    command -v openssl >/dev/null || skip_all "no openssl to make the test's CA (bash scripts/setup.sh installs it)"
    local here; here=$(dirname "${BASH_SOURCE[0]}")
    local ca
    for ca in ca other-ca; do
        openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 2 -subj "/CN=brig test $ca" \
            -addext basicConstraints=critical,CA:TRUE -addext keyUsage=critical,keyCertSign \
            -keyout "$T/$ca.key" -out "$T/$ca.pem" 2>>"$T/openssl.log" || bail "openssl: $(tail -3 "$T/openssl.log")"
    done
    openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -subj /CN=api.example.test \
        -keyout "$T/srv.key" -out "$T/srv.csr" 2>>"$T/openssl.log" &&
    printf 'subjectAltName=DNS:api.example.test\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n' > "$T/srv.ext" &&
    openssl x509 -req -in "$T/srv.csr" -CA "$T/ca.pem" -CAkey "$T/ca.key" -CAcreateserial -days 2 \
        -extfile "$T/srv.ext" -out "$T/srv.pem" 2>>"$T/openssl.log" || bail "openssl: $(tail -3 "$T/openssl.log")"
    TLOG=$T/tls.log
    : > "$TLOG"
    eg_server "HTTPS server" "$T/tport" /usr/bin/python3 "$here/egress-tls-server.py" "$T/tport" "$TLOG" "$T/srv.pem" "$T/srv.key"
    TPORT=$(cat "$T/tport")
    echo "127.0.0.1 wrong.example.test" >> "$BRIG_EGRESS_HOSTS"
}

# eg_cred_policy [EXTRA_NETWORK_JSON]: $T/pol.json allowing the HTTPS
# server and the plain one, with a credential x-api-key from
# env:BRIG_TEST_KEY for api.example.test:$TPORT, trusting $T/ca.pem.
eg_cred_policy() {
    eg_policy "{\"mode\": \"egress\", \"allow\": [\"api.example.test:$TPORT\", \"127.0.0.1:$TPORT\", \"api.example.test:$PORT\", \"127.0.0.1:$PORT\"],
        \"credentials\": [{\"host\": \"api.example.test\", \"port\": $TPORT, \"header\": \"x-api-key\", \"value\": \"env:BRIG_TEST_KEY\"}],
        \"tlsCA\": \"$T/ca.pem\"${1:+, $1}}"
}

# eg_sni_server_setup: for the SNI attack tests (tests/security): a
# certificate for api.example.test and evil.example.test, the OpenSSL
# server that logs each name its SNI callback sees ($SLOG) on port $SP, and
# a policy allowing only api.example.test:$SP (and 127.0.0.1:$SP).
eg_sni_server_setup() {
    command -v openssl >/dev/null || skip_all "no openssl to make the test's certificate (bash scripts/setup.sh installs it)"
    openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 2 -subj /CN=api.example.test \
        -addext subjectAltName=DNS:api.example.test,DNS:evil.example.test -keyout "$T/srv.key" -out "$T/srv.pem" \
        2>"$T/openssl.log" || bail "openssl: $(tail -3 "$T/openssl.log")"
    SLOG=$T/sni.log
    : > "$SLOG"
    eg_server "TLS server" "$T/sport" \
        /usr/bin/python3 "$(dirname "${BASH_SOURCE[0]}")/../security/egress-sni-server.py" "$T/sport" "$SLOG" \
        "$T/srv.pem" "$T/srv.key"
    SP=$(cat "$T/sport")
    eg_policy "{\"mode\": \"egress\", \"allow\": [\"api.example.test:$SP\", \"127.0.0.1:$SP\"]}"
}
