#!/bin/bash
# Network egress by allow-list (docs/egress.md), seen from inside a sandbox
# and from the host: allowed names through the HTTP proxy (plain and
# CONNECT), SOCKS5 and a real client reading the proxy environment; denied
# names, private and metadata addresses refused with the proxy's reason;
# no route without the proxy; the connection and byte limits; exact audit
# lines; and nothing left once the sandbox ended. The attacks are in
# tests/security/t-egress-escape.sh.
. "$(dirname "$0")/lib.sh"
it_init
. "$(dirname "$0")/egress-lib.sh"
eg_setup
API="api.example.test:$PORT"

# ---- the policy is checked before anything runs ----
eg_policy '{"mode": "egress", "allow": ["api.*.test:443"]}'
"$BRIG" policy check --policy "$T/pol.json" "$T/b" > "$T/chk" 2>&1
check_eq "policy check: a bad rule is bad input (exit 2)" "$?" 2
check "policy check: the error names the rule" grep -q 'network.allow\[0\]: "api.\*.test:443": "api.\*.test": not a host name' "$T/chk"
eg_run true
check_eq "sandbox run under a bad rule: exit 125, nothing runs" "$RC" 125

eg_policy "{\"mode\": \"egress\", \"allow\": [\"$API\", \"127.0.0.1:$PORT\", \"meta.example.test:*\", \"lan.example.test:*\"],
            \"deny\": [\"evil.example.test:*\"], \"maxConnections\": 4}"

# ---- allowed ----
eg_get "http://$API/"
check_eq "plain HTTP to an allowed name: the command ran" "$RC" 0
check "plain HTTP to an allowed name: 200 and the body" bash -c "head -1 '$T/out' | grep -q '^HTTP/1.0 200 OK' && tail -1 '$T/out' | grep -qx hello"
check "plain HTTP: the server saw the URI's host" grep -q "^X-Host-Seen: $API" "$T/out"
check_eq "plain HTTP: one audit line, exact" "$(eg_audit | jq -c 'del(.bytes_out, .bytes_in)')" \
    "{\"proto\":\"http\",\"name\":\"api.example.test\",\"address\":\"127.0.0.1\",\"port\":$PORT,\"decision\":\"allow\",\"reason\":null}"
check_eq "plain HTTP: bytes_in is what the client read" "$(eg_audit | jq .bytes_in)" "$(wc -c < "$T/out")"
check "proxy gone after the sandbox" eg_proxy_gone

eg_connect "$API"
check "CONNECT to an allowed name: 200, then the server's answer" bash -c \
    "head -1 '$T/out' | grep -q '^HTTP/1.1 200 Connection established' && grep -q '^HTTP/1.0 200 OK' '$T/out'"
check_eq "CONNECT: audit line exact (18 request bytes out, the answer in)" "$(eg_audit)" \
    "{\"proto\":\"connect\",\"name\":\"api.example.test\",\"address\":\"127.0.0.1\",\"port\":$PORT,\"decision\":\"allow\",\"reason\":null,\"bytes_out\":18,\"bytes_in\":$(( $(wc -c < "$T/out") - 39 ))}"

# A tunnel still open when the sandbox ends, to a server that holds its
# connections and never closes them: the proxy ends it at once and writes
# its line (it used to wait out a drain, then exit without the line).
eg_hold_server
eg_policy "{\"mode\": \"egress\", \"allow\": [\"api.example.test:$HPORT\", \"127.0.0.1:$HPORT\"]}"
eg_run sh -c "/usr/bin/egress-client steps 127.0.0.1 3128 'CONNECT api.example.test:$HPORT HTTP/1.1\r\n\r\n' 0 'GET / HTTP/1.0\r\n\r\n' 60000 x > /tmp/o &
              while ! grep -q ' 200 ' /tmp/o; do sleep 0.05; done"
check_eq "a tunnel open at the sandbox's end (the server holds it): its audit line is written" \
    "$(eg_audit | jq -c '{proto, name, decision}')" '{"proto":"connect","name":"api.example.test","decision":"allow"}'
check "a tunnel open at the sandbox's end: the proxy is gone" eg_proxy_gone
eg_policy "{\"mode\": \"egress\", \"allow\": [\"$API\", \"127.0.0.1:$PORT\", \"meta.example.test:*\", \"lan.example.test:*\"],
            \"deny\": [\"evil.example.test:*\"], \"maxConnections\": 4}"

eg_client socks 127.0.0.1 1080 3 api.example.test "$PORT" 'GET / HTTP/1.0\r\n\r\n'
check "SOCKS5 to an allowed name: reply 0 and the answer" bash -c "head -1 '$T/out' | grep -qx 'socks-reply 0' && tail -1 '$T/out' | grep -qx hello"
check_eq "SOCKS5: audit line" "$(eg_audit | jq -c '{proto, name, decision}')" '{"proto":"socks5","name":"api.example.test","decision":"allow"}'

eg_run sh -c "env | grep -c -i '_proxy=' ; wget -q -O - http://$API/"
check_eq "a real client (busybox wget) through http_proxy: the body" "$(tail -1 "$T/out")" hello
check_eq "the sandbox has the 8 proxy variables (upper and lower case)" "$(head -1 "$T/out")" 8

# ---- refused ----
before=$(eg_accepted)
eg_get "http://evil.example.test:$PORT/"
check "denied name: 403 from the proxy" grep -q '^HTTP/1.1 403 Forbidden' "$T/out"
check "denied name: the reason names the deny rule" grep -qx 'brig egress: denied: network.deny\[0\] "evil.example.test:\*"' "$T/out"
check_eq "denied name: audit line" "$(eg_audit | jq -c '{name, decision, reason, bytes_out}')" \
    '{"name":"evil.example.test","decision":"deny","reason":"network.deny[0] \"evil.example.test:*\"","bytes_out":0}'
eg_get "http://other.example.test:$PORT/"
check "a name not listed: 403, not in network.allow" grep -qx "brig egress: denied: other.example.test:$PORT is not in network.allow" "$T/out"
eg_connect "meta.example.test:80"
check "allowed name resolving to 169.254.169.254: refused" grep -qx \
    'brig egress: denied: 169.254.169.254 is link-local (reached only when network.allow lists it as an IP or CIDR)' "$T/out"
check_eq "metadata: audit names the address" "$(eg_audit | jq -c '{name, address, decision}')" \
    '{"name":"meta.example.test","address":"169.254.169.254","decision":"deny"}'
eg_connect "lan.example.test:22"
check "allowed name resolving to 10.x: refused" grep -q 'denied: 10.1.2.3 is private' "$T/out"
check_eq "no refused destination reached the server" "$(eg_accepted)" "$before"

# ---- no way around the proxy ----
eg_client send 127.0.0.1 "$PORT" 'GET / HTTP/1.0\r\n\r\n'
check_eq "raw TCP to the server's port without the proxy: refused (the sandbox's own loopback)" "$(cat "$T/out")" "connect: ECONNREFUSED"
eg_client send 192.0.2.1 80 'x'
check_eq "raw TCP to any other address: no route" "$(cat "$T/out")" "connect: ENETUNREACH"
check_eq "neither reached the server" "$(eg_accepted)" "$before"

# ---- limits ----
eg_client hold 127.0.0.1 3128 12 "CONNECT $API HTTP/1.1\r\n\r\n"
check_eq "12 held CONNECTs under maxConnections 4: 4 established, the rest refused" \
    "$(sed 's/other=.*//' "$T/out")" "ok=4 limit=8 "
check_eq "the refusals are audited with the limit" \
    "$(jq -r 'select(.op == "egress" and .decision == "deny") | .reason' "$AUDIT" | sort | uniq -c | awk '{print $1, $2, $3, $4}')" \
    "8 network.maxConnections (4) reached"

eg_policy "{\"mode\": \"egress\", \"allow\": [\"$API\", \"127.0.0.1:$PORT\"], \"maxBytes\": \"64KiB\"}"
eg_run sh -c "/usr/bin/egress-client send 127.0.0.1 3128 'GET http://$API/big HTTP/1.0\r\nHost: $API\r\n\r\n' | wc -c; \
              /usr/bin/egress-client send 127.0.0.1 3128 'GET http://$API/ HTTP/1.0\r\nHost: $API\r\n\r\n'"
got=$(head -1 "$T/out")
check "maxBytes 64KiB: a 1 MiB download is cut (got $got bytes)" test "$got" -lt 65536 -a "$got" -gt 0
check_eq "maxBytes: both ways together are exactly the budget" "$(eg_audit | head -1 | jq '.bytes_out + .bytes_in')" 65536
check "maxBytes: the cut is audited" bash -c "eg_audit() { :; }; jq -r 'select(.op==\"egress\") | .reason' '$AUDIT' | head -1 | grep -qx 'network.maxBytes (65536 bytes) spent: connection closed'"
check "maxBytes: the next connection is refused (503, budget spent)" grep -qx 'brig egress: limit: network.maxBytes (65536 bytes) spent' "$T/out"
check "proxy gone after the sandbox" eg_proxy_gone
sb_left=$(ls -A "$SB_STATE" 2>/dev/null | grep -v '^.seccomp-cache$')
check_eq "no sandbox state left" "$sb_left" ""
check_eq "no tagged process left" "$(tagged_pids "$TAG-sb")" ""

# ---- engine-created containers: create/start/delete of a runc spec config ----
mkdir -p "$T/eb" && cp -a "$ROOTFS" "$T/eb/rootfs"
(cd "$T/eb" && runc spec) || bail "runc spec failed"
jq --arg url "GET http://$API/ HTTP/1.0\r\nHost: $API\r\n\r\n" \
    '.process.terminal = false | .process.args = ["/usr/bin/egress-client", "send", "127.0.0.1", "3128", $url]
     | .linux.cgroupsPath = "/brig-test/'"$TAG"'-eg" | .process.env += ["BRIG_IT_TAG='"$TAG"'-eg"]' \
    "$T/eb/config.json" > "$T/eb/c" && mv "$T/eb/c" "$T/eb/config.json"
eg_policy "{\"mode\": \"egress\", \"allow\": [\"$API\", \"127.0.0.1:$PORT\"]}"
"$BRIG" policy apply --policy "$T/pol.json" "$T/eb" > "$T/eb/c" && mv "$T/eb/c" "$T/eb/config.json"
: > "$AUDIT"
ID=$TAG-eg
CLEAN_IDS+=("$ID")
b --policy "$T/pol.json" create -b "$T/eb" "$ID" > "$T/eb.out" 2>&1
check_eq "create under an egress policy: exit 0" "$?" 0
proxy=$(eg_own_proxy)
check "create: a proxy outlives brig create and serves the created container" test -n "$proxy"
b --policy "$T/pol.json" start "$ID" >> "$T/eb.out" 2>&1
wait_status "$ID" stopped 2>/dev/null || sleep 1
# The proxy writes the line when the connection ends, maybe after the init.
for _ in $(seq 30); do grep -q '"op":"egress"' "$AUDIT" && break; sleep 0.1; done
check_eq "create/start: the container's request was allowed" "$(jq -c 'select(.op == "egress") | {name, decision}' "$AUDIT")" \
    '{"name":"api.example.test","decision":"allow"}'
b --policy "$T/pol.json" delete --force "$ID"
# After create the proxy's parent is the host's init (or the engine's
# subreaper), which reaps it in its own time: a zombie has nothing left.
proxy_exited() {
    local _
    for _ in $(seq 30); do
        [ ! -e "/proc/$1" ] || grep -q '^State:.*Z' "/proc/$1/status" 2>/dev/null && return 0
        sleep 0.1
    done
    return 1
}
check "delete: the proxy has exited" proxy_exited "${proxy:-0}"

# ---- brig policy selftest proves the egress boundaries from inside ----
"$BRIG" policy selftest --policy "$T/pol.json" --probe "$BRIG_PROBE" > "$T/st.out" 2>&1
check_eq "selftest under an egress policy: exit 0 (no open boundary)" "$?" 0
check_eq "selftest: the six egress boundaries are closed" "$(grep -c '^CLOSED egress\.' "$T/st.out")" 6
check "selftest: the allowed name was let through" grep -q "^CLOSED egress.allowed .*$API: 200" "$T/st.out"
check "nothing of the selftest's proxy left" eg_proxy_gone
