#!/usr/bin/env bash
# The host is not a destination (docs/egress.md): under a rule such as
# "*:PORT" the proxy connected to the host's own addresses, so a service
# the host runs on 0.0.0.0 answered a CONNECT to the host's interface
# address, or to a name resolving to it (audit "allow"); only fixed ranges
# were refused. Now every address the host's kernel delivers locally (its
# routing table, asked per connection) is refused unless a rule names that
# exact address and port (reason "… is host"), and so are the
# documentation ranges (192.0.2.0/24, 198.51.100.0/24, 203.0.113.0/24,
# 2001:db8::/32). The test runs in a network namespace of its own (its
# "host"): loopback, and addresses it adds to that lo; its server listens
# on 0.0.0.0 there. No real outside address is used. Attacks: a private
# address of the host by name (privateRanges) and by CIDR, loopback by
# "127.0.0.0/8:*", a documentation address by name under "*:*", and an
# address the host gains while the proxy runs (no snapshot). Use: the
# exact address and port reach the same server.
if [ "${EGRESS_HOST_NETNS:-}" != 1 ]; then
    [ "$(id -u)" = 0 ] || { echo "1..0 # SKIP needs root (a network namespace)"; exit 0; }
    command -v unshare >/dev/null && command -v ip >/dev/null ||
        { echo "1..0 # SKIP needs unshare and ip (util-linux, iproute2: bash scripts/setup.sh)"; exit 0; }
    EGRESS_HOST_NETNS=1 exec unshare --net -- "$BASH" "$0" "$@"
fi
# shellcheck source=tests/security/lib.sh
. "$(dirname "$0")/lib.sh"
it_init
ip link set lo up && ip addr add 10.77.0.1/32 dev lo && ip addr add 192.0.2.10/32 dev lo ||
    bail "cannot set up the test's network namespace"
# shellcheck source=tests/integration/egress-lib.sh
. "$(dirname "$0")/../integration/egress-lib.sh"
eg_setup
# The host's service, on every address of its namespace.
: > "$T/any.log"
eg_server "0.0.0.0 server" "$T/anyport" /usr/bin/python3 "$(dirname "$0")/../integration/egress-server.py" \
    "$T/anyport" "$T/any.log" 0.0.0.0
P=$(cat "$T/anyport")
cat >> "$BRIG_EGRESS_HOSTS" <<HOSTS
10.77.0.1 lanhost.example.test
192.0.2.10 doc.example.test
10.77.0.2 later.example.test
HOSTS
reached() { wc -l < "$T/any.log"; }
# connect_as POLICY_NETWORK TARGET: one CONNECT from a sandbox; $T/out.
connect_as() {
    eg_policy "$1"
    eg_client send 127.0.0.1 3128 "CONNECT $2 HTTP/1.1\r\n\r\nGET / HTTP/1.0\r\n\r\n"
}
refused_host() {
    local before; before=$(reached)
    connect_as "$1" "$2"
    check "$3: refused (403), reason \"$4\"" bash -c "grep -q '^HTTP/1.1 403 ' '$T/out' && grep -qF '$4' '$T/out'"
    check_eq "$3: the host's service saw nothing" "$(reached)" "$before"
    check_eq "$3: audit deny, the reason names the host" "$(eg_audit | jq -r '.decision + " " + (.reason | startswith("'"${4%%(*}"'") | tostring)')" \
        "deny true"
}

refused_host "{\"mode\": \"egress\", \"allow\": [\"*:$P\"], \"privateRanges\": true}" "lanhost.example.test:$P" \
    "a name resolving to the host's 10.77.0.1 (privateRanges, *:PORT)" \
    "10.77.0.1 is host: this machine delivers it locally (reached only when network.allow names 10.77.0.1:$P exactly)"
refused_host "{\"mode\": \"egress\", \"allow\": [\"10.0.0.0/8:$P\"]}" "10.77.0.1:$P" \
    "the host's 10.77.0.1 by a CIDR rule" "10.77.0.1 is host"
refused_host "{\"mode\": \"egress\", \"allow\": [\"127.0.0.0/8:*\"]}" "127.0.0.1:$P" \
    "the host's loopback by 127.0.0.0/8:*" "127.0.0.1 is host"
refused_host "{\"mode\": \"egress\", \"allow\": [\"*:*\"]}" "doc.example.test:$P" \
    "a name resolving to a documentation address (*:*)" \
    "192.0.2.10 is documentation (reached only when network.allow names 192.0.2.10:$P exactly)"
refused_host "{\"mode\": \"egress\", \"allow\": [\"*:*\"]}" "192.0.2.10:$P" \
    "a documentation address as a literal (*:*)" "192.0.2.10 is documentation"

# ---- an address the host gains while the proxy runs: asked, not a snapshot ----
eg_policy "{\"mode\": \"egress\", \"allow\": [\"10.0.0.0/8:$P\", \"later.example.test:$P\"], \"privateRanges\": true}"
cat > "$ROOTFS/usr/bin/later" <<SH
for i in \$(seq 200); do
    /usr/bin/egress-client send 127.0.0.1 3128 'CONNECT later.example.test:$P HTTP/1.1\r\n\r\nGET / HTTP/1.0\r\n\r\n' > /tmp/o
    grep -q '^HTTP/1.1 502 ' /tmp/o || break
    sleep 0.05
done
cat /tmp/o
SH
before=$(reached)
eg_run sh /usr/bin/later &
RUN=$!
# Once the proxy has answered a first attempt (502: no route yet).
for _ in $(seq 200); do grep -q '"decision":"error"' "$AUDIT" 2>/dev/null && break; sleep 0.05; done
ip addr add 10.77.0.2/32 dev lo
wait "$RUN"
check "an address added to the host while its proxy runs: refused once it is the host's" \
    grep -qF "10.77.0.2 is host: this machine delivers it locally" "$T/out"
check_eq "the later address: the host's service saw nothing" "$(reached)" "$before"

# ---- use: the exact address and port reach the host's service ----
before=$(reached)
connect_as "{\"mode\": \"egress\", \"allow\": [\"10.77.0.1:$P\"]}" "10.77.0.1:$P"
check "10.77.0.1:$P named exactly: the host's service answers" grep -q '^HTTP/1.0 200 OK' "$T/out"
connect_as "{\"mode\": \"egress\", \"allow\": [\"lanhost.example.test:$P\", \"10.77.0.1:$P\"]}" "lanhost.example.test:$P"
check "a name to 10.77.0.1, with 10.77.0.1:$P named exactly: answered" grep -q '^HTTP/1.0 200 OK' "$T/out"
connect_as "{\"mode\": \"egress\", \"allow\": [\"192.0.2.10:$P\"]}" "192.0.2.10:$P"
check "192.0.2.10:$P named exactly: answered" grep -q '^HTTP/1.0 200 OK' "$T/out"
check_eq "the three reached the host's service" "$(reached)" "$((before + 3))"
check "the proxy is gone after the sandbox" eg_proxy_gone
