#!/usr/bin/env bash
# The egress audit log is one JSON object a line, read by log pipelines.
# A refused destination's name and reason carry bytes the container
# chose (an HTTP authority, a CONNECT target, a SOCKS5 domain name): the
# JSON writer escaped control bytes and quotes but passed bytes >= 0x80
# through, so a container could write lines that are not UTF-8 and that a
# strict reader (Python's json, most log shippers) rejects or drops: its
# own refusals vanish from a pipeline that alerts on them. The attacks:
# invalid UTF-8, a quote and an escape byte in each of the three. Every
# audit line must be valid UTF-8 JSON naming the decision. The use side:
# a plain denied name is logged as it is.
# shellcheck source=tests/security/lib.sh
. "$(dirname "$0")/lib.sh"
it_init
# shellcheck source=tests/integration/egress-lib.sh
. "$(dirname "$0")/../integration/egress-lib.sh"
eg_setup
eg_policy "{\"mode\": \"egress\", \"allow\": [\"api.example.test:$PORT\"], \"deny\": [\"evil.example.test:*\"]}"

cat > "$ROOTFS/usr/bin/attacks" <<'SH'
/usr/bin/egress-client send 127.0.0.1 3128 'GET http://a\xff\xc0\x22\x1bb.test/ HTTP/1.1\r\n\r\n'
/usr/bin/egress-client send 127.0.0.1 3128 'CONNECT a\xfe\xc3\x22\x1bb.test:443 HTTP/1.1\r\n\r\n'
/usr/bin/egress-client socks 127.0.0.1 1080 3 "$(printf 'a\377\300"\033b.test')" 443 x
/usr/bin/egress-client socks 127.0.0.1 1080 3 evil.example.test 443 x
SH
eg_run sh /usr/bin/attacks
check_eq "the attacks ran (exit 0)" "$RC" 0
check_eq "audit: four egress lines" "$(grep -c '"op":"egress"' "$AUDIT")" 4
check "every audit line is valid UTF-8 JSON with a decision" /usr/bin/python3 -c '
import json, sys
for raw in open(sys.argv[1], "rb"):
    line = json.loads(raw.decode("utf-8"))
    assert line["op"] != "egress" or line["decision"] in ("deny", "error"), line
' "$AUDIT"
check_eq "the hostile names are logged with their bytes replaced (cut at the quote)" \
    "$(jq -r 'select(.op == "egress") | .name' "$AUDIT" | head -3 | sort -u)" "a??"
check_eq "use: a plain denied name is logged as it is" \
    "$(jq -r 'select(.op == "egress") | .name' "$AUDIT" | tail -1)" "evil.example.test"
check "the proxy is gone after the sandbox" eg_proxy_gone
