#!/usr/bin/env bash
# CONNECT's TLS check (egress_sni.c) judges the server name of the
# tunnel's first TLS record, and cuts a ClientHello that is not whole in
# it (a server joins the pieces, so a name in a later piece would go
# unseen). But a first record too short to hold the handshake header
# (1 to 3 bytes of it), an empty handshake record, or a record of another
# TLS type before the ClientHello (a warning alert, which Go's crypto/tls
# drops before the handshake and reads on) was judged as "no server name"
# and allowed, and everything after it relayed unjudged: OpenSSL joins the
# pieces and routes by the ClientHello's name, another virtual host than
# the CONNECT name (domain fronting). Each attack is a real OpenSSL
# ClientHello for evil.example.test, re-framed, after CONNECT (and SOCKS5)
# to api.example.test; the server is an OpenSSL one that logs the name its
# SNI callback saw. The use side: the same ClientHello for the CONNECT
# name, whole, is answered by the server.
# shellcheck source=tests/security/lib.sh
. "$(dirname "$0")/lib.sh"
it_init
# shellcheck source=tests/integration/egress-lib.sh
. "$(dirname "$0")/../integration/egress-lib.sh"
eg_setup
eg_sni_server_setup
# hello NAME HOW: OpenSSL's own ClientHello for NAME, as \xHH text, framed HOW.
hello() {
    /usr/bin/python3 - "$1" "$2" <<'PY'
import ssl, struct, sys
name, how = sys.argv[1], sys.argv[2]
ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
ctx.check_hostname, ctx.verify_mode = False, ssl.CERT_NONE
out = ssl.MemoryBIO()
tls = ctx.wrap_bio(ssl.MemoryBIO(), out, server_hostname=name)
try:
    tls.do_handshake()
except ssl.SSLWantReadError:
    pass
rec = out.read()
hs = rec[5:]
def record(kind, body): return bytes([kind]) + b'\x03\x01' + struct.pack('>H', len(body)) + body
frames = {'whole': rec,
          'one-byte': record(22, hs[:1]) + record(22, hs[1:]),      # the handshake type alone
          'three-bytes': record(22, hs[:3]) + record(22, hs[3:]),   # type and part of the length
          'empty': record(22, b'') + rec,                          # a handshake record of no bytes
          'alert': record(21, b'\x01\x5a') + rec}                  # a warning alert (user_canceled) first
print(''.join('\\x%02x' % c for c in frames[how]), end='')
PY
}
CONNECT="CONNECT api.example.test:$SP HTTP/1.1\r\n\r\n"
{
    for how in one-byte three-bytes empty alert; do
        echo "/usr/bin/egress-client send 127.0.0.1 3128 '$CONNECT$(hello evil.example.test "$how")' > /dev/null"
    done
    echo "/usr/bin/egress-client socks 127.0.0.1 1080 3 api.example.test $SP '$(hello evil.example.test one-byte)' > /dev/null"
    echo "/usr/bin/egress-client send 127.0.0.1 3128 '$CONNECT$(hello api.example.test whole)' > /dev/null"
} > "$ROOTFS/usr/bin/attacks"
eg_run sh /usr/bin/attacks
check_eq "the attacks ran (exit 0)" "$RC" 0
# The server's lines come after the sandbox's end: give them a moment.
for _ in $(seq 50); do grep -q '^sni api.example.test' "$SLOG" && break; sleep 0.1; done
check_eq "the server's SNI callback never saw evil.example.test (the CONNECT name was api.example.test)" \
    "$(grep -c '^sni evil' "$SLOG")" 0
check_eq "audit: the five re-framed ClientHellos denied, nothing sent upstream; the whole one allowed" \
    "$(jq -r 'select(.op == "egress") | "\(.proto) \(.decision) \(.bytes_out)"' "$AUDIT" | sed 's/ [1-9][0-9]*$/ N/')" \
    "$(printf 'connect deny 0\nconnect deny 0\nconnect deny 0\nconnect deny 0\nsocks5 deny 0\nconnect allow N')"
check_eq "the reasons say why: a ClientHello not whole in its first record, or a TLS record before it" \
    "$(jq -r 'select(.op == "egress" and .decision == "deny") | .reason' "$AUDIT" | LC_ALL=C sort | uniq -c | sed 's/^ *//')" \
    "$(printf '%s\n' '4 a TLS ClientHello not whole in its first record (its name is not seen)' \
        '1 a TLS alert record before the ClientHello (its name is not seen)')"
check "use: the server took the whole ClientHello for the CONNECT name (its SNI callback saw it)" \
    grep -qx 'sni api.example.test' "$SLOG"
check_eq "use: and answered it (its handshake records reached the client)" \
    "$(jq -s '[.[] | select(.op == "egress")] | last | .decision == "allow" and .bytes_in > 0' "$AUDIT")" true
check "the proxy is gone after the sandbox" eg_proxy_gone
