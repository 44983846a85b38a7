#!/usr/bin/env bash
# Cloud metadata services the egress rules did not know: AWS's IMDS over
# IPv6 (fd00:ec2::254, a ULA address), GCP's over IPv6 (fd20:ce::254),
# Alibaba Cloud's (100.100.100.200, in the CGNAT range) and Azure's
# WireServer (168.63.129.16, a public address). The first three are in
# ranges "privateRanges": true lets an allowed name reach, the last in
# none, so "*:PORT" reached it by name or literal: an instance's
# credentials, behind a rule meant for the LAN or for public hosts
# (docs/egress.md promises the metadata service refused unless listed
# literally). Now each is reached only by a rule naming that exact
# address and port, as the documentation ranges. The test runs in a
# network namespace of its own joined by a veth pair to a second one
# (the "cloud"), which holds the four addresses on its lo and a server on
# every one of them: the addresses are routed, not the host's own (which
# the host check would refuse anyway). The use side: exact rules reach
# the same server.
if [ "${EGRESS_META_NETNS:-}" != 1 ]; then
    [ "$(id -u)" = 0 ] || { echo "1..0 # SKIP needs root (network namespaces)"; exit 0; }
    command -v unshare >/dev/null && command -v nsenter >/dev/null && command -v ip >/dev/null ||
        { echo "1..0 # SKIP needs unshare, nsenter and ip (util-linux, iproute2: bash scripts/setup.sh)"; exit 0; }
    EGRESS_META_NETNS=1 exec unshare --net -- "$BASH" "$0" "$@"
fi
# shellcheck source=tests/security/lib.sh
. "$(dirname "$0")/lib.sh"
it_init
# The cloud: a network namespace held by a process of this test.
unshare --net sleep 3600 &
CLOUD=$!
trap 'kill $CLOUD 2>/dev/null; it_finish' EXIT
for _ in $(seq 100); do [ "$(readlink /proc/$CLOUD/ns/net)" != "$(readlink /proc/self/ns/net)" ] && break; sleep 0.02; done
in_cloud() { nsenter --net=/proc/$CLOUD/ns/net -- "$@"; }
META4="100.100.100.200 168.63.129.16" META6="fd00:ec2::254 fd20:ce::254"
{
    ip link set lo up && ip link add v0 type veth peer name v1 && ip link set v1 netns "$CLOUD" &&
    ip addr add 10.99.0.1/30 dev v0 && ip -6 addr add fd99::1/64 dev v0 nodad && ip link set v0 up &&
    in_cloud ip link set lo up && in_cloud ip addr add 10.99.0.2/30 dev v1 &&
    in_cloud ip -6 addr add fd99::2/64 dev v1 nodad && in_cloud ip link set v1 up &&
    for a in $META4; do ip route add "$a/32" via 10.99.0.2 && in_cloud ip addr add "$a/32" dev lo || exit 1; done &&
    for a in $META6; do ip -6 route add "$a/128" via fd99::2 && in_cloud ip -6 addr add "$a/128" dev lo nodad || exit 1; done
} || bail "cannot set up the test's two network namespaces"
# shellcheck source=tests/integration/egress-lib.sh
. "$(dirname "$0")/../integration/egress-lib.sh"
EG_SERVERS=$CLOUD    # ended with the test servers
eg_setup
# The metadata server: every address of the cloud, one line per connection.
MLOG=$T/meta.log
: > "$MLOG"
eg_server "metadata server" "$T/mport" nsenter --net=/proc/$CLOUD/ns/net -- /usr/bin/python3 -c '
import os, socket, sys
s = socket.socket(socket.AF_INET6)
s.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 0)
s.bind(("::", 0)); s.listen(16)
open(sys.argv[1] + ".tmp", "w").write(str(s.getsockname()[1])); os.rename(sys.argv[1] + ".tmp", sys.argv[1])
while True:
    c, peer = s.accept()
    with open(sys.argv[2], "a") as log: log.write("%s\n" % c.getsockname()[0].replace("::ffff:", ""))
    c.sendall(b"HTTP/1.0 200 OK\r\n\r\ncredentials\n"); c.close()' "$T/mport" "$MLOG"
P=$(cat "$T/mport")
cat >> "$BRIG_EGRESS_HOSTS" <<HOSTS
100.100.100.200 ali.example.test
168.63.129.16 azure.example.test
fd00:ec2::254 aws6.example.test
fd20:ce::254 gcp6.example.test
HOSTS
reached() { wc -l < "$MLOG"; }
script() {
    local t
    : > "$ROOTFS/usr/bin/attacks"
    for t in "$@"; do
        echo "/usr/bin/egress-client send 127.0.0.1 3128 'CONNECT $t HTTP/1.1\r\n\r\nGET / HTTP/1.0\r\n\r\n'" >> "$ROOTFS/usr/bin/attacks"
    done
}

# ---- by name under privateRanges, and as literals under "*" ----
eg_policy "{\"mode\": \"egress\", \"allow\": [\"*:$P\"], \"privateRanges\": true}"
script "ali.example.test:$P" "azure.example.test:$P" "aws6.example.test:$P" "gcp6.example.test:$P" \
    "100.100.100.200:$P" "168.63.129.16:$P"
eg_run sh /usr/bin/attacks
check_eq "the attacks ran (exit 0)" "$RC" 0
check_eq "the metadata server saw no connection" "$(reached)" 0
check_eq "audit: all six refused, each named cloud metadata" \
    "$(eg_audit | jq -r '.decision + " " + (.reason // "" | test("^[0-9a-f.:]+ is cloud metadata \\(reached only when network.allow names .* exactly\\)$") | tostring)' | sort | uniq -c | sed 's/^ *//')" \
    "6 deny true"
eg_policy "{\"mode\": \"egress\", \"allow\": [\"100.64.0.0/10:$P\", \"[fd00::/8]:$P\", \"0.0.0.0/0:$P\"]}"
script "100.100.100.200:$P" "[fd00:ec2::254]:$P" "168.63.129.16:$P"
eg_run sh /usr/bin/attacks
check_eq "networks that hold them (CGNAT, ULA, 0.0.0.0/0): refused, nothing reached" \
    "$(eg_audit | jq -r .decision | sort | uniq -c | sed 's/^ *//') $(reached)" "3 deny 0"

# ---- use: a rule naming the exact address and port ----
: > "$MLOG"
eg_policy "{\"mode\": \"egress\", \"allow\": [\"100.100.100.200:$P\", \"[fd00:ec2::254]:$P\", \"168.63.129.16:$P\", \"[fd20:ce::254]:$P\"]}"
script "100.100.100.200:$P" "[fd00:ec2::254]:$P" "168.63.129.16:$P" "[fd20:ce::254]:$P"
eg_run sh /usr/bin/attacks
check_eq "use: the exact rules reach the four addresses (the test's network works)" \
    "$(sort "$MLOG" | tr '\n' ' ')" "100.100.100.200 168.63.129.16 fd00:ec2::254 fd20:ce::254 "
check "the proxy is gone after the sandbox" eg_proxy_gone
