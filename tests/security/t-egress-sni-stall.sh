#!/usr/bin/env bash
# CONNECT's TLS check (egress_sni.c) reads the tunnel's first record and
# compares its server name with the CONNECT name. It waited a fixed 10 s
# for that record and then relayed whatever came as it was: a client that
# sends 3 bytes of a record (or nothing), waits past the deadline and then
# sends a ClientHello for another name reached that name's virtual host
# unjudged (audit "allow"). And while it waited for the rest of a partial
# record it polled a socket that already had bytes: a thread spinning at
# 100% CPU per stalled tunnel. The attacks, through CONNECT and SOCKS5:
# a record stalled past the deadline (another name, and even its own
# name: a record still partial at the deadline is refused), a client
# silent past the deadline then fronting. The use side: a record sent in
# two pieces within the deadline passes. The proxy's CPU time (utime +
# stime from /proc) over the stalls stays small.
# The deadline is BRIG_EGRESS_TLS_WAIT_MS for tests (docs/egress.md); an
# older brig ignores it: run with BRIG_TEST_TLS_WAIT_MS=10000 against one.
# shellcheck source=tests/security/lib.sh
. "$(dirname "$0")/lib.sh"
it_init
# shellcheck source=tests/integration/egress-lib.sh
. "$(dirname "$0")/../integration/egress-lib.sh"
eg_setup
WAIT_MS=${BRIG_TEST_TLS_WAIT_MS:-1000}
export BRIG_EGRESS_TLS_WAIT_MS=$WAIT_MS
STALL=$((WAIT_MS + 700))
eg_policy "{\"mode\": \"egress\", \"allow\": [\"api.example.test:$PORT\", \"127.0.0.1:$PORT\"]}"
EVIL=$(eg_hello evil.example.test)
OWN=$(eg_hello api.example.test)
CONNECT="CONNECT api.example.test:$PORT HTTP/1.1\r\n\r\n"
# Each attack in the background: they stall at the same time (one wait).
cat > "$ROOTFS/usr/bin/attacks" <<SH
c=/usr/bin/egress-client
s="socks 127.0.0.1 1080 3 api.example.test $PORT"
\$c steps 127.0.0.1 3128 '$CONNECT' 0 '${EVIL:0:12}' $STALL '${EVIL:12}' > /tmp/1 &
\$c steps 127.0.0.1 3128 '$CONNECT' $STALL '$EVIL' > /tmp/2 &
\$c steps 127.0.0.1 3128 '$CONNECT' 0 '${OWN:0:12}' $STALL '${OWN:12}' > /tmp/3 &
\$c \$s '${EVIL:0:12}' $STALL '${EVIL:12}' > /tmp/4 &
\$c \$s '' $STALL '$EVIL' > /tmp/5 &
\$c steps 127.0.0.1 3128 '$CONNECT' 0 '${OWN:0:12}' 200 '${OWN:12}' > /tmp/6 &
wait
for i in 1 2 3 4 5 6; do echo "@@@ \$i"; cat /tmp/\$i; done
SH
# The proxy's CPU time, sampled until it ends: the last sample is (about)
# its whole life, the stalls included.
(
    proxy=$(eg_own_proxy) || exit 0
    while t=$(awk '{print $14 + $15}' "/proc/$proxy/stat" 2>/dev/null); do
        echo "$proxy $t" > "$T/cpu"
        sleep 0.1
    done
) &
SAMPLER=$!
eg_run sh /usr/bin/attacks
wait "$SAMPLER"
read -r proxy cpu < "$T/cpu" || cpu=
check_eq "the attacks ran (exit 0)" "$RC" 0
hz=$(getconf CLK_TCK)
cpu_ms=$((${cpu:-0} * 1000 / hz))
diag "proxy CPU over its life: ${cpu_ms} ms (6 tunnels, stalls of $STALL ms)"
check "the proxy's CPU over the stalls is small (${cpu_ms} ms < 400 ms): waiting for bytes does not spin" \
    test -n "$cpu" -a "$cpu_ms" -lt 400
awk -v d="$T" '/^@@@ [0-9]+$/ { f = d "/out." $2; printf "" > f; next } f { print >> f }' "$T/out"
audit() { jq -c --arg n "$1" 'select(.op == "egress" and .proto == $n) | {decision, reason, bytes_out}' "$AUDIT" | sort; }
partial="{\"decision\":\"deny\",\"reason\":\"a TLS record still partial after $WAIT_MS ms (its name is not seen)\",\"bytes_out\":0}"
fronted='{"decision":"deny","reason":"TLS server name \"evil.example.test\" is not the CONNECT name","bytes_out":0}'
passed="{\"decision\":\"allow\",\"reason\":null,\"bytes_out\":$((${#OWN} / 4))}"
check_eq "CONNECT: a stalled record (another name, its own name) refused at the deadline, nothing sent; a silent client's late ClientHello judged; the record in two pieces passes whole" \
    "$(audit connect)" "$(printf '%s\n' "$partial" "$partial" "$fronted" "$passed" | sort)"
check_eq "SOCKS5: the same two attacks refused, nothing sent" "$(audit socks5)" "$(printf '%s\n' "$partial" "$fronted" | sort)"
check "the proxy is gone after the sandbox" eg_proxy_gone
