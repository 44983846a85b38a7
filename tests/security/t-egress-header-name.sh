#!/usr/bin/env bash
# Plain HTTP through the egress proxy: the proxy compares the Host header
# with the request URI the rules judged, refuses Transfer-Encoding and
# drops Connection. It recognised those headers only by the exact text
# "Name:", and refused a space before the colon but not a tab or another
# control byte: "Host\t: evil" was forwarded as an unknown header, and a
# server that trims the field name (as the test's virtual-host server
# does, like many simple servers) routed the request, judged for the
# allowed name, to the denied virtual host. The attacks: Host with a tab,
# a vertical tab and a form feed before the colon. And a request with no
# Host header at all (HTTP/1.0, or 1.1): the proxy sent none, so the
# server answered from its default virtual host, not the judged one; the
# proxy now sends the URI's authority as Host (RFC 9112 3.2.2). The use
# side: a header whose name uses every token character is still forwarded.
# Also refused: a NUL in the request line (the URI's host would be judged
# up to it).
# shellcheck source=tests/security/lib.sh
. "$(dirname "$0")/lib.sh"
it_init
# shellcheck source=tests/integration/egress-lib.sh
. "$(dirname "$0")/../integration/egress-lib.sh"
eg_setup
# the keep-alive server of two names, the policy, the attack queue
eg_vhost_setup "$(dirname "$0")/egress-keepalive-server.py"
for sep in '\x09' '\x0b' '\x0c'; do
    queue "GET http://$API/sep HTTP/1.1\r\nHost$sep: $EVIL\r\n\r\n"
done
queue "GET http://$API/nohost10 HTTP/1.0\r\n\r\n"
queue "GET http://$API/nohost11 HTTP/1.1\r\nAccept: */*\r\n\r\n"
queue "GET http://api.example.test\x00.$EVIL/nul HTTP/1.1\r\n\r\n"
queue "GET http://$API/use HTTP/1.1\r\nHost: $API\r\nX-Tok!#\$%&'*+-.^_\`|~09az: 1\r\n\r\n"
eg_run sh /usr/bin/attacks
check_eq "the attacks ran (exit 0)" "$RC" 0
rm -f "$T"/out.[0-9]*
awk -v d="$T" '/^@@@ [0-9]+$/ { f = d "/out." $2; printf "" > f; next } f { print >> f }' "$T/out"

check_eq "no request reached the evil virtual host" "$(grep -c "^$EVIL " "$VLOG")" 0
for i in 1 2 3; do
    check "attack $i (a control byte before the colon of Host): refused (400), reason named" bash -c \
        "grep -q '^HTTP/1.1 400 ' '$T/out.$i' && grep -qF 'a header line without \"Name:\"' '$T/out.$i'"
done
check_eq "use: a header named with every token character is forwarded, answered" \
    "$(grep -c "^vhost $API" "$T/out.7")" 1
check "a NUL in the request line: refused (400), reason named" bash -c \
    "grep -q '^HTTP/1.1 400 ' '$T/out.6' && grep -qF 'not an HTTP/1.x request line' '$T/out.6'"
for i in 4 5; do
    check_eq "attack $i (no Host header): answered by the judged virtual host" "$(grep -c "^vhost $API" "$T/out.$i")" 1
done
check_eq "the server saw only the allowed requests, each with the URI's Host" "$(cat "$VLOG")" \
    "$(printf '%s\n' "$API /nohost10 -" "$API /nohost11 -" "$API /use -")"
check_eq "audit: 3 allowed, 4 refused" \
    "$(jq -r 'select(.op == "egress") | .decision' "$AUDIT" | sort | uniq -c | awk '{$1=$1; print}')" \
    "$(printf '3 allow\n4 error')"
check "the proxy is gone after the sandbox" eg_proxy_gone
