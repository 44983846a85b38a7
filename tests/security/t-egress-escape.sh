#!/usr/bin/env bash
# Network egress (docs/egress.md): a command in a sandbox under an egress
# policy tries to reach what the allow-list does not name, the way an
# attacker would: a name that resolves (rebinds) to loopback, IPv4-mapped
# IPv6 literals, decimal/octal/hex IPv4 forms the C library accepts,
# CONNECT to loopback and to the proxy's own port, SOCKS5 with private and
# metadata literals, and an absolute URI whose Host header names another
# host (request smuggling past the rules). Each is refused by the proxy
# with its reason, and the "internal" server on the host's loopback (the
# target) never sees a connection. The use side is
# tests/integration/t-egress.sh.
# shellcheck source=tests/security/lib.sh
. "$(dirname "$0")/lib.sh"
it_init
# shellcheck source=tests/integration/egress-lib.sh
. "$(dirname "$0")/../integration/egress-lib.sh"
eg_setup
echo "127.0.0.1 localhost" >> "$BRIG_EGRESS_HOSTS"

# "outbound anywhere public", plus one name: nothing names loopback.
eg_policy '{"mode": "egress", "allow": ["*:*", "rebind.example.test:*"]}'
before=$(eg_accepted)

# The attacks of one policy run in one sandbox (a sandbox per attack
# would make the test slow): queued as egress-client lines of a script
# in the rootfs, each answer cut out into $T/out.N, then judged.
ATTACKS=$ROOTFS/usr/bin/attacks
queue() {
    Q=$((Q + 1))
    printf 'echo "@@@ %d"; /usr/bin/egress-client' "$Q" >> "$ATTACKS"
    printf " '%s'" "$@" >> "$ATTACKS"
    echo >> "$ATTACKS"
}
batch_begin() { Q=0; EXPECT=(); : > "$ATTACKS"; }
batch_run() {
    eg_run sh /usr/bin/attacks
    check_eq "the attacks ran (exit 0)" "$RC" 0
    rm -f "$T"/out.[0-9]*
    awk -v d="$T" '/^@@@ [0-9]+$/ { f = d "/out." $2; printf "" > f; next } f { print >> f }' "$T/out"
    local e n desc kind want
    for e in "${EXPECT[@]}"; do
        IFS='|' read -r n kind desc want <<< "$e"
        if [ "$kind" = socks ]; then
            check_eq "$desc: reply 2 (not allowed by the rules)" "$(head -1 "$T/out.$n" 2>/dev/null)" "socks-reply 2"
        else
            check "$desc: refused by the proxy (40x)" grep -q '^HTTP/1.1 40[03] ' "$T/out.$n"
            check "$desc: reason \"$want\"" grep -qF "$want" "$T/out.$n"
        fi
    done
}
# refused_connect TARGET REASON
refused_connect() {
    queue send 127.0.0.1 3128 "CONNECT $1 HTTP/1.1\r\n\r\nGET / HTTP/1.0\r\n\r\n"
    EXPECT+=("$Q|http|CONNECT $1|$2")
}
# refused_get URL REASON [HOST]
refused_get() {
    local host=${1#*://}
    queue send 127.0.0.1 3128 "GET $1 HTTP/1.1\r\nHost: ${3:-${host%%/*}}\r\n\r\n"
    EXPECT+=("$Q|http|GET $1 (Host ${3:-${host%%/*}})|$2")
}
# refused_socks ATYP DEST: SOCKS5 reply 2
refused_socks() {
    queue socks 127.0.0.1 1080 "$1" "$2" "$PORT" 'GET / HTTP/1.0\r\n\r\n'
    EXPECT+=("$Q|socks|SOCKS5 atyp $1 $2|")
}

# ---- DNS rebinding: an allowed name whose addresses include loopback ----
batch_begin
refused_connect "rebind.example.test:$PORT" "127.0.0.1 is loopback"
batch_run
check_eq "rebinding: audit names the refused address" \
    "$(eg_audit | jq -c 'select(.name == "rebind.example.test") | {name, address, decision}')" \
    '{"name":"rebind.example.test","address":"127.0.0.1","decision":"deny"}'

echo "127.0.0.1 rebind2.example.test" >> "$BRIG_EGRESS_HOSTS"
eg_policy '{"mode": "egress", "allow": ["*:*"]}'
batch_begin
refused_connect "rebind2.example.test:$PORT" "127.0.0.1 is loopback"
refused_get "http://localhost:$PORT/" "127.0.0.1 is loopback"
# ---- address forms ----
refused_connect "[::ffff:127.0.0.1]:$PORT" "127.0.0.1 is loopback"
refused_get "http://[::ffff:7f00:1]:$PORT/" "127.0.0.1 is loopback"
refused_connect "[::1]:$PORT" "::1 is loopback"
refused_connect "[64:ff9b::7f00:1]:$PORT" "is nat64"
for form in 2130706433 0177.0.0.1 0x7f000001 0x7f.0.0.1 127.1 017700000001; do
    refused_get "http://$form:$PORT/" "not a host name or a plain IP address"
done
refused_connect "2130706433:$PORT" "not a host name or a plain IP address"
# ---- loopback, the proxy's own ports, metadata ----
refused_connect "127.0.0.1:$PORT" "127.0.0.1 is loopback"
refused_connect "127.0.0.1:3128" "127.0.0.1 is loopback"
refused_connect "127.0.0.1:1080" "127.0.0.1 is loopback"
refused_connect "169.254.169.254:80" "169.254.169.254 is link-local"
refused_connect "0.0.0.0:$PORT" "0.0.0.0 is unspecified"
# ---- SOCKS5 literals ----
refused_socks 1 127.0.0.1
refused_socks 1 10.0.0.1
refused_socks 1 169.254.169.254
refused_socks 1 100.64.0.1
refused_socks 4 ::ffff:127.0.0.1
refused_socks 4 fd00::1
refused_socks 3 2130706433
refused_socks 3 127.0.0.1
refused_socks 3 "$(printf 'a%.0s' $(seq 255))"
refused_connect "$(printf 'a%.0s' $(seq 300)).example.test:443" "host too long"
batch_run
check_eq "none of the above reached the host's loopback server" "$(eg_accepted)" "$before"

# ---- the allow rules themselves, through the real proxy: "0.0.0.0/0:*"
# names no special range (loopback stays refused for it, and for the
# host check behind it: the reason is the range's), "*.example.test"
# matches names below example.test, not evilexample.test ----
echo "127.0.0.1 evilexample.test" >> "$BRIG_EGRESS_HOSTS"
eg_policy "{\"mode\": \"egress\", \"allow\": [\"0.0.0.0/0:*\", \"*.example.test:$PORT\", \"127.0.0.1:$PORT\"]}"
batch_begin
refused_connect "127.0.0.2:$PORT" "127.0.0.2 is loopback (reached only when network.allow lists it as an IP or CIDR)"
refused_connect "evilexample.test:$PORT" "evilexample.test:$PORT is not in network.allow"
refused_connect "example.test:$PORT" "example.test:$PORT is not in network.allow"
queue send 127.0.0.1 3128 "CONNECT api.example.test:$PORT HTTP/1.1\r\n\r\nGET / HTTP/1.0\r\n\r\n"
control=$Q
batch_run
check "control: *.example.test lets api.example.test through" grep -qx hello "$T/out.$control"
check_eq "only the control reached the server" "$(eg_accepted)" "$((before + 1))"
before=$(eg_accepted)

# ---- request smuggling in plain HTTP: the rules judged the URI ----
API="api.example.test:$PORT"
eg_policy "{\"mode\": \"egress\", \"allow\": [\"$API\", \"127.0.0.1:$PORT\"], \"deny\": [\"evil.example.test:*\"]}"
batch_begin
refused_get "http://$API/" "the Host header names another host than the request URI" "evil.example.test:$PORT"
refused_get "http://$API/" "two Host headers" "$API\r\nHost: evil.example.test"
refused_get "http://$API/" "a header line with a bare CR, LF or NUL" "$API\nX: y"
refused_get "http://$API/" "a folded header line" "$API\r\n evil.example.test"
refused_get "http://$API@evil.example.test/" "userinfo"
refused_get "http://evil.example.test:$PORT#@$API/" "network.deny[0]" "evil.example.test:$PORT"
refused_get "https://$API/" "https:// goes through CONNECT"
queue send 127.0.0.1 3128 "GET http://$API/ HTTP/1.1\r\nHost: $API\r\n\r\n"
control=$Q
batch_run
check_eq "no smuggled request reached the server" "$(eg_accepted)" "$((before + 1))"

# ---- domain fronting: CONNECT an allowed name, then TLS asks for another ----
batch_begin
queue send 127.0.0.1 3128 "CONNECT $API HTTP/1.1\r\n\r\n$(eg_hello evil.example.test)"
queue socks 127.0.0.1 1080 3 api.example.test "$PORT" "$(eg_hello evil.example.test)"
queue send 127.0.0.1 3128 "CONNECT $API HTTP/1.1\r\n\r\n$(eg_hello api.example.test)"
queue send 127.0.0.1 3128 "CONNECT $API HTTP/1.1\r\n\r\n$(eg_hello evil.example.test split)"
queue socks 127.0.0.1 1080 3 api.example.test "$PORT" "$(eg_hello evil.example.test split)"
queue socks 127.0.0.1 1080 3 api.example.test "$PORT" "$(eg_hello evil.example.test padded)"
eg_run sh /usr/bin/attacks
check_eq "SNI: the fronted tunnels are cut, bytes never reach the server; the matching one passes" \
    "$(jq -c 'select(.op == "egress") | {proto, decision, reason, sent: (.bytes_out > 0)}' "$AUDIT" | sort)" \
    "$(printf '%s\n' '{"proto":"connect","decision":"allow","reason":null,"sent":true}' \
        '{"proto":"connect","decision":"deny","reason":"TLS server name \"evil.example.test\" is not the CONNECT name","sent":false}' \
        '{"proto":"socks5","decision":"deny","reason":"TLS server name \"evil.example.test\" is not the CONNECT name","sent":false}' \
        '{"proto":"connect","decision":"deny","reason":"a TLS ClientHello not whole in its first record (its name is not seen)","sent":false}' \
        '{"proto":"socks5","decision":"deny","reason":"a TLS ClientHello not whole in its first record (its name is not seen)","sent":false}' \
        '{"proto":"socks5","decision":"deny","reason":"TLS server name \"evil.example.test\" is not the CONNECT name","sent":false}' | sort)"
check "control: the same request with its own Host header is served" grep -qx hello "$T/out.$control"
check "the proxy is gone after the sandbox" eg_proxy_gone
