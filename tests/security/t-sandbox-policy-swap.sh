#!/usr/bin/env bash
# A long-lived sandbox runs every exec under the policy it was created
# with: changing the policy file afterwards (rewritten in place, replaced
# by a symlink to a looser one, removed) loosens nothing. The file here is
# the test's own copy of the agent profile with a 1 s wall timeout; the
# looser one has a 1 h timeout and no secret-looking env names denied.
# Use side: an exec within the bounds runs, before and after.
# shellcheck source=tests/security/lib.sh
. "$(dirname "$0")/lib.sh"
it_init

ROOTFS=$T/rootfs
mkdir -p "$ROOTFS"/{bin,dev,proc,sys,tmp,var/tmp,workspace,etc} && cp /bin/busybox "$ROOTFS/bin/" ||
    bail "cannot make the rootfs"
for a in sh sleep true echo; do ln -s busybox "$ROOTFS/bin/$a"; done
WS=$T/ws
mkdir -p "$WS" && chown 1000:1000 "$WS"
SB_STATE=$T/sbstate
NAME=swap-$TAG
sbx() { timeout -k 5 60 "$BRIG" sandbox "$1" --state-root "$SB_STATE" "${@:2}"; }
trap 'rc=$?; sbx rm --force "$NAME" >/dev/null 2>&1; (exit $rc); it_finish' EXIT

POL=$T/policy.json
"$BRIG" policy show agent | jq --arg a "$T/audit.jsonl" '.audit.path = $a | .timeouts.wall = "1s"' > "$POL"
"$BRIG" policy show agent | jq --arg a "$T/audit-loose.jsonl" \
    '.audit.path = $a | .timeouts.wall = "1h" | .env.deny = []' > "$T/loose.json"

sbx create --policy "$POL" --rootfs "$ROOTFS" --workspace "$WS" --env "BRIG_IT_TAG=$TAG-sb" "$NAME" > "$T/create.out" 2>&1
check_eq "create under the 1 s policy: exit 0" "$?" 0 || diag "$(cat "$T/create.out")"

# exec_case DESC: a 3 s command is cut at 1 s, a secret-looking env name refused, a short command runs.
exec_case() {
    local d=$1 rc
    sbx exec --json "$NAME" -- sleep 3 > "$T/slow.json" 2> "$T/slow.err"
    rc=$?
    if [ "$rc" = 124 ] && [ "$(jq -r .timed_out "$T/slow.json" 2>/dev/null)" = true ]; then
        ok "$d: a 3 s command is killed at the 1 s wall timeout (exit 124)"
    else
        not_ok "$d: a 3 s command is killed at the 1 s wall timeout (exit 124)" "exit $rc" \
            "$(head -c 600 "$T/slow.json" "$T/slow.err" 2>/dev/null)"
    fi
    sbx exec --json --env AWS_SECRET_ACCESS_KEY=brig-swap-secret "$NAME" -- true > "$T/env.json" 2> "$T/env.err"
    rc=$?
    if [ "$rc" = 125 ] && jq -e '.ran == false and (.error | test("AWS_SECRET_ACCESS_KEY"))' "$T/env.json" >/dev/null 2>&1; then
        ok "$d: an AWS_* env name is refused (exit 125, not run)"
    else
        not_ok "$d: an AWS_* env name is refused (exit 125, not run)" "exit $rc" "$(head -c 600 "$T/env.json" "$T/env.err" 2>/dev/null)"
    fi
    sbx exec --json "$NAME" -- echo within-bounds > "$T/ok.json" 2> "$T/ok.err"
    rc=$?
    if [ "$rc" = 0 ] && [ "$(jq -r .stdout.preview_head "$T/ok.json" 2>/dev/null)" = "within-bounds" ]; then
        ok "$d: a command within the bounds runs"
    else
        not_ok "$d: a command within the bounds runs" "exit $rc" "$(head -c 600 "$T/ok.json" "$T/ok.err" 2>/dev/null)"
    fi
}
exec_case "as created"

cp "$T/loose.json" "$POL"
exec_case "the file rewritten looser"

ln -sf "$T/loose.json" "$POL.new" && mv -T "$POL.new" "$POL"
exec_case "the file swapped for a symlink to a looser one"

rm -f "$POL"
exec_case "the file removed"
check "the looser policy's audit log was never written" test ! -e "$T/audit-loose.jsonl"
check_eq "sandbox ls still names the policy it was created with" \
    "$(sbx ls --json | jq -r --arg n "$NAME" '.[] | select(.name == $n) | .policy')" "$POL"
sbx rm --force "$NAME" > /dev/null 2>&1
check_eq "rm: exit 0" "$?" 0
