#!/usr/bin/env bash
# The policy end to end where t-policy does not go: the hooks rule under
# --policy (an allowed hook runs, another is refused before it can run), and
# exec judged by the policy (exec -u 0:0, a --process file without
# noNewPrivileges or with an extra capability): refused in enforce mode with
# an audit line and no process left; run, and logged, in audit mode.
# shellcheck disable=SC2016  # jq filters are single-quoted on purpose
. "$(dirname "$0")/lib.sh"
it_init

AUDIT=$T/audit.jsonl
cat > "$T/hook-ok.sh" <<EOF
#!/bin/sh
echo ran > "$T/hook-ok.ran"
EOF
cat > "$T/hook-evil.sh" <<EOF
#!/bin/sh
echo ran > "$T/hook-evil.ran"
EOF
chmod 0755 "$T/hook-ok.sh" "$T/hook-evil.sh"

# The agent profile, our audit log, the one allowed hook; MODE enforce|audit.
profile_file() {
    "$BRIG" policy show agent | jq --arg a "$AUDIT" --arg m "$1" --arg h "$T/hook-ok.sh" \
        '.audit.path = $a | .mode = $m | .hooks = [$h]' > "$T/agent-$1.json"
    echo "$T/agent-$1.json"
}
ENF=$(profile_file enforce)
AUD=$(profile_file audit)
mkdir -p "$T/ws"
mkb hard -- /usr/bin/brig-probe exit 0 || bail "cannot build a bundle"
"$BRIG" policy apply --policy "$ENF" --workspace "$T/ws" --output "$T/hard/config.json" "$T/hard" ||
    bail "policy apply failed"
# with_config NAME JQ-FILTER [jq args]: a bundle on hard's rootfs, its config changed.
with_config() {
    local name=$1 filter=$2; shift 2
    mkdir -p "$T/$name"
    jq --arg r "$T/hard/rootfs" "$@" ".root.path = \$r | $filter" "$T/hard/config.json" > "$T/$name/config.json"
}
audit_has() { # JQ-SELECT: at least one audit line matches
    jq -se "[.[] | select($1)] | length >= 1" "$AUDIT" >/dev/null 2>&1
}

# ---- hooks under --policy ------------------------------------------------------
with_config h-ok '.hooks = {createRuntime: [{path: $h}]}' --arg h "$T/hook-ok.sh"
with_config h-evil '.hooks = {createRuntime: [{path: $h}]}' --arg h "$T/hook-evil.sh"
CLEAN_IDS+=("$(cid h-ok)" "$(cid h-evil)")
b --policy "$ENF" run --bundle "$T/h-ok" "$(cid h-ok)" </dev/null >"$T/h-ok.out" 2>"$T/h-ok.err"
check_eq "enforce: a config whose hook is on the policy's list runs" "$?" 0
check "... and the hook ran" test -e "$T/hook-ok.ran"
b --policy "$ENF" run --bundle "$T/h-evil" "$(cid h-evil)" </dev/null >"$T/h-evil.out" 2>"$T/h-evil.err"
check_refused_rc "enforce: a hook not on the list is refused" "refuses create: hooks" 1 "$?" "$T/h-evil.err"
check "... naming the hook's field" grep -q "hooks.createRuntime\[0\].path" "$T/h-evil.err"
check "... the hook never ran" test ! -e "$T/hook-evil.ran"
check "... the refusal is in the audit log" audit_has \
    '.op == "create" and .decision == "deny" and (.rules | index("hooks"))'
assert_clean h-evil
assert_clean h-ok
rm -f "$T/hook-evil.ran"
b --policy "$AUD" run --bundle "$T/h-evil" "$(cid h-evil)" </dev/null >"$T/h-evil.out" 2>"$T/h-evil.err"
check_eq "audit: the same config runs" "$?" 0
check "... the hook ran (audit mode only logs)" test -e "$T/hook-evil.ran"
check "... and the violation is logged" audit_has \
    '.op == "create" and .decision == "audit" and (.rules | index("hooks"))'
assert_clean h-evil

# ---- exec under the policy -----------------------------------------------------
with_config svc '.process.args = ["/usr/bin/brig-probe", "sleep", "600"]'
SVC=$(cid svc)
CLEAN_IDS+=("$SVC")
# procs_in ID: how many processes the container has (brig ps), or "none".
procs_in() {
    b ps -f json "$1" 2>/dev/null | jq -e 'length' 2>/dev/null || echo none
}
# A --process file from the container's own process, changed by FILTER.
process_file() { # NAME FILTER
    jq "$2 | .process | .args = [\"/usr/bin/brig-probe\", \"exit\", \"0\"]" "$T/svc/config.json" > "$T/$1.json"
}
process_file p-nnp '.process.noNewPrivileges = false'
jq '.args = ["/usr/bin/brig-probe", "report"]' "$T/p-nnp.json" > "$T/p-nnp.tmp" && mv "$T/p-nnp.tmp" "$T/p-nnp.json"
process_file p-cap '.process.capabilities.bounding += ["CAP_SYS_PTRACE"] | .process.capabilities.permitted += ["CAP_SYS_PTRACE"] | .process.capabilities.effective += ["CAP_SYS_PTRACE"]'
process_file p-ok '.'

exec_cases() { # POLICY: the three refused forms, then the allowed one
    local pol=$1 mode=$2
    before=$(procs_in "$SVC")
    check_eq "$mode: the container runs its init alone" "$before" 1
    for c in "u0|user.nonroot|exec -u 0:0" "cap|caps.none|--process with CAP_SYS_PTRACE"; do
        IFS='|' read -r k rule what <<<"$c"
        case $k in
            u0) args=(-u 0:0 "$SVC" /usr/bin/brig-probe exit 0) ;;
            cap) args=(--process "$T/p-cap.json" "$SVC") ;;
        esac
        lines=$(wc -l <"$AUDIT" 2>/dev/null || echo 0)
        if [ "$mode" = enforce ]; then
            check_refused "enforce: $what is refused ($rule)" "refuses exec: $rule" 1 \
                b --policy "$pol" exec "${args[@]}"
            check "... an audit line says deny $rule" bash -c \
                "tail -n +$((lines + 1)) '$AUDIT' | jq -se '[.[] | select(.op == \"exec\" and .decision == \"deny\" and (.rules | index(\"$rule\")))] | length == 1'"
        else
            check "audit: $what runs" b --policy "$pol" exec "${args[@]}"
            check "... an audit line says audit $rule" bash -c \
                "tail -n +$((lines + 1)) '$AUDIT' | jq -se '[.[] | select(.op == \"exec\" and .decision == \"audit\" and (.rules | index(\"$rule\")))] | length == 1'"
        fi
        check_eq "... and no exec'd process is left in the container" "$(procs_in "$SVC")" "$before"
    done
    check "$mode: a compliant --process file is allowed" b --policy "$pol" exec --process "$T/p-ok.json" "$SVC"
    # noNewPrivileges false in a --process file: brig keeps the container's
    # no_new_privs (exec_process.c), so the policy judges (and the process
    # gets) no_new_privs set; either way no process runs without it.
    b --policy "$pol" exec --process "$T/p-nnp.json" "$SVC" >"$T/nnp-$mode.out" 2>"$T/nnp-$mode.err"
    # shellcheck disable=SC2034  # read by check_ran
    RC=$?
    if grep -q "refuses exec: nnp" "$T/nnp-$mode.err"; then
        ok "$mode: --process with noNewPrivileges false is refused (nnp)"
    elif check_ran "$mode: --process with noNewPrivileges false runs" "nnp-$mode"; then
        check_probe "... with no_new_privs still set (the container's)" "nnp-$mode" '.no_new_privs == 1'
    fi
}
if b --policy "$ENF" run --detach --bundle "$T/svc" "$SVC" </dev/null >/dev/null 2>"$T/svc.err" &&
   wait_status "$SVC" running 10; then
    exec_cases "$ENF" enforce
    exec_cases "$AUD" audit
    check_eq "the container is still running, its init alone" "$(procs_in "$SVC")" 1
    b delete --force "$SVC" >/dev/null 2>&1
else
    not_ok "a hardened container runs detached under enforce" "$(cat "$T/svc.err")"
fi
assert_clean svc
