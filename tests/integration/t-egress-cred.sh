#!/bin/bash
# Credentials added by the egress proxy (docs/egress.md, "Credentials"),
# end to end and on this machine only: an HTTPS "model API" with a
# certificate from a CA made now, reached from a sandbox by plain HTTP
# through the proxy, which sends the request on over TLS with the key.
# The server gets the key (and no header the sandbox forged); a streamed
# response arrives in pieces; bodies, redirects and the Host header are
# what the server and the client should see; a server the CA did not
# sign, or one with another name, gets nothing; the key, a unique value
# planted in brig's environment, is nowhere the sandbox, the state, the
# audit log or brig's output shows, nor in the proxy's own /proc. The
# attacks from inside are tests/security/t-egress-cred-escape.sh.
. "$(dirname "$0")/lib.sh"
it_init
. "$(dirname "$0")/egress-lib.sh"
eg_setup
eg_tls_setup
KEY="sk-brig-test-$(od -An -tx8 -N16 /dev/urandom | tr -d ' \n')"
export BRIG_TEST_KEY=$KEY
API="api.example.test:$TPORT"
# grep_key WHAT FILE...: the key is absent from them (a match would be the leak).
no_key() { local d=$1; shift; check "the key is not in $d" bash -c '! grep -rqaF -- "$0" "$@"' "$KEY" "$@"; }
# The lines the server logged since mark_log, and their x-api-key values.
mark_log() { LOG_AT=$(wc -l < "$TLOG"); }
new_log() { tail -n "+$((LOG_AT + 1))" "$TLOG"; }
# said TEXT: brig's output (the result on stdout, the summary on stderr) has it.
said() { cat "$T/out" "$T/err" | grep -qF -- "$1"; }
keys_seen() { new_log | jq -r '.headers[] | select(.[0] | ascii_downcase | gsub("_"; "-") == "x-api-key") | .[1]'; }

# ---- the policy is checked before anything runs ----
eg_policy "{\"mode\": \"egress\", \"allow\": [\"127.0.0.1:$TPORT\"],
    \"credentials\": [{\"host\": \"api.example.test\", \"port\": $TPORT, \"header\": \"x-api-key\", \"value\": \"env:BRIG_TEST_KEY\"}]}"
"$BRIG" policy check --policy "$T/pol.json" "$T/b" > "$T/chk" 2>&1
check_eq "a credential for a host the rules refuse: bad input (exit 2)" "$?" 2
check "the error names the credential and the rule to add" grep -qF \
    "network.credentials[0].host: $API is refused by the rules ($API is not in network.allow): a credential's destination must be allowed too (network.allow \"$API\")" "$T/chk"
eg_policy "{\"mode\": \"egress\", \"allow\": [\"$API\"], \"credentials\": [{\"host\": \"api.example.test\", \"port\": $TPORT, \"header\": \"x-api-key\", \"value\": \"$KEY\"}]}"
eg_run sh -c :
check_eq "a secret written where its handle belongs: refused, nothing runs (exit 125)" "$RC" 125
check "the error says what a value is" said 'network.credentials[0].value: expected "env:NAME" or "file:/path"'
no_key "the error (stdout and stderr)" "$T/out" "$T/err"

# ---- one sandbox, one request per line of a script (a sandbox each would be slow) ----
# Its own credential for wrong.example.test (the same server, a name its
# certificate does not carry), and the searches of the environment.
eg_cred_policy
jq ".network.allow += [\"wrong.example.test:$TPORT\"] | .network.credentials += [{\"host\": \"wrong.example.test\",
    \"port\": $TPORT, \"header\": \"authorization\", \"prefix\": \"Bearer \", \"value\": \"env:BRIG_TEST_KEY\"}]" \
    "$T/pol.json" > "$T/pol2.json" && mv "$T/pol2.json" "$T/pol.json"
SCRIPT=$ROOTFS/usr/bin/uses
: > "$SCRIPT"
Q=0
use() { Q=$((Q + 1)); printf 'echo "@@@ %d"; %s\n' "$Q" "$1" >> "$SCRIPT"; }
send() { use "/usr/bin/egress-client send 127.0.0.1 3128 $(printf %q "$1")"; }
send "GET http://$API/echo-forged HTTP/1.1\r\nHost: $API\r\nX-Api-Key: forged-1\r\nx_api_key: forged-2\r\nx-api-key: forged-3\r\nAccept-Encoding: gzip\r\n\r\n"; FORGED=$Q
send "GET http://api.example.test/echo-80 HTTP/1.1\r\nHost: api.example.test\r\n\r\n"; PORT80=$Q
send "POST http://$API/upload HTTP/1.1\r\nHost: $API\r\nContent-Length: 11\r\n\r\nhello world"; POST=$Q
send "GET http://$API/redirect HTTP/1.1\r\nHost: $API\r\n\r\n"; REDIRECT=$Q
use "/usr/bin/egress-client stream 127.0.0.1 3128 $(printf %q "GET http://$API/stream HTTP/1.1\r\nHost: $API\r\n\r\n") piece-1 \\
    $(printf %q "GET http://$API/release HTTP/1.1\r\nHost: $API\r\n\r\n")"; STREAM=$Q
send "CONNECT $API HTTP/1.1\r\n\r\n"; CONNECT=$Q
send "GET http://wrong.example.test:$TPORT/echo-wrong HTTP/1.1\r\nHost: wrong.example.test:$TPORT\r\n\r\n"; WRONG=$Q
use 'env; cat /proc/*/environ /proc/*/cmdline 2>/dev/null | tr "\0" "\n"; echo sandbox-done'; ENV=$Q
mark_log
eg_run sh /usr/bin/uses
check_eq "the uses ran (exit 0)" "$RC" 0
rm -f "$T"/out.[0-9]*
awk -v d="$T" '/^@@@ [0-9]+$/ { f = d "/out." $2; printf "" > f; next } f { print >> f }' "$T/out"
# got PATH: the x-api-key values the server got on requests for PATH.
got() { new_log | jq -r --arg p "$1" 'select(.path == $p) | .headers[] | select(.[0] | ascii_downcase | gsub("_"; "-") == "x-api-key") | .[1]'; }

check "plain HTTP to the credential's host: 200 from the server" grep -q '^HTTP/1.1 200 OK' "$T/out.$FORGED"
check_eq "the server got one x-api-key, the planted key (the three forged ones dropped)" "$(got /echo-forged)" "$KEY"
check_eq "the server saw the TLS destination as Host, identity encoding" \
    "$(new_log | jq -c 'select(.path == "/echo-forged") | [.headers[] | select(.[0] == "Host" or .[0] == "Accept-Encoding") | .[1]]')" \
    "[\"$API\",\"identity\"]"
check "the response's echo of the key is masked" grep -qx 'x-api-key: \*\{'"${#KEY}"'\}' "$T/out.$FORGED"
check "http://host/ (port 80) goes to the credential's TLS port" grep -q '^HTTP/1.1 200 OK' "$T/out.$PORT80"
check_eq "port 80 form: the server got the key" "$(got /echo-80)" "$KEY"
check "a request body goes through (Content-Length)" grep -qx 'got 11 bytes: hello world' "$T/out.$POST"
check "a redirect is passed on to the client" bash -c "grep -q '^HTTP/1.1 302 ' '$T/out.$REDIRECT' && grep -q '^Location: https://api.example.test/echo' '$T/out.$REDIRECT'"
check_eq "and not followed by the proxy" "$(new_log | jq -r .path | grep -c echo$)" 0
# The client sent /release only after it read piece-1: piece-2 came after.
check "SSE: piece-1 reached the client while the server waited (it then sent piece-2)" \
    bash -c "grep -q 'data: piece-1' '$T/out.$STREAM' && grep -q 'data: piece-2' '$T/out.$STREAM' && ! grep -q TIMEOUT '$T/out.$STREAM'"
check "CONNECT to the credential's host:port: 403 (one way there, the proxy's)" \
    grep -qF "brig egress: denied: $API has a credential (network.credentials): send plain HTTP to http://api.example.test/ through the proxy" "$T/out.$CONNECT"
check "a certificate for another name: 502, hostname mismatch" \
    grep -qx 'brig egress: tls: certificate verify failed: hostname mismatch (wrong.example.test)' "$T/out.$WRONG"
check_eq "that server got no request" "$(new_log | jq -r .path | grep -c wrong)" 0
check "the sandbox ran its search of env and /proc" grep -q sandbox-done "$T/out.$ENV"
no_key "the sandbox's environment and /proc (one-shot run), nor brig's output" "$T/out" "$T/err"
check_eq "audit: each request's line names the credential by its header" \
    "$(jq -c 'select(.op == "egress" and .proto == "http") | {name, port, credential, decision}' "$AUDIT" | sort | uniq -c | sed 's/^ *//')" \
    "$(printf '%s\n' "6 {\"name\":\"api.example.test\",\"port\":$TPORT,\"credential\":\"x-api-key\",\"decision\":\"allow\"}" \
        "1 {\"name\":\"wrong.example.test\",\"port\":$TPORT,\"credential\":\"authorization\",\"decision\":\"error\"}")"
no_key "the audit log" "$AUDIT"

# ---- a real client, started by the Python client's run() ----
ln -sf /bin/busybox "$ROOTFS/bin/wget"
mark_log
BRIG=$BRIG /usr/bin/python3 "$(dirname "$0")/egress-cred-client.py" "$(dirname "$0")/../../contrib/python" "$T/pol.json" \
    "$ROOTFS" "$SB_STATE" "http://$API/echo" > "$T/py.out" 2>&1
[ "$(grep -c '^ok ' "$T/py.out")" = 3 ] || diag "$(cat "$T/py.out")"
check_eq "contrib/python run(): busybox wget through http_proxy, a credential added" "$(grep -c '^ok ' "$T/py.out")" 3
check_eq "run(): the server got the key" "$(keys_seen)" "$KEY"

# ---- refused ----
mark_log
eg_cred_policy
sed -i "s|$T/ca.pem|$T/other-ca.pem|" "$T/pol.json"
eg_client send 127.0.0.1 3128 "GET http://$API/echo HTTP/1.1\r\nHost: $API\r\n\r\n"
check "a server another CA signed: 502" grep -q '^HTTP/1.1 502 Bad Gateway' "$T/out"
check "the client is told why" grep -qx 'brig egress: tls: certificate verify failed: unable to get local issuer certificate (api.example.test)' "$T/out"
check_eq "audit: error, the reason" "$(jq -c 'select(.op == "egress") | {credential, decision, reason}' "$AUDIT")" \
    '{"credential":"x-api-key","decision":"error","reason":"certificate verify failed: unable to get local issuer certificate (api.example.test)"}'
check_eq "the server got no request" "$(new_log)" ""

eg_cred_policy
BRIG_TEST_KEY='' eg_run sh -c :
check_eq "the key's variable unset: refused, nothing runs (exit 125)" "$RC" 125
check "the error names the handle" said 'network.credentials[0].value: env:BRIG_TEST_KEY is not set in brig'"'"'s environment'

# ---- the pi-egress profile: the key for the proxy, never for the sandbox ----
mkdir -p "$ROOTFS/run/pi-session" "$ROOTFS/workspace"
pi_run() { "$BRIG" sandbox run --policy pi-egress --state-root "$SB_STATE" --rootfs "$ROOTFS" "$@" > "$T/out" 2> "$T/err"; }
env -u ANTHROPIC_API_KEY "$BRIG" sandbox run --policy pi-egress --state-root "$SB_STATE" --rootfs "$ROOTFS" -- env \
    > "$T/out" 2> "$T/err"
check_eq "pi-egress without ANTHROPIC_API_KEY in brig's environment: refused (exit 125)" "$?" 125
check "the error names the handle" said 'network.credentials[0].value: env:ANTHROPIC_API_KEY is not set'
ANTHROPIC_API_KEY=$KEY pi_run --env "ANTHROPIC_API_KEY=$KEY" -- env
check "pi-egress: --env ANTHROPIC_API_KEY is still refused (env.deny)" said "--env ANTHROPIC_API_KEY: refused by the policy pi-egress"
ANTHROPIC_API_KEY=$KEY pi_run -- env
check "pi-egress: the client is pointed at http://api.anthropic.com through the proxy" \
    bash -c "grep -qx 'ANTHROPIC_BASE_URL=http://api.anthropic.com' '$T/out' && grep -qx 'HTTP_PROXY=http://127.0.0.1:3128' '$T/out'"
no_key "pi-egress: the sandbox's environment or brig's output" "$T/out" "$T/err"

# ---- file: a key only root reads ----
printf '%s\n' "$KEY" > "$T/keyfile"
chmod 0644 "$T/keyfile"
eg_cred_policy
sed -i "s|env:BRIG_TEST_KEY|file:$T/keyfile|" "$T/pol.json"
env -u BRIG_TEST_KEY "$BRIG" sandbox run --policy "$T/pol.json" --state-root "$SB_STATE" --rootfs "$ROOTFS" -- sh -c : > "$T/out" 2> "$T/err"
check_eq "a key file others can read: refused (exit 125)" "$?" 125
check "the error names the file and the fix" said "file:$T/keyfile: expected a file owned by root that only root reads (chown root; chmod 0600): it is uid 0, mode 0644"
no_key "the refusal" "$T/out" "$T/err"
mkfifo "$T/keyfifo"
sed -i "s|file:$T/keyfile|file:$T/keyfifo|" "$T/pol.json"
env -u BRIG_TEST_KEY timeout 20 "$BRIG" sandbox run --policy "$T/pol.json" --state-root "$SB_STATE" --rootfs "$ROOTFS" -- sh -c : > "$T/out" 2> "$T/err"
check_eq "a fifo for a key file: refused at once (exit 125, not a wait)" "$?" 125
check "the error names it" said "network.credentials[0].value: $T/keyfifo"
sed -i "s|file:$T/keyfifo|file:$T/keyfile|" "$T/pol.json"
chmod 0600 "$T/keyfile"
mark_log
env -u BRIG_TEST_KEY "$BRIG" sandbox run --policy "$T/pol.json" --state-root "$SB_STATE" --rootfs "$ROOTFS" -- \
    /usr/bin/egress-client send 127.0.0.1 3128 "GET http://$API/echo HTTP/1.1\r\nHost: $API\r\n\r\n" > "$T/out" 2> "$T/err"
check_eq "file:/path, mode 0600 (its trailing newline dropped): the server got the key" "$(keys_seen)" "$KEY"

# ---- the key is nowhere the sandbox or brig's output shows ----
eg_cred_policy
# A long-lived sandbox: the key read at create, the state kept.
NAME="cred-$TAG"
"$BRIG" sandbox create --policy "$T/pol.json" --state-root "$SB_STATE" --rootfs "$ROOTFS" "$NAME" > "$T/create.out" 2>&1
check_eq "sandbox create under the credential policy" "$?" 0
mark_log
env -u BRIG_TEST_KEY "$BRIG" sandbox exec --state-root "$SB_STATE" "$NAME" -- sh -c \
    "/usr/bin/egress-client send 127.0.0.1 3128 'GET http://$API/echo HTTP/1.1\r\nHost: $API\r\n\r\n'; env; cat /proc/*/environ 2>/dev/null | tr '\0' '\n'" \
    > "$T/exec.out" 2>&1
check_eq "sandbox exec (the key unset by now): the server got the key read at create" "$(keys_seen)" "$KEY"
no_key "the session's output" "$T/create.out" "$T/exec.out"
no_key "the session's state directory (config.json, state.json)" "$SB_STATE"
check "its saved policy keeps the handle" grep -rqF 'env:BRIG_TEST_KEY' "$SB_STATE/$NAME"
proxy=$(jq -r 'select(.op == "egress") | .pid' "$AUDIT" | tail -1)
helper=$(pgrep -P "$proxy" -x brig-egress-tls)
auditor=$(pgrep -P "$proxy" -x brig-egress-log)
check "the proxy (pid $proxy) has a TLS helper ($helper) and an audit writer ($auditor)" test -n "$helper" -a -n "$auditor"
no_key "the proxy's, its helper's or its audit writer's environ and cmdline (read as root)" \
    /proc/"$proxy"/environ /proc/"$proxy"/cmdline /proc/"$helper"/environ /proc/"$helper"/cmdline /proc/"$auditor"/environ
check_eq "the helper runs as a uid of its own (not root, not the proxy's)" \
    "$(awk '/^Uid:/ { print ($2 != 0 && $2 != u) }' u="$(awk '/^Uid:/ { print $2 }' /proc/"$proxy"/status)" /proc/"$helper"/status)" 1
check_eq "the helper: no_new_privs, seccomp, not dumpable (its /proc files are root's)" \
    "$(grep -E '^(Seccomp|NoNewPrivs):' /proc/"$helper"/status | awk '{print $2}' | tr '\n' ' ')$(stat -c %u /proc/"$helper"/environ)" "1 2 0"
"$BRIG" sandbox rm --state-root "$SB_STATE" "$NAME" > /dev/null 2>&1
check "sandbox rm: the proxy is gone" eg_proxy_gone
helper_gone() { local _; for _ in $(seq 50); do [ ! -e "/proc/$helper" ] && return 0; sleep 0.1; done; return 1; }
check "and its TLS helper" helper_gone
no_key "the audit log, at the end" "$AUDIT"
