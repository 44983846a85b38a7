#!/usr/bin/env bash
# The audit log is shared by every sandbox, and rotation keeps one older
# file: a sandbox that made 12,000 connections over maxConnections had the
# proxy write 12,000 "deny" lines in a second, and the earlier lines of
# every sandbox sharing the log were gone (erased from inside). Now each
# sandbox's refusals are rate-limited and its lines bounded to a share of
# the log (docs/egress.md), what is not written folded into counts. The
# attack: a first sandbox's line, then a flood of 4,000 connections from a
# second sandbox (audit.maxSize 64KiB: the old proxy wrote 20 times that);
# the first line must still be there, and every refusal of the flood must
# be accounted for (written, or counted in the folded line).
# shellcheck source=tests/security/lib.sh
. "$(dirname "$0")/lib.sh"
it_init
# shellcheck source=tests/integration/egress-lib.sh
. "$(dirname "$0")/../integration/egress-lib.sh"
eg_setup
eg_hold_server
NET="{\"mode\": \"egress\", \"allow\": [\"api.example.test:$PORT\", \"127.0.0.1:$PORT\", \"api.example.test:$HPORT\", \"127.0.0.1:$HPORT\"], \"maxConnections\": 1}"
cat > "$T/pol.json" <<POL
{"name": "egress-test", "network": $NET, "workspace": null, "audit": {"path": "$AUDIT", "maxSize": "64KiB"}}
POL

# ---- a first sandbox: one allowed request, its line ----
eg_get "http://api.example.test:$PORT/"
check "the first sandbox's request was answered" grep -q '^HTTP/1.0 200 OK' "$T/out"
first=$(jq -r 'select(.op == "egress" and .decision == "allow") | .id' "$AUDIT" | head -1)
check "the first sandbox's egress line is in the log" test -n "$first"

# ---- the flood, from a second sandbox (the log is not emptied) ----
N=4000
timeout -k 5 120 "$BRIG" sandbox run --policy "$T/pol.json" --state-root "$SB_STATE" --rootfs "$ROOTFS" \
    --env "BRIG_IT_TAG=$TAG-sb" -- /usr/bin/egress-client flood 127.0.0.1 3128 \
    "CONNECT api.example.test:$HPORT HTTP/1.1\r\n\r\n" "$N" > "$T/out" 2> "$T/err"
check_eq "the flood ran ($N connections)" "$(cat "$T/out")" "flood=$N"
logs() { cat "$AUDIT.1" "$AUDIT" 2>/dev/null; }
check "after the flood the first sandbox's line is still in the log" \
    bash -c "$(declare -f logs); AUDIT='$AUDIT'; logs | grep -qF '\"id\":\"$first\"'"
flood=$(logs | jq -r --arg f "$first" 'select(.op == "egress" and .id != $f) | .id' | sort -u)
check_eq "the flood is one sandbox's" "$(echo "$flood" | wc -l)" 1
one() { logs | jq -c --arg id "$flood" 'select(.op == "egress" and .id == $id)'; }
# Refused at once (deny), or, when the sandbox ended before the proxy
# accepted them, audited then (error).
written=$(one | jq -r 'select(.decision == "deny" or .decision == "error")' | jq -s length)
folded=$(one | jq -r 'select(.decision == "folded") | .deny + .error' | awk '{ s += $1 } END { print s + 0 }')
diag "the flood: $written refusals written one by one, $folded folded; $(one | wc -c) bytes of the log"
check "the flood's refusals written one by one are few ($written <= 100)" test "$written" -le 100
check_eq "every refusal is accounted for: written + folded = $N" "$((written + folded))" "$N"
check "the flood's lines are at most its share of the log (maxSize / 8) and the last folded line" \
    test "$(one | head -n -1 | wc -c)" -le 8192
check_eq "the held tunnel is accounted for too (its line, or counted as allow)" \
    "$(( $(one | jq -r 'select(.decision == "allow")' | jq -s length) + $(one | jq -r 'select(.decision == "folded") | .allow' | awk '{ s += $1 } END { print s + 0 }') ))" 1
check "the proxy is gone after the sandbox" eg_proxy_gone
