#!/usr/bin/env bash
# The proxy judges the name the client wrote, then resolves it itself
# (docs/egress.md). It resolved through the host's resolver as any
# program does, search list included: "secret-db" (or "secret-db.", an
# absolute name whose dot the proxy drops) was asked of DNS as
# "secret-db.corp.example.test", the host's search domain, and the
# connection went there. So a name the rules never saw was reached:
# under "*:PORT" with network.deny "*.corp.example.test:*", the denied
# host answered. The test runs in network and mount namespaces of its
# own: its resolv.conf (a search domain, a nameserver on 127.0.0.1) is
# bound over /etc/resolv.conf there, a DNS server of its own answers, and
# the denied host is an address it adds to that namespace's lo, allowed by
# an exact rule (the host check would refuse it otherwise; the attack is
# on the name). Attacks: CONNECT, plain HTTP and SOCKS5 to the short
# name, and CONNECT to it with a trailing dot. The use side: a full name
# that DNS knows resolves and is reached; the denied full name is refused.
if [ "${EGRESS_DNS_NS:-}" != 1 ]; then
    [ "$(id -u)" = 0 ] || { echo "1..0 # SKIP needs root (network and mount namespaces)"; exit 0; }
    command -v unshare >/dev/null && command -v ip >/dev/null ||
        { echo "1..0 # SKIP needs unshare and ip (util-linux, iproute2: bash scripts/setup.sh)"; exit 0; }
    EGRESS_DNS_NS=1 exec unshare --net --mount -- "$BASH" "$0" "$@"
fi
# shellcheck source=tests/security/lib.sh
. "$(dirname "$0")/lib.sh"
it_init
ip link set lo up && ip addr add 10.77.0.5/32 dev lo || bail "cannot set up the test's network namespace"
# shellcheck source=tests/integration/egress-lib.sh
. "$(dirname "$0")/../integration/egress-lib.sh"
eg_setup
unset BRIG_EGRESS_HOSTS      # the real resolver: resolv.conf and DNS, in this namespace
printf 'nameserver 127.0.0.1\nsearch corp.example.test\noptions timeout:1 attempts:2\n' > "$T/resolv.conf"
mount --bind "$T/resolv.conf" /etc/resolv.conf || bail "cannot bind the test's resolv.conf"
DLOG=$T/dns.log
: > "$DLOG"
/usr/bin/python3 "$(dirname "$0")/egress-dns-server.py" "$DLOG" \
    secret-db.corp.example.test=10.77.0.5 www.example.org=10.77.0.5 2>"$T/dns.err" &
EG_SERVERS="$EG_SERVERS $!"
# The denied host: the tests' HTTP server on 10.77.0.5.
: > "$T/db.log"
eg_server "HTTP server on 10.77.0.5" "$T/dbport" \
    /usr/bin/python3 "$(dirname "$0")/../integration/egress-server.py" "$T/dbport" "$T/db.log" 10.77.0.5
for _ in $(seq 100); do grep -q ready "$DLOG" && break; sleep 0.05; done
grep -q ready "$DLOG" || bail "the test's DNS server did not start: $(cat "$T/dns.err")"
P=$(cat "$T/dbport")
eg_policy "{\"mode\": \"egress\", \"allow\": [\"*:$P\", \"10.77.0.5:$P\"], \"deny\": [\"*.corp.example.test:*\"]}"
cat > "$ROOTFS/usr/bin/attacks" <<SH
c=/usr/bin/egress-client
echo "@@@ 1"; \$c send 127.0.0.1 3128 'CONNECT secret-db:$P HTTP/1.1\r\n\r\nGET / HTTP/1.0\r\n\r\n'
echo "@@@ 2"; \$c send 127.0.0.1 3128 'CONNECT secret-db.:$P HTTP/1.1\r\n\r\nGET / HTTP/1.0\r\n\r\n'
echo "@@@ 3"; \$c send 127.0.0.1 3128 'GET http://secret-db:$P/ HTTP/1.1\r\n\r\n'
echo "@@@ 4"; \$c socks 127.0.0.1 1080 3 secret-db $P 'GET / HTTP/1.0\r\n\r\n'
echo "@@@ 5"; \$c send 127.0.0.1 3128 'CONNECT secret-db.corp.example.test:$P HTTP/1.1\r\n\r\nGET / HTTP/1.0\r\n\r\n'
echo "@@@ 6"; \$c send 127.0.0.1 3128 'CONNECT www.example.org:$P HTTP/1.1\r\n\r\nGET / HTTP/1.0\r\n\r\n'
SH
eg_run sh /usr/bin/attacks
check_eq "the attacks ran (exit 0)" "$RC" 0
check_eq "the denied host answered only the use request (www.example.org, a name DNS knows)" "$(wc -l < "$T/db.log")" 1
check_eq "the proxy never asked DNS for a name the client did not write (no search domain)" \
    "$(grep -c '^secret-db\.corp\.example\.test ' "$DLOG")" 0
check_eq "audit: the short names unresolved (error), the denied full name refused, the full name allowed" \
    "$(jq -r 'select(.op == "egress") | "\(.proto) \(.name) \(.decision)"' "$AUDIT")" \
    "$(printf '%s\n' 'connect secret-db error' 'connect secret-db error' 'http secret-db error' 'socks5 secret-db error' \
        'connect secret-db.corp.example.test deny' 'connect www.example.org allow')"
check "use: the full name reached its server through DNS" bash -c "grep -q hello '$T/out'"
check "the proxy is gone after the sandbox" eg_proxy_gone
