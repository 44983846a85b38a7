#!/usr/bin/env bash
# CONNECT's TLS check (egress_sni.c) judged the server name of the
# tunnel's first ClientHello only. TLS 1.3 lets a server answer that
# ClientHello with a HelloRetryRequest, and the client then sends a second
# ClientHello, in the clear, which the proxy relayed unjudged: OpenSSL
# takes that one's server name (its SNI callback runs again, with the new
# name) and routes by it, another virtual host than the CONNECT name
# (domain fronting). The attack, after CONNECT (and SOCKS5) to
# api.example.test: a TLS 1.3 ClientHello for api.example.test with no key
# share (a server must then ask again), then a second ClientHello for
# evil.example.test, alone and after the change_cipher_spec record TLS 1.3
# clients send there for middleboxes. The server is an OpenSSL one that
# logs each name its SNI callback sees. The use side: the same exchange
# with the CONNECT name both times goes on (the server answers the second
# ClientHello).
# shellcheck source=tests/security/lib.sh
. "$(dirname "$0")/lib.sh"
it_init
# shellcheck source=tests/integration/egress-lib.sh
. "$(dirname "$0")/../integration/egress-lib.sh"
eg_setup
eg_sni_server_setup
# hello first|NAME: a TLS 1.3 ClientHello (one random and session id for
# both) as \xHH text: "first" for api.example.test with an empty key_share
# (RFC 8446 4.2.8: the server must send a HelloRetryRequest), NAME the
# second one with an x25519 share; "ccs" the change_cipher_spec record.
hello() {
    /usr/bin/python3 - "$1" <<'PY'
import struct, sys
def ext(t, body): return struct.pack('>HH', t, len(body)) + body
def client_hello(name, share):
    n = name.encode()
    exts = ext(0, struct.pack('>HBH', len(n) + 3, 0, len(n)) + n) + ext(43, b'\x02\x03\x04') + \
        ext(10, b'\x00\x02\x00\x1d') + ext(13, b'\x00\x04\x04\x03\x08\x04')
    ks = struct.pack('>HH', 0x1d, 32) + bytes(range(9, 41)) if share else b''
    exts += ext(51, struct.pack('>H', len(ks)) + ks)
    body = b'\x03\x03' + bytes(range(32)) + b'\x20' + bytes(range(32, 64)) + b'\x00\x02\x13\x01\x01\x00' + \
        struct.pack('>H', len(exts)) + exts
    hs = b'\x01' + struct.pack('>I', len(body))[1:] + body
    return b'\x16\x03\x01' + struct.pack('>H', len(hs)) + hs
arg = sys.argv[1]
rec = b'\x14\x03\x03\x00\x01\x01' if arg == 'ccs' else \
    client_hello('api.example.test', False) if arg == 'first' else client_hello(arg, True)
print(''.join('\\x%02x' % c for c in rec), end='')
PY
}
FIRST=$(hello first) CCS=$(hello ccs) EVIL=$(hello evil.example.test) OWN=$(hello api.example.test)
CONNECT="CONNECT api.example.test:$SP HTTP/1.1\r\n\r\n"
# Each: the ClientHello, a wait for the server's HelloRetryRequest, the second.
cat > "$ROOTFS/usr/bin/attacks" <<SH
c=/usr/bin/egress-client
\$c steps 127.0.0.1 3128 '$CONNECT' 0 '$FIRST' 400 '$EVIL' > /dev/null
\$c steps 127.0.0.1 3128 '$CONNECT' 0 '$FIRST' 400 '$CCS$EVIL' > /dev/null
\$c socks 127.0.0.1 1080 3 api.example.test $SP '$FIRST' 400 '$EVIL' > /dev/null
\$c steps 127.0.0.1 3128 '$CONNECT' 0 '$FIRST' 400 '$CCS$OWN' > /dev/null
SH
eg_run sh /usr/bin/attacks
check_eq "the attacks ran (exit 0)" "$RC" 0
for _ in $(seq 50); do [ "$(grep -c '^sni api.example.test' "$SLOG")" -ge 5 ] && break; sleep 0.1; done
check_eq "the server's SNI callback never saw evil.example.test (the CONNECT name was api.example.test)" \
    "$(grep -c '^sni evil' "$SLOG")" 0
check_eq "the first ClientHellos were judged and sent (4), the use's second one too (5 in all)" \
    "$(grep -c '^sni api.example.test' "$SLOG")" 5
check_eq "audit: the three second ClientHellos for another name denied, the use allowed" \
    "$(jq -r 'select(.op == "egress") | "\(.proto) \(.decision)"' "$AUDIT")" \
    "$(printf 'connect deny\nconnect deny\nsocks5 deny\nconnect allow')"
check_eq "the reason names the second ClientHello's name" \
    "$(jq -r 'select(.op == "egress" and .decision == "deny") | .reason' "$AUDIT" | sort -u)" \
    'TLS server name "evil.example.test" is not the CONNECT name'
check "use: the server answered the second ClientHello (its ServerHello and more reached the client)" \
    bash -c "[ \"\$(jq -s '[.[] | select(.op == \"egress\")] | last | .bytes_in' '$AUDIT')\" -gt 400 ]"
check "the proxy is gone after the sandbox" eg_proxy_gone
