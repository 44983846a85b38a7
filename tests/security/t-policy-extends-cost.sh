#!/usr/bin/env bash
# A policy that costs brig more than its size: "extends" merges each file
# of the chain onto its base (RFC 7386), and the merge looked every key of
# the file up in its base's object one by one, and again to set it: two
# files of 70,000 keys in one object (840 KB each, under the 1 MiB a
# policy file may have) kept `brig policy show` busy for 43 s of CPU, and
# a chain of 4 for minutes, before the unknown key was refused. Any
# command that reads a policy (`sandbox run --policy`, `policy check`,
# `create` under one) pays it. Now the merge is O(n log n) per file: each
# chain must be refused (exit 2, the unknown key named) and the command
# must finish (the timeout only guards against a hang; the time is never
# judged here). Use side: a merge of the same shape whose keys all exist
# (limits, nulls removing keys) gives what RFC 7386 says.
# shellcheck source=tests/security/lib.sh
. "$(dirname "$0")/lib.sh"
it_init
command -v python3 >/dev/null || skip_all "python3 is not installed"
P=$T/pol
mkdir -p "$P"
# chain N SAME: N files, each extending the next, the last "agent"; each
# with one object "x" of ~90,000 keys (the same keys in every file when
# SAME is 1: merged into existing keys; else distinct: appended)
chain() {
    python3 - "$P/$1" "$2" "$3" <<'PY'
import os, sys
d, n, same = sys.argv[1], int(sys.argv[2]), sys.argv[3] == "1"
os.makedirs(d, exist_ok=True)
for i in range(n):
    base = '"./%d.json"' % (i + 1) if i + 1 < n else '"agent"'
    pre = "k" if same else "k%d_" % i
    keys = ",".join('"%s%05d":1' % (pre, j) for j in range(85000 if same else 80000))
    text = '{"extends":%s,"x":{%s}}' % (base, keys)
    assert len(text) < 1 << 20
    open(os.path.join(d, "%d.json" % i), "w").write(text)
PY
}
refused() {
    local out rc
    out=$(timeout -k 5 60 "$BRIG" policy show "$P/$1/0.json" 2>&1)
    rc=$?
    if [ $rc = 2 ] && grep -qF "x: unknown key" <<<"$out"; then
        ok "$1: $(du -sh "$P/$1" | cut -f1) in a chain of $2: refused, policy show finished (exit 2)"
    else
        not_ok "$1: refused, policy show finished" "$(rc_reason $rc) (exit $rc)" "$(head -c 400 <<<"$out")"
    fi
}
chain same 4 1
refused same 4
chain distinct 4 0
refused distinct 4

# ---- use: the merge is RFC 7386's ----
cat > "$P/base.json" <<'JSON'
{"extends": "agent", "name": "b", "limits": {"memory": "512MiB", "pids": 100}, "init": "/sbin/x",
 "timeouts": {"wall": "5m"}}
JSON
cat > "$P/top.json" <<'JSON'
{"extends": "./base.json", "name": "t", "limits": {"pids": 50, "cpus": null}, "init": null,
 "timeouts": {"idle": "1m"}}
JSON
out=$("$BRIG" policy show "$P/top.json" 2>&1)
check_eq "merge: objects key by key (agent's swap kept), null removes cpus and init, name not inherited" \
    "$(jq -c '[.limits, .timeouts, .name, .init]' <<<"$out" 2>&1)" \
    '[{"memory":"512MiB","swap":"0","pids":50},{"wall":"5m","idle":"1m"},"t",null]'
