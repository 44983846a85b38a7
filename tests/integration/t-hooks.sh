#!/usr/bin/env bash
# Hooks: prestart, createRuntime, poststart and poststop get the container
# state on stdin, run at the right moment, with their args and env; a
# failing or hanging hook fails create (or run) and leaves nothing behind.
# shellcheck disable=SC2016  # jq filters are single-quoted on purpose
. "$(dirname "$0")/lib.sh"
it_init

# hook KIND: a host shell hook that saves stdin, argv and env to $T/hook-KIND.*
hook() {
    jq -n --arg k "$1" --arg t "$T" '{path: "/bin/sh",
        args: ["sh", "-c", "cat > \($t)/hook-\($k).json; echo \"$0 $1\" > \($t)/hook-\($k).args; env > \($t)/hook-\($k).env", "hook-argv0", "arg-\($k)"],
        env: ["HOOK_KIND=\($k)", "PATH=/usr/sbin:/usr/bin:/sbin:/bin"]}'
}

mkb hk -- /usr/bin/brig-probe sleep 60 || bail "cannot build a bundle"
cfg hk '.hooks = {prestart: [$pr], createRuntime: [$cr], poststart: [$ps], poststop: [$pst]}' \
    --argjson pr "$(hook prestart)" --argjson cr "$(hook createRuntime)" --argjson ps "$(hook poststart)" \
    --argjson pst "$(hook poststop)"
ID=$(cid hk)

create_ct hk
check_eq "create with hooks succeeds" "$RC" 0
[ "$RC" = 0 ] || diag "$(cat "$T/hk.err")"
PID=$(state_field "$ID" pid)
H=$T/hook-createRuntime
check "createRuntime ran during create and got a JSON state on stdin" jq -e . "$H.json"
check "... with id, bundle and the init pid" jq -e --arg id "$ID" --arg b "$T/hk" --argjson pid "${PID:-0}" \
    '.id == $id and .bundle == $b and .pid == $pid and .pid > 0' "$H.json"
# runtime.md "State": created is "after step 2 in the lifecycle" (the
# environment made); prestart and createRuntime are steps 3 and 4. crun says
# created; runc 1.1.5 says creating (below).
check "... status created" jq -e '.status == "created"' "$H.json"
check "prestart got the same state: status created, the init pid" jq -e --argjson pid "${PID:-0}" \
    '.status == "created" and .pid == $pid' "$T/hook-prestart.json"
check "... and ociVersion" jq -e '.ociVersion | type == "string"' "$H.json"
check_eq "createRuntime got its args" "$(cat "$H.args" 2>/dev/null)" "hook-argv0 arg-createRuntime"
check "createRuntime got its env" grep -qx HOOK_KIND=createRuntime "$H.env"
check "poststart has not run before start" test ! -e "$T/hook-poststart.json"

check "start succeeds" b start "$ID"
# poststart runs after the process started; the start command waits for it.
check "poststart ran with the state" jq -e --arg id "$ID" --argjson pid "${PID:-0}" \
    '.id == $id and .pid == $pid' "$T/hook-poststart.json"
check "poststart saw the container running (or created, as it had just started)" \
    jq -e '.status == "running" or .status == "created"' "$T/hook-poststart.json"
check "poststop has not run before delete" test ! -e "$T/hook-poststop.json"

b kill "$ID" KILL >/dev/null 2>&1
wait_status "$ID" stopped 10
check "delete succeeds" b delete "$ID"
check "poststop ran on delete with the state" jq -e --arg id "$ID" '.id == $id' "$T/hook-poststop.json"
check "poststop saw the container stopped" jq -e '.status == "stopped"' "$T/hook-poststop.json"
assert_clean hk

# ---- run: all three in one command ------------------------------------------
rm -f "$T"/hook-*
mkb hr -- /usr/bin/brig-probe exit 0 || true
cfg hr '.hooks = {createRuntime: [$cr], poststart: [$ps], poststop: [$pst]}' \
    --argjson cr "$(hook createRuntime)" --argjson ps "$(hook poststart)" --argjson pst "$(hook poststop)"
run_ct hr
check_eq "run with hooks exits 0" "$RC" 0
for k in createRuntime poststart poststop; do
    check "run: $k ran with the state" jq -e --arg id "$(cid hr)" '.id == $id' "$T/hook-$k.json"
done
assert_clean hr

# ---- status after create: always created -------------------------------------
# A caller polls `state` as soon as create returns: never creating (with a
# createRuntime hook, state.json gets the pid before setup is done).
mkb sr -- /usr/bin/brig-probe sleep 60 || true
cfg sr '.hooks = {createRuntime: [{path: "/bin/true"}]}'
seen=
for i in 1 2 3 4 5 6 7 8; do
    create_ct sr
    seen="$seen $RC:$(state_field "$(cid sr)" status)"
    b delete --force "$(cid sr)" >/dev/null 2>&1
done
check_eq "state right after create returns, 8 times" "$seen" "$(printf ' 0:created%.0s' 1 2 3 4 5 6 7 8)"
assert_clean sr
# runc says creating to the same hook: the difference.
if command -v runc >/dev/null; then
    rm -f "$T/hook-prestart.json"
    mkb rh -- /usr/bin/brig-probe exit 0 || true
    cfg rh '.hooks = {prestart: [$pr]}' --argjson pr "$(hook prestart)"
    other_run runc rh
    check_eq "runc runs a bundle with a prestart hook" "$OTHER_RC" 0
    check "... whose stdin says creating (brig and crun: created)" \
        jq -e '.status == "creating"' "$T/hook-prestart.json"
fi

# ---- a failing createRuntime hook ----------------------------------------------
mkb hf -- /usr/bin/brig-probe sleep 60 || true
cfg hf '.hooks.createRuntime = [{path: "/bin/sh", args: ["sh", "-c", "cat >/dev/null; exit 3"]}]'
create_ct hf
check "a failing createRuntime hook fails create" test "$RC" -ne 0
check "... with a message" test -s "$T/hf.err"
check_refused "... and the container does not exist" "does not exist" 1 b state "$(cid hf)"
assert_clean hf

# ---- a hanging hook with a timeout -----------------------------------------------
mkb ht -- /usr/bin/brig-probe sleep 60 || true
cfg ht '.hooks.createRuntime = [{path: "/bin/sleep", args: ["sleep", "30"], timeout: 1}]'
start=$(date +%s)
create_ct ht
took=$(( $(date +%s) - start ))
check "a createRuntime hook past its timeout fails create" test "$RC" -ne 0
check "... within a few seconds (took ${took}s)" test "$took" -lt 10
check_refused "... and the container does not exist" "does not exist" 1 b state "$(cid ht)"
assert_clean ht

# ---- a hanging hook that started a child: both end at the timeout ---------------
# `sh -c 'sleep N; true'` forks its sleep: killing the shell alone would leave
# the sleep holding brig's stderr, and a caller reading it ($(...)) would
# wait for it. Each kind brig runs on the host side, and one in the container.
for kind in prestart createRuntime poststart startContainer; do
    n=hc-$kind
    dur=$((900000 + RANDOM))
    mkb "$n" -- /usr/bin/brig-probe exit 0 || continue
    cfg "$n" '.hooks[$k] = [{path: "/bin/sh", args: ["sh", "-c", "sleep \($d); true"], timeout: 1}]' \
        --arg k "$kind" --arg d "$dur"
    CLEAN_IDS+=("$(cid "$n")")
    start=$(date +%s)
    # Through a pipe, as engines and $(...) read brig's output; read for 20 s
    # at most (a child holding it would make an unbounded read hang).
    b run --bundle "$T/$n" "$(cid "$n")" 2>&1 </dev/null | timeout 20 cat > "$T/$n.out"
    RC=${PIPESTATUS[0]}
    out=$(cat "$T/$n.out")
    took=$(( $(date +%s) - start ))
    check_eq "a hanging $kind hook fails run (exit 1)" "$RC" 1
    want="hooks.${kind}[0] (/bin/sh): timed out after 1s"
    if grep -qF -- "$want" <<<"$out"; then ok "... the error names the hook"; else not_ok "... the error names the hook" "$out"; fi
    check "... and the caller reading brig's output got EOF within a few seconds (took ${took}s)" test "$took" -lt 10
    left=$(pgrep -f "sleep $dur" | tr '\n' ' ')
    check_eq "... the hook's child is gone too" "$left" ""
    for p in $left; do kill -9 "$p"; done
    assert_clean "$n"
done

# ---- a hook path that does not exist -------------------------------------------
mkb hm -- /usr/bin/brig-probe sleep 60 || true
cfg hm '.hooks.createRuntime = [{path: "/no/such/hook"}]'
create_ct hm
check "a missing hook binary fails create" test "$RC" -ne 0
assert_clean hm
