#!/usr/bin/env bash
# A compose file that costs the checker more than its size: libyaml's
# scanner looks at every open flow level for each token, so nesting made
# the work quadratic (a 520 KB file of `[` took minutes in `policy check
# --compose`). brig bounds the nesting (64 levels) and the number of nodes
# (200,000) from libyaml's event stream before a document is built, and
# refuses past them with exit 2, the line, and no content. Each file here
# must be refused and the check must finish (the timeout only guards
# against a hang: the time itself is measured by
# tests/bench/compose-nesting-bench.sh, never judged here). Use side: a
# file nested 60 deep is judged as usual.
# shellcheck source=tests/security/lib.sh
. "$(dirname "$0")/lib.sh"
it_init

D=$T/proj
mkdir -p "$D"
# gen NAME KIND N: a service whose one value is nested N deep.
gen() {
    python3 - "$D/$1.yaml" "$2" "$3" <<'PY'
import sys
path, kind, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
head = "services:\n  a:\n    image: busybox@sha256:" + "0" * 64 + "\n"
if kind == "seq":
    body = "    x: " + "[" * n + "]" * n + "\n"
elif kind == "map":
    body = "    x: " + "{a: " * n + "1" + "}" * n + "\n"
elif kind == "block":
    body = "".join("  " * (i + 2) + "x:\n" for i in range(n)) + "  " * (n + 2) + "y: 1\n"
elif kind == "blockseq":
    body = "    x:\n" + "".join("  " * (i + 3) + "-\n" for i in range(n))
elif kind == "wide":
    body = "    x: [" + ",".join("a" for _ in range(n)) + "]\n"
elif kind == "unclosed":
    body = "    x: " + "[" * n + "\n"
open(path, "w").write(head + body)
PY
}
# refused NAME WHAT: policy check --compose refuses the file with exit 2,
# a message naming WHAT, and none of the file's content.
refused() {
    local out rc
    out=$(timeout -k 5 600 "$BRIG" policy check --policy agent --compose "$D/$1.yaml" 2>&1)
    rc=$?
    if [ $rc = 2 ] && grep -qF -- "$2" <<<"$out" && ! grep -qF '[[[' <<<"$out"; then
        ok "$1 ($(stat -c %s "$D/$1.yaml") bytes): refused, the check finished (exit 2, \"$2\")"
    else
        not_ok "$1: refused, the check finished" "$(rc_reason $rc) (exit $rc)" "$(head -c 600 <<<"$out")"
    fi
}

gen seq-520k seq 260000
refused seq-520k "nested deeper than 64 levels"
gen map-deep map 100000
refused map-deep "nested deeper than 64 levels"
gen seq-65 seq 65
refused seq-65 "line 4: mappings and sequences nested deeper than 64 levels"
gen block-deep block 200
refused block-deep "nested deeper than 64 levels"
gen blockseq-deep blockseq 300
refused blockseq-deep "nested deeper than 64 levels"
gen unclosed unclosed 260000
refused unclosed "nested deeper than 64 levels"
gen wide wide 300000
refused wide "more than 200000 nodes"

# Use side: 60 levels (with the service's own 3) is judged: the rules run
# and name the unknown key, not the nesting.
gen seq-60 seq 60
out=$(timeout -k 5 120 "$BRIG" policy check --policy agent --compose "$D/seq-60.yaml" 2>&1)
rc=$?
if [ $rc = 1 ] && grep -q '^FAIL compose.keys x' <<<"$out"; then
    ok "a value nested 60 deep is judged by the rules (exit 1, compose.keys names x)"
else
    not_ok "a value nested 60 deep is judged by the rules" "exit $rc" "$(head -c 600 <<<"$out")"
fi
