#!/usr/bin/env bash
# Credentials the egress proxy adds (docs/egress.md, "Credentials"): from
# inside a sandbox, an agent tries to get the key or to make it go
# elsewhere, the way it would: every process it can see (environ, cmdline,
# memory, ptrace), a request to another destination hoping the header
# comes along, CONNECT and SOCKS to the credential's host (its own TLS, no
# proxy in the way), then plain text through a CONNECT to its address,
# header smuggling (another case, '_' for '-', a space or tab before the
# colon, a folded line, a bare LF, a pipelined request, a request in a
# body, a chunked body), a Host header naming another host, the host
# echoing the request's headers, and a credential's host whose address
# speaks no TLS. The key is a unique value planted in brig's environment:
# it must not appear in anything the sandbox reads, and the server must
# never see a key but the proxy's. The same in an engine's create/start.
# The use side is tests/integration/t-egress-cred.sh.
# shellcheck source=tests/security/lib.sh
. "$(dirname "$0")/lib.sh"
it_init
# shellcheck source=tests/integration/egress-lib.sh
. "$(dirname "$0")/../integration/egress-lib.sh"
eg_setup
eg_tls_setup
MARK=sk-brig-test-
KEY="$MARK$(od -An -tx8 -N16 /dev/urandom | tr -d ' \n')"
export BRIG_TEST_KEY=$KEY
API="api.example.test:$TPORT"
echo "127.0.0.1 notls.example.test" >> "$BRIG_EGRESS_HOSTS"
build_static "$ROOTFS/usr/bin/cred-hunter" "$BRIG_SECURITY_SRC/cred-hunter.c" "-DMARK=\"$MARK\""
for a in cat tr; do ln -sf /bin/busybox "$ROOTFS/bin/$a"; done
eg_policy "{\"mode\": \"egress\", \"tlsCA\": \"$T/ca.pem\",
    \"allow\": [\"$API\", \"127.0.0.1:$TPORT\", \"api.example.test:$PORT\", \"notls.example.test:$PORT\", \"127.0.0.1:$PORT\"],
    \"credentials\": [{\"host\": \"api.example.test\", \"port\": $TPORT, \"header\": \"x-api-key\", \"value\": \"env:BRIG_TEST_KEY\"},
                      {\"host\": \"notls.example.test\", \"port\": $PORT, \"header\": \"authorization\", \"prefix\": \"Bearer \", \"value\": \"env:BRIG_TEST_KEY\"}]}"

# All attacks in one sandbox: a script of the rootfs, each answer headed
# by "@@@ N" and cut out into $T/out.N.
ATTACKS=$ROOTFS/usr/bin/attacks
: > "$ATTACKS"
Q=0
attack() { Q=$((Q + 1)); printf 'echo "@@@ %d"; %s\n' "$Q" "$1" >> "$ATTACKS"; }
proxy_send() { attack "/usr/bin/egress-client send 127.0.0.1 3128 $(printf %q "$1")"; }
get() { proxy_send "GET http://$API/echo HTTP/1.1\r\nHost: $API\r\n$1\r\n"; }
out() { cat "$T/out.$1" 2>/dev/null; }

attack 'BRIG_HUNTER_IN_SANDBOX=1 /usr/bin/cred-hunter'; HUNT=$Q
attack 'env; cat /proc/*/environ /proc/*/cmdline 2>/dev/null | tr "\0" "\n"'; ENV=$Q
proxy_send "GET http://api.example.test:$PORT/echo HTTP/1.1\r\nHost: api.example.test:$PORT\r\n\r\n"; OTHER_PORT=$Q
proxy_send "CONNECT $API HTTP/1.1\r\n\r\nGET /echo HTTP/1.1\r\nHost: $API\r\n\r\n"; CONNECT=$Q
attack "/usr/bin/egress-client socks 127.0.0.1 1080 3 api.example.test $TPORT 'GET /echo HTTP/1.1\r\n\r\n'"; SOCKS=$Q
proxy_send "CONNECT 127.0.0.1:$TPORT HTTP/1.1\r\n\r\nGET /echo HTTP/1.1\r\nHost: $API\r\n\r\n"; CONNECT_IP=$Q
get "X-API-KEY: mine-1\r\nx_Api_Key: mine-2\r\nx-api-key: mine-3\r\n"; CASES=$Q
get "x-api-key: a\r\n mine-folded\r\n"; FOLD=$Q
get "x-api-key : mine-space\r\n"; SPACE=$Q
get "x-api-key\t: mine-tab\r\n"; TAB=$Q
get "X-Other: y\nx-api-key: mine-lf\r\n"; LF=$Q
proxy_send "GET http://$API/echo HTTP/1.1\r\nHost: $API\r\n\r\nGET http://$API/echo HTTP/1.1\r\nHost: $API\r\nx-api-key: mine-pipelined\r\n\r\n"; PIPE=$Q
body="GET /echo HTTP/1.1\r\nHost: $API\r\nx-api-key: mine-body\r\n\r\n"
proxy_send "POST http://$API/echo HTTP/1.1\r\nHost: $API\r\nContent-Length: $(printf "$body" | wc -c)\r\n\r\n$body"; BODY=$Q
proxy_send "POST http://$API/echo HTTP/1.1\r\nHost: $API\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n"; CHUNKED=$Q
proxy_send "GET http://$API/echo HTTP/1.1\r\nHost: evil.example.test\r\n\r\n"; HOST=$Q
get ""; ECHO=$Q
proxy_send "GET http://notls.example.test:$PORT/echo HTTP/1.1\r\nHost: notls.example.test:$PORT\r\n\r\n"; NOTLS=$Q
LOG_AT=$(wc -l < "$TLOG")
eg_run sh /usr/bin/attacks
check_eq "the attacks ran (exit 0)" "$RC" 0
rm -f "$T"/out.[0-9]*
awk -v d="$T" '/^@@@ [0-9]+$/ { f = d "/out." $2; printf "" > f; next } f { print >> f }' "$T/out"

check "every process the sandbox sees was searched" grep -q '^hits=' "$T/out.$HUNT"
check_eq "no key in any environ, cmdline or memory the sandbox can read" "$(sed -n 's/^hits=\([0-9]*\) .*/\1/p' "$T/out.$HUNT")" 0
check "the proxy, its TLS helper, its audit writer: not even visible" bash -c "! grep -q 'brig-egress' '$T/out.$HUNT'"
check "env and /proc/*/environ: ran" grep -q '^PATH=' "$T/out.$ENV"
check "a request to the credential's host on another port: plain, answered" grep -q '^HTTP/1.0 200' "$T/out.$OTHER_PORT"
check "and no credential came along" bash -c "! grep -qi '^x-api-key\|^authorization' '$T/out.$OTHER_PORT'"
check "CONNECT to the credential's host:port: refused" grep -q '^HTTP/1.1 403 .*' "$T/out.$CONNECT"
check_eq "SOCKS5 to it: refused (reply 2)" "$(head -1 "$T/out.$SOCKS")" "socks-reply 2"
check "CONNECT to its address (allowed), then plain text: the TLS server answers it no HTTP" \
    bash -c "grep -q '^HTTP/1.1 200 Connection established' '$T/out.$CONNECT_IP' && ! grep -q '^HTTP/1.1 200 OK' '$T/out.$CONNECT_IP'"
check "x-api-key in other cases and with '_': the request went through" grep -q '^HTTP/1.1 200' "$T/out.$CASES"
for n in "$FOLD:a folded line" "$SPACE:a space before the colon" "$TAB:a tab before the colon" "$LF:a bare LF" \
         "$CHUNKED:a chunked body" "$HOST:a Host header naming another host"; do
    check "${n#*:}: refused (400)" grep -q '^HTTP/1.1 400 ' "$T/out.${n%%:*}"
done
check "a request in a body: sent as the body" grep -q '^got ' "$T/out.$BODY"
check "the host echoing the request: its echo of the key is masked" grep -qx 'x-api-key: \*\{'"${#KEY}"'\}' "$T/out.$ECHO"
check "a credential's host whose address speaks no TLS: 502, the handshake failed" \
    grep -q '^brig egress: tls: handshake: .* (notls.example.test)$' "$T/out.$NOTLS"
check "the key is in nothing the sandbox read, nor in brig's output" bash -c '! grep -qaF -- "$0" "$1" "$2"' "$KEY" "$T/out" "$T/err"
check "the key is not in the audit log" bash -c '! grep -qaF -- "$0" "$1"' "$KEY" "$AUDIT"
# What the server got: each request exactly one x-api-key, the proxy's.
reqs=$(tail -n "+$((LOG_AT + 1))" "$TLOG")
check_eq "the server got the requests the proxy sent (cases, pipelined first, body, echo)" "$(jq -r .path <<< "$reqs" | sort | uniq -c | awk '{print $1}')" 4
check_eq "every one with exactly one credential header, the key" \
    "$(jq -c '[.headers[] | select(.[0] | ascii_downcase | gsub("_"; "-") == "x-api-key") | .[1] == env.BRIG_TEST_KEY]' <<< "$reqs" | sort -u)" '[true]'
check "no forged value reached it" bash -c '! grep -q "mine-" <<< "$0"' "$(jq -c .headers <<< "$reqs")"

# ---- an engine's create/start: the detached proxy, the saved state ----
mkdir -p "$T/eb" && cp -a "$ROOTFS" "$T/eb/rootfs"
(cd "$T/eb" && runc spec) || bail "runc spec failed"
jq --arg req "GET http://$API/echo HTTP/1.1\r\nHost: $API\r\nX-Api-Key: mine-engine\r\n\r\n" \
    '.process.terminal = false | .process.args = ["sh", "-c", "/usr/bin/egress-client send 127.0.0.1 3128 \"$0\"; BRIG_HUNTER_IN_SANDBOX=1 /usr/bin/cred-hunter", $req]
     | .linux.cgroupsPath = "/brig-test/'"$TAG"'-eg" | .process.env += ["BRIG_IT_TAG='"$TAG"'-eg"]' \
    "$T/eb/config.json" > "$T/eb/c" && mv "$T/eb/c" "$T/eb/config.json"
"$BRIG" policy apply --policy "$T/pol.json" "$T/eb" > "$T/eb/c" && mv "$T/eb/c" "$T/eb/config.json"
ID=$TAG-eg
CLEAN_IDS+=("$ID")
LOG_AT=$(wc -l < "$TLOG")
b --policy "$T/pol.json" create -b "$T/eb" "$ID" > "$T/eb.out" 2>&1
check_eq "create under the credential policy: exit 0" "$?" 0
check "create: the key is not in the container's state (config.json, state.json)" bash -c '! grep -rqaF -- "$0" "$1"' "$KEY" "$STATE/$ID"
b --policy "$T/pol.json" start "$ID" >> "$T/eb.out" 2>&1
wait_status "$ID" stopped 2>/dev/null || sleep 1
check "start: the request went through" grep -q '^HTTP/1.1 200' "$T/eb.out"
check "create/start: the echo is masked, the hunter found nothing" bash -c '! grep -qaF -- "$0" "$1" && grep -q "^hits=0 " "$1"' "$KEY" "$T/eb.out"
check_eq "create/start: the server got the proxy's key, not the container's" \
    "$(tail -n "+$((LOG_AT + 1))" "$TLOG" | jq -c '[.headers[] | select(.[0] | ascii_downcase == "x-api-key") | .[1] == env.BRIG_TEST_KEY]')" '[true]'
b --policy "$T/pol.json" delete --force "$ID"
