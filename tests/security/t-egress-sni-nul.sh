#!/usr/bin/env bash
# CONNECT's TLS check (egress_sni.c) compares the ClientHello's server
# name with the CONNECT name. It copied the name into a C string and
# compared with strcmp, so "api.example.test\0.evil.example.test" was
# judged as "api.example.test": the tunnel was allowed with a name that a
# server which does not stop at the NUL routes to another virtual host
# (domain fronting). The attack: CONNECT to the allowed name, then that
# ClientHello. And a server_name list whose first entry is not of type
# host_name: the check skipped the whole extension (no name: allowed),
# a server that skips unknown entries (Go's crypto/tls) takes the
# host_name "evil.example.test" after it; and a list of two host names,
# the allowed one first. The use side: the same ClientHello with the exact name.
# shellcheck source=tests/security/lib.sh
. "$(dirname "$0")/lib.sh"
it_init
# shellcheck source=tests/integration/egress-lib.sh
. "$(dirname "$0")/../integration/egress-lib.sh"
eg_setup
eg_policy "{\"mode\": \"egress\", \"allow\": [\"api.example.test:$PORT\", \"127.0.0.1:$PORT\"]}"
SKIP_HELLO='\x16\x03\x01\x00\x4f\x01\x00\x00\x4b\x03\x03\x00\x01\x02\x03\x04\x05\x06\x07\x08\x09\x0a\x0b\x0c\x0d\x0e\x0f\x10\x11\x12\x13\x14\x15\x16\x17\x18\x19\x1a\x1b\x1c\x1d\x1e\x1f\x00\x00\x02\x13\x01\x01\x00\x00\x20\x00\x00\x00\x1c\x00\x1a\x01\x00\x03\x78\x79\x7a\x00\x00\x11\x65\x76\x69\x6c\x2e\x65\x78\x61\x6d\x70\x6c\x65\x2e\x74\x65\x73\x74'
TWO_HELLO='\x16\x03\x01\x00\x5c\x01\x00\x00\x58\x03\x03\x00\x01\x02\x03\x04\x05\x06\x07\x08\x09\x0a\x0b\x0c\x0d\x0e\x0f\x10\x11\x12\x13\x14\x15\x16\x17\x18\x19\x1a\x1b\x1c\x1d\x1e\x1f\x00\x00\x02\x13\x01\x01\x00\x00\x2d\x00\x00\x00\x29\x00\x27\x00\x00\x10\x61\x70\x69\x2e\x65\x78\x61\x6d\x70\x6c\x65\x2e\x74\x65\x73\x74\x00\x00\x11\x65\x76\x69\x6c\x2e\x65\x78\x61\x6d\x70\x6c\x65\x2e\x74\x65\x73\x74'
NUL_HELLO='\x16\x03\x01\x00\x5b\x01\x00\x00\x57\x03\x03\x00\x01\x02\x03\x04\x05\x06\x07\x08\x09\x0a\x0b\x0c\x0d\x0e\x0f\x10\x11\x12\x13\x14\x15\x16\x17\x18\x19\x1a\x1b\x1c\x1d\x1e\x1f\x00\x00\x02\x13\x01\x01\x00\x00\x2c\x00\x00\x00\x28\x00\x26\x00\x00\x23\x61\x70\x69\x2e\x65\x78\x61\x6d\x70\x6c\x65\x2e\x74\x65\x73\x74\x00\x2e\x65\x76\x69\x6c\x2e\x65\x78\x61\x6d\x70\x6c\x65\x2e\x74\x65\x73\x74'
HELLO='\x16\x03\x01\x00\x48\x01\x00\x00\x44\x03\x03\x00\x01\x02\x03\x04\x05\x06\x07\x08\x09\x0a\x0b\x0c\x0d\x0e\x0f\x10\x11\x12\x13\x14\x15\x16\x17\x18\x19\x1a\x1b\x1c\x1d\x1e\x1f\x00\x00\x02\x13\x01\x01\x00\x00\x19\x00\x00\x00\x15\x00\x13\x00\x00\x10\x61\x70\x69\x2e\x65\x78\x61\x6d\x70\x6c\x65\x2e\x74\x65\x73\x74'
cat > "$ROOTFS/usr/bin/attacks" <<SH
/usr/bin/egress-client send 127.0.0.1 3128 'CONNECT api.example.test:$PORT HTTP/1.1\r\n\r\n$NUL_HELLO'
/usr/bin/egress-client send 127.0.0.1 3128 'CONNECT api.example.test:$PORT HTTP/1.1\r\n\r\n$SKIP_HELLO'
/usr/bin/egress-client send 127.0.0.1 3128 'CONNECT api.example.test:$PORT HTTP/1.1\r\n\r\n$TWO_HELLO'
/usr/bin/egress-client send 127.0.0.1 3128 'CONNECT api.example.test:$PORT HTTP/1.1\r\n\r\n$HELLO'
SH
eg_run sh /usr/bin/attacks
check_eq "the attacks ran (exit 0)" "$RC" 0
check_eq "audit: the three tricks denied, nothing sent upstream; the exact name allowed" \
    "$(jq -r 'select(.op == "egress") | "\(.decision) \(.bytes_out)"' "$AUDIT")" "$(printf 'deny 0\ndeny 0\ndeny 0\nallow 77')"
check "the reason names the server name, its NUL shown as ?" \
    grep -qF 'TLS server name \"api.example.test?.evil.example.test\" is not the CONNECT name' "$AUDIT"
check_eq "a server_name list that is not one host name: refused, reason named" \
    "$(grep -cF 'a TLS server_name extension that is not one host name' "$AUDIT")" 2
check "the proxy is gone after the sandbox" eg_proxy_gone
