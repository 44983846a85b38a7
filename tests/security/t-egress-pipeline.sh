#!/usr/bin/env bash
# Plain HTTP through the egress proxy (docs/egress.md): the rules judge a
# request's URI, so a second request on the same client connection must
# not ride on the first one's verdict. The target is one server behind
# two names (virtual hosts, as on a shared front end or CDN) that answers
# every request of a connection, pipelined or not, whatever "Connection:
# close" says: api.example.test is allowed, evil.example.test denied.
# The attacks: a pipelined second request naming evil (absolute URI, then
# origin form), one hidden after a Content-Length body, one behind a
# chunked body (framing the proxy would have to parse), one as the body
# of a GET, OPTIONS, DELETE, TRACE or HEAD (methods whose content has no
# defined meaning, RFC 9110 9.3: a server that reads no body there takes
# it for a request). None may reach
# the evil virtual host. The use side: two requests one after the other
# (curl reusing its proxy connection) are both answered.
# shellcheck source=tests/security/lib.sh
. "$(dirname "$0")/lib.sh"
it_init
# shellcheck source=tests/integration/egress-lib.sh
. "$(dirname "$0")/../integration/egress-lib.sh"
eg_setup
# the keep-alive server of two names, the policy, the attack queue
eg_vhost_setup "$(dirname "$0")/egress-keepalive-server.py"
get_api="GET http://$API/first HTTP/1.1\r\nHost: $API\r\n\r\n"
queue "${get_api}GET http://$EVIL/pipelined HTTP/1.1\r\nHost: $EVIL\r\n\r\n"
queue "${get_api}GET /origin-form HTTP/1.1\r\nHost: $EVIL\r\n\r\n"
queue "POST http://$API/body HTTP/1.1\r\nHost: $API\r\nContent-Length: 5\r\n\r\nhelloGET /after-body HTTP/1.1\r\nHost: $EVIL\r\n\r\n"
queue "POST http://$API/chunked HTTP/1.1\r\nHost: $API\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\nGET /after-chunked HTTP/1.1\r\nHost: $EVIL\r\n\r\n"
inner="GET /in-body HTTP/1.1\r\nHost: $EVIL\r\n\r\n"
len=$(printf '%b' "$inner" | wc -c)
for m in GET OPTIONS DELETE TRACE HEAD; do
    queue "$m http://$API/$m-body HTTP/1.1\r\nHost: $API\r\nContent-Length: $len\r\n\r\n$inner"
done
start=$(date +%s.%N)
eg_run sh /usr/bin/attacks
check_eq "the attacks ran (exit 0)" "$RC" 0
diag "attacks took $(echo "$(date +%s.%N) - $start" | bc) s"
rm -f "$T"/out.[0-9]*
awk -v d="$T" '/^@@@ [0-9]+$/ { f = d "/out." $2; printf "" > f; next } f { print >> f }' "$T/out"

check_eq "no request reached the evil virtual host" "$(grep -c "^$EVIL " "$VLOG")" 0
check_eq "the server saw exactly the judged requests, the body exactly" "$(sort "$VLOG")" \
    "$(printf '%s\n' "$API /first -" "$API /first -" "$API /body hello" | sort)"
for i in 1 2 3; do
    check_eq "attack $i: the allowed request is answered, once" "$(grep -c "^vhost $API" "$T/out.$i")" 1
done
check "a chunked request body: refused (400), reason named" bash -c \
    "grep -q '^HTTP/1.1 400 ' '$T/out.4' && grep -qF 'a request body with Transfer-Encoding (send Content-Length, or use CONNECT)' '$T/out.4'"
i=5
for m in GET OPTIONS DELETE TRACE HEAD; do
    check "a body on $m (no defined meaning, RFC 9110 9.3): refused (400), reason named" bash -c \
        "grep -q '^HTTP/1.1 400 ' '$T/out.$i' && grep -qF 'a request body on $m (RFC 9110 9.3' '$T/out.$i'"
    i=$((i + 1))
done
check_eq "audit: 3 allowed, the chunked one and the 5 with a body refused" \
    "$(jq -r 'select(.op == "egress") | .decision' "$AUDIT" | sort | uniq -c | awk '{$1=$1; print}')" \
    "$(printf '3 allow\n6 error')"
check_eq "audit: both pipelined attacks sent only the first request's bytes" \
    "$(jq -r 'select(.op == "egress" and .decision == "allow") | .bytes_out' "$AUDIT" | sort | uniq -c | awk '$1 >= 2 {print $1}')" 2

# ---- use: two requests one after the other on one client connection ----
if command -v curl >/dev/null; then
    # curl and its libraries in the rootfs (dynamic): it reads http_proxy.
    for f in /usr/bin/curl $(ldd /usr/bin/curl | awk '/=> \//{print $3} /^\t\/lib/{print $1}'); do
        mkdir -p "$ROOTFS$(dirname "$f")"
        cp -L "$f" "$ROOTFS$f"
    done
    : > "$VLOG"
    eg_run curl -sS -v "http://$API/one" "http://$API/two"
    check_eq "curl: both requests answered" "$(cat "$T/out")" "$(printf 'vhost %s\nvhost %s' "$API" "$API")"
    check_eq "the server saw both" "$(cut -d' ' -f1,2 "$VLOG")" "$(printf '%s /one\n%s /two' "$API" "$API")"
    check_eq "audit: two allowed connections" "$(jq -r 'select(.op == "egress") | .decision' "$AUDIT" | sort | uniq -c | awk '{$1=$1; print}')" "2 allow"
else
    skip "curl reusing its proxy connection" "no curl on the host"
fi
check "the proxy is gone after the sandbox" eg_proxy_gone
