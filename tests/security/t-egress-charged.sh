#!/usr/bin/env bash
# The egress proxy works for its sandbox: a thread per connection, the
# relay's CPU, pipes and buffers. It ran in brig's own cgroup (the host's
# root on this machine), charged to nobody: 8 stalled tunnels held the
# host at 0% idle, and a sandbox limited to a few pids had the proxy make
# as many threads as maxConnections. Now the proxy and its audit writer
# run in a child cgroup of the container's (docs/egress.md), so the
# container's cpu, memory and pids limits bound them too. The attack: a
# sandbox with pids 16 holds 48 tunnels (maxConnections 64). Seen from the
# host: the proxy and its writer are in the sandbox's cgroup, for
# `sandbox run` and for an engine's create; nothing of it is left after;
# and a delete of a created container with a tunnel still open lets the
# proxy write that tunnel's audit line before the cgroup is killed. The
# TLS helper of network.credentials likewise.
# shellcheck source=tests/security/lib.sh
. "$(dirname "$0")/lib.sh"
it_init
# shellcheck source=tests/integration/egress-lib.sh
. "$(dirname "$0")/../integration/egress-lib.sh"
eg_setup
eg_hold_server
HOLD="CONNECT api.example.test:$HPORT HTTP/1.1\r\n\r\n"
NET="{\"mode\": \"egress\", \"allow\": [\"api.example.test:$HPORT\", \"127.0.0.1:$HPORT\"], \"maxConnections\": 64}"

# cg_of PID CONTROLLER: PID's cgroup path in that controller's hierarchy
# (v1), else its v2 path.
cg_of() {
    local v1
    v1=$(awk -F: -v c="$2" '{ n = split($2, a, ","); for (i = 1; i <= n; i++) if (a[i] == c) print $3 }' "/proc/$1/cgroup")
    [ -n "$v1" ] && echo "$v1" || awk -F: '$1 == "0" { print $3 }' "/proc/$1/cgroup"
}
# cg_dir CONTROLLER PATH: where PATH is on the host's cgroup filesystem.
cg_dir() {
    if [ -d "/sys/fs/cgroup/$1" ]; then echo "/sys/fs/cgroup/$1$2"
    else echo "$(findmnt -n -t cgroup2 -o TARGET | head -1)$2"; fi
}
# check_charged WHAT INIT: the proxy and its audit writer of this test run
# in INIT's cgroup's child brig-egress, in the cpu, memory and pids
# hierarchies; CG gets INIT's pids cgroup path.
check_charged() {
    local proxy writer c
    proxy=$(eg_own_proxy)
    writer=$(eg_own_pids brig-egress-log | head -1)
    check "$1: the proxy and its audit writer run" test -n "$proxy" -a -n "$writer"
    for c in cpu memory pids; do
        check_eq "$1: the proxy is in the sandbox's $c cgroup (its child brig-egress)" \
            "$(cg_of "${proxy:-0}" $c 2>/dev/null)" "$(cg_of "$2" $c)/brig-egress"
        check_eq "$1: so is its audit writer ($c)" "$(cg_of "${writer:-0}" $c 2>/dev/null)" "$(cg_of "$2" $c)/brig-egress"
    done
    CG=$(cg_of "$2" pids)
}

# ---- the attack: more tunnels than the sandbox has pids ----
eg_policy "$NET" '"limits": {"pids": 16}'
eg_client hold 127.0.0.1 3128 48 "$HOLD"
ok=$(sed -n 's/^ok=\([0-9]*\) .*/\1/p' "$T/out")
diag "48 tunnels under pids 16: $(cat "$T/out")"
check "pids 16: the proxy holds fewer than 16 tunnels (got ${ok:-none} of 48): its threads are the sandbox's" \
    test -n "$ok" -a "${ok:-99}" -lt 16 -a "${ok:-0}" -ge 1
check "pids 16: the tunnels refused are audited with why (no thread)" \
    test "$(jq -r 'select(.op == "egress" and .decision == "error") | .reason' "$AUDIT" | grep -c '^pthread_create: ')" -gt 30
check "the proxy is gone after the sandbox" eg_proxy_gone

# ---- sandbox run: where the proxy runs, and nothing left ----
eg_policy "$NET"
"$BRIG" sandbox run --policy "$T/pol.json" --state-root "$SB_STATE" --rootfs "$ROOTFS" \
    --env "BRIG_IT_TAG=$TAG-sb" -- sh -c 'sleep 3' > "$T/out" 2> "$T/err" &
SB=$!
for _ in $(seq 100); do init=$(tagged_pids "$TAG-sb" | head -1); [ -n "$init" ] && break; sleep 0.05; done
check "sandbox run: its command runs" test -n "$init"
[ -z "$init" ] || check_charged "sandbox run" "$init"
wait "$SB"
check "sandbox run ended: no proxy, no audit writer" eg_proxy_gone
check "sandbox run ended: its cgroup is gone, the proxy's with it" test -n "${CG:-}" -a ! -e "$(cg_dir pids "${CG:-/x}")"

# ---- with network.credentials: the TLS helper that holds the keys and
# does the handshakes is the sandbox's too ----
if command -v openssl >/dev/null; then
    eg_tls_setup
    export BRIG_TEST_KEY=charged-test-key
    eg_cred_policy
    "$BRIG" sandbox run --policy "$T/pol.json" --state-root "$SB_STATE" --rootfs "$ROOTFS" \
        --env "BRIG_IT_TAG=$TAG-cr" -- sh -c 'sleep 3' > "$T/out" 2> "$T/err" &
    SB=$!
    for _ in $(seq 100); do init=$(tagged_pids "$TAG-cr" | head -1); [ -n "$init" ] && break; sleep 0.05; done
    helper=$(eg_own_pids brig-egress-tls | head -1)
    [ -n "$helper" ] || helper=$(for p in $(pgrep -x brig-egress-tls); do
        [ "$(cg_of "$p" pids)" = "$(cg_of "${init:-0}" pids 2>/dev/null)/brig-egress" ] && echo "$p"; done | head -1)
    check "credentials: the TLS helper runs" test -n "$helper" -a -n "$init"
    for c in cpu memory pids; do
        check_eq "credentials: the TLS helper is in the sandbox's $c cgroup (its child brig-egress)" \
            "$(cg_of "${helper:-0}" $c 2>/dev/null)" "$(cg_of "${init:-0}" $c 2>/dev/null)/brig-egress"
    done
    wait "$SB"
    check "credentials: nothing of the helper left" test -z "$(eg_own_pids brig-egress-tls)"
else
    skip "credentials: the TLS helper's cgroup" "no openssl to make the test's CA"
fi

# ---- create (an engine's container): the same, and delete writes the
# line of a tunnel still open before the cgroup is killed ----
eg_policy "$NET"
mkdir -p "$T/eb" && cp -a "$ROOTFS" "$T/eb/rootfs"
(cd "$T/eb" && runc spec) || bail "runc spec failed"
jq --arg hold "$HOLD" '.process.terminal = false
    | .process.args = ["/usr/bin/egress-client", "steps", "127.0.0.1", "3128", $hold, "0", "GET / HTTP/1.0\r\n\r\n", "60000", "x"]
    | .linux.cgroupsPath = "/brig-test/'"$TAG"'-eg" | .process.env += ["BRIG_IT_TAG='"$TAG"'-eg"]' \
    "$T/eb/config.json" > "$T/eb/c" && mv "$T/eb/c" "$T/eb/config.json"
"$BRIG" policy apply --policy "$T/pol.json" "$T/eb" > "$T/eb/c" && mv "$T/eb/c" "$T/eb/config.json"
ID=$TAG-eg
CLEAN_IDS+=("$ID")
: > "$AUDIT"
held=$(wc -l < "$T/hold.log")
b --policy "$T/pol.json" create -b "$T/eb" "$ID" > "$T/eb.out" 2>&1
check_eq "create under an egress policy: exit 0" "$?" 0
b --policy "$T/pol.json" start "$ID" >> "$T/eb.out" 2>&1
for _ in $(seq 100); do [ "$(wc -l < "$T/hold.log")" -gt "$held" ] && break; sleep 0.05; done
check "create: the container's tunnel reached the server" test "$(wc -l < "$T/hold.log")" -gt "$held"
init=$(state_field "$ID" pid)
[ -z "$init" ] || check_charged "create" "$init"
b --policy "$T/pol.json" delete --force "$ID" >> "$T/eb.out" 2>&1
check_eq "delete --force: exit 0" "$?" 0
check_eq "delete: the open tunnel's audit line was written first" \
    "$(eg_audit | jq -c '{proto, name, decision}')" '{"proto":"connect","name":"api.example.test","decision":"allow"}'
check "delete: no proxy, no audit writer left" eg_proxy_gone
check_eq "delete: the container's cgroup is gone, the proxy's with it" \
    "$(ls -d "$(cg_dir pids "/brig-test/$TAG-eg")" 2>/dev/null)" ""
