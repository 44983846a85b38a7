#!/usr/bin/env bash
# brig sandbox for a fresh unprivileged user (docs/rootless.md): no sudo, no
# setuid bit. A policy that requires its limits is refused where no cgroup v2
# subtree is delegated to the user (this hybrid host), naming the missing
# delegation and the way out; one whose limits are optional for rootless use
# runs, and its result says they were not applied. Inside: the policy's uid
# (the caller on the host), a read-only root, only lo, no capability,
# seccomp mode 2, no_new_privs, the caller's own /workspace writable; a
# timeout kills everything, detached or not; a long-lived sandbox with
# execs; the state under $XDG_RUNTIME_DIR/brig-sandbox; nothing left.
# shellcheck disable=SC2016  # jq filters are single-quoted on purpose
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/rootless-lib.sh"
it_init
: "${BRIG_SANDBOX_SCHEMA:?BRIG_SANDBOX_SCHEMA must point at sandbox/result.schema.json}"
[ "$(cat /proc/sys/user/max_user_namespaces 2>/dev/null || echo 0)" -gt 0 ] ||
    skip_all "user namespaces are disabled (user.max_user_namespaces = 0)"
rl_init

"$BRIG_MKBUNDLE" --probe "$BRIG_PROBE" --brig "$BRIG" --no-config "$T/b" >/dev/null 2>&1 ||
    bail "brig-mkbundle failed"
chmod -R a+rX "$T/b"
ROOTFS=$T/b/rootfs
WS=$T/ws
mkdir -p "$WS" && chown "$RL_UID:$RL_GID" "$WS"
SBR=$RL_XDG/brig-sandbox
"$BRIG" policy show agent | jq '.name = "agent-rootless" | .rootless = {limits: "optional"}' >"$T/opt.json"
chmod 0644 "$T/opt.json"

# sb [flags] -- CMD...: one rootless sandbox run (default state root) with
# the test's rootfs and workspace; the JSON result in $T/out.json, status RC.
sb() {
    rl timeout -k 5 120 "$RL_BRIG" sandbox run --rootfs "$ROOTFS" --workspace "$WS" --json "$@" \
        >"$T/out.json" 2>"$T/err.txt"
    RC=$?
}
j() { jq -r "$1" "$T/out.json"; }
validate() {
    python3 - "$BRIG_SANDBOX_SCHEMA" "$T/out.json" <<'EOF'
import json, sys, jsonschema
schema = json.load(open(sys.argv[1]))
jsonschema.validate(json.load(open(sys.argv[2])), schema)
EOF
}
# nothing of any sandbox is left: no process of the user, no state entry
sb_clean() {
    local left
    wait_until 5 test -z "$(rl_pids)"
    left=$(rl_pids | tr '\n' ' ')$(ls -A "$SBR" 2>/dev/null | grep -v '^.seccomp-cache$' | tr '\n' ' ')
    check_eq "$1: nothing left (processes, state)" "$left" ""
}

# ---- a policy that requires its limits: refused here -------------------------------
sb --policy agent -- sh -c 'touch /workspace/ran'
check_eq "the agent policy (limits required): exit 125" "$RC" 125
check "the refusal names the missing cgroup delegation" \
    bash -c "jq -r .error '$T/out.json' | grep -qF \"the sandbox policy's limits: rootless brig (uid $RL_UID) has no cgroup to enforce them\""
check "... how to get one (cgroup v2, systemd's delegation) and the policy's way out" \
    bash -c "jq -r .error '$T/out.json' | grep -qF 'To get one, run brig on a host with cgroup v2 only' &&
             jq -r .error '$T/out.json' | grep -qF '\"rootless\": {\"limits\": \"optional\"}'"
if [ "$(stat -f -c %T /sys/fs/cgroup)" != cgroup2fs ]; then
    check "... and why there is none on this hybrid host" \
        bash -c "jq -r .error '$T/out.json' | grep -qF 'the controllers are in cgroup v1 hierarchies'"
fi
check_eq "nothing ran" "$(j .ran):$(test -e "$WS/ran" && echo ran)" "false:"
check "the refusal's result validates" validate
sb_clean "refused"

# ---- optional limits: the isolation checks ------------------------------------------
sb --policy "$T/opt.json" -- sh -c 'id -u; cat /proc/self/uid_map | head -n 3;
    grep -E "^(CapEff|CapBnd|NoNewPrivs|Seccomp):" /proc/self/status;
    touch /rootfile 2>/dev/null && echo wrote-root; echo inside > /workspace/out;
    awk -F: "NR > 2 { gsub(/ /, \"\", \$1); print \"if \" \$1 }" /proc/net/dev'
check_eq "optional limits: exit 0" "$RC" 0
check_eq "the result says the limits were not applied" "$(j .limits_applied)" false
check "... and why (no cgroup)" bash -c "jq -r .limits_skipped '$T/out.json' | grep -qF 'has no cgroup'"
check "... nor workspace.maxSize (the workspace is on a filesystem larger than the bound)" \
    bash -c "jq -r .limits_skipped '$T/out.json' | grep -qF 'is not bounded to workspace.maxSize'"
check "the result validates" validate
OUT=$(j .stdout.preview_head)
check_eq "the policy's uid 1000 inside" "$(head -n 1 <<<"$OUT")" 1000
check "uid 1000 inside is the caller on the host" grep -qE "^ *1000 +$RL_UID +1$" <<<"$OUT"
check "no capability in any set" bash -c "grep -q '^CapEff:.0000000000000000' <<<'$OUT' && grep -q '^CapBnd:.0000000000000000' <<<'$OUT'"
check "no_new_privs, seccomp mode 2" bash -c "grep -q '^NoNewPrivs:.1' <<<'$OUT' && grep -q '^Seccomp:.2' <<<'$OUT'"
check_not "the root is read-only" grep -q wrote-root <<<"$OUT"
check_eq "only lo" "$(grep '^if ' <<<"$OUT" | tr '\n' ' ')" "if lo "
check_eq "/workspace is writable: the file is the caller's on the host" \
    "$(stat -c '%u %n' "$WS/out" 2>/dev/null) $(cat "$WS/out" 2>/dev/null)" "$RL_UID $WS/out inside"
check "the state root is \$XDG_RUNTIME_DIR/brig-sandbox, the user's, mode 0700" \
    test "$(stat -c '%u %a' "$SBR" 2>/dev/null)" = "$RL_UID 700"
check "the audit line went to the user's own log (~/.local/state/brig)" \
    grep -q '"op":"sandbox-run"' "$RL_HOME/.local/state/brig/audit.jsonl"
sb_clean "optional limits"

# ---- workspace.maxSize: not staged rootless ----------------------------------------
# Staging mounts a tmpfs on the host: a rootless brig leaves a workspace on a
# filesystem larger than the bound unbounded only as the optional limits
# allow (above: said in limits_skipped; refused when they are required, which
# on this host the missing cgroup is first to be); one on a filesystem within
# the bound is bounded by it.
mkdir -p "$T/smallws"
if mount -t tmpfs -o size=8m,mode=0700,uid="$RL_UID",gid="$RL_GID" brig-test-ws "$T/smallws"; then
    RL_ON_EXIT="umount -l '$T/smallws'"
    WS0=$WS WS=$T/smallws
    sb --policy "$T/opt.json" -- sh -c 'echo small > /workspace/f'
    WS=$WS0
    check_eq "a workspace on a filesystem within workspace.maxSize: exit 0, the file written" \
        "$RC:$(cat "$T/smallws/f" 2>/dev/null)" "0:small"
    check_not "... and bounded by it (not in limits_skipped)" \
        bash -c "jq -r .limits_skipped '$T/out.json' | grep -qF workspace.maxSize"
    umount -l "$T/smallws" && RL_ON_EXIT=
else
    skip "a workspace on a filesystem within workspace.maxSize" "cannot mount a tmpfs here"
fi
sb_clean "workspace.maxSize"

# A timeout kills everything in the sandbox, however it detached.
sb --policy "$T/opt.json" --timeout 2s -- sh -c 'setsid sh -c "sleep 3171" & (sleep 3172 &) ; sleep 600'
[ "$RC" = 124 ] || diag "exit $RC: error $(j .error); stderr: $(tail -c 400 "$T/err.txt")"
check_eq "timeout with detached children: exit 124" "$RC" 124
check_eq "timed_out" "$(j .timed_out)" true
sb_clean "timeout"

# ---- a long-lived sandbox with execs ----------------------------------------------------
rl timeout -k 5 60 "$RL_BRIG" sandbox create --policy "$T/opt.json" --rootfs "$ROOTFS" --workspace "$WS" s1 \
    >"$T/create.out" 2>&1
check_eq "sandbox create" "$?:$(cat "$T/create.out")" "0:s1"
check_eq "sandbox ls lists it, running" "$(rl "$RL_BRIG" sandbox ls --json 2>/dev/null | jq -r '.[0].name + " " + .[0].status')" \
    "s1 running"
rl timeout -k 5 60 "$RL_BRIG" sandbox exec --json s1 -- sh -c 'echo first > /workspace/s1; id -u' >"$T/out.json" 2>"$T/err.txt"
check_eq "exec: exit 0, as uid 1000" "$?:$(j .stdout.preview_head)" "0:1000"
rl timeout -k 5 60 "$RL_BRIG" sandbox exec --json s1 -- cat /workspace/s1 >"$T/out.json" 2>"$T/err.txt"
check_eq "a second exec sees the first's file" "$(j .stdout.preview_head)" first
check_eq "... and reports its limits as not applied" "$(j .limits_applied)" false
rl timeout -k 5 60 "$RL_BRIG" sandbox exec --json --timeout 2s s1 -- sh -c 'sleep 3173' >"$T/out.json" 2>"$T/err.txt"
check_eq "exec --timeout: exit 124, timed_out" "$?:$(j .timed_out)" "124:true"
check "exec --timeout killed its command" wait_until 5 sh -c "! pgrep -u $RL_UID -f 'sleep 3173' >/dev/null"
check "sandbox rm" rl timeout -k 5 60 "$RL_BRIG" sandbox rm s1
sb_clean "long-lived sandbox"

# ---- egress: the proxy as the caller, confined --------------------------------------
# A long-lived sandbox under an egress policy: the proxy (brig-egress) runs as
# the caller with no capability, no_new_privs, its seccomp filter, not
# dumpable (the caller's other processes cannot read it); an exec reaches the
# allowed host through it, a name the policy does not list is refused and
# never reached; the lines go to the user's audit log; rm ends the proxy.
/usr/bin/python3 "$(dirname "$0")/egress-server.py" "$T/port" "$T/srv.log" 2>"$T/srv.err" &
RL_ON_EXIT="kill $!"
wait_until 10 test -s "$T/port" || bail "the test's HTTP server did not start: $(cat "$T/srv.err")"
PORT=$(cat "$T/port")
jq -n --arg a "127.0.0.1:$PORT" '{name: "egress-rl", network: {mode: "egress", allow: [$a]}, workspace: null,
    rootless: {limits: "optional"}}' >"$T/egress.json" && chmod 0644 "$T/egress.json"
rl timeout -k 5 60 "$RL_BRIG" sandbox create --policy "$T/egress.json" --rootfs "$ROOTFS" eg1 >"$T/create.out" 2>&1
check_eq "egress: sandbox create" "$?:$(cat "$T/create.out")" "0:eg1"
PX=$(pgrep -u "$RL_UID" -x brig-egress | head -n 1)
check "egress: the proxy runs as the caller" test -n "$PX" -a "$(stat -c %u "/proc/${PX:-0}" 2>/dev/null)" = "$RL_UID"
ST=$(cat "/proc/${PX:-0}/status" 2>/dev/null)
check "... no capability, no_new_privs, seccomp mode 2" bash -c "grep -q '^CapEff:.0000000000000000' <<<'$ST' &&
    grep -q '^CapPrm:.0000000000000000' <<<'$ST' && grep -q '^NoNewPrivs:.1' <<<'$ST' && grep -q '^Seccomp:.2' <<<'$ST'"
check_not "... not dumpable: the caller cannot read its memory or environment" rl cat "/proc/${PX:-0}/environ"
sx() { rl timeout -k 5 60 "$RL_BRIG" sandbox exec --json eg1 -- sh -c "$1" >"$T/out.json" 2>"$T/err.txt"; }
sx "wget -q -O - http://127.0.0.1:$PORT/"
check_eq "egress: an exec reaches the allowed host through the proxy" "$(j .stdout.preview_head)" hello
n0=$(wc -l <"$T/srv.log")
sx "wget -q -O - http://localhost:$PORT/ 2>&1; echo rc=\$?"
check "egress: a name the policy does not list is refused" grep -q 'rc=1' <<<"$(j .stdout.preview_head)"
check_eq "... and never reached" "$(wc -l <"$T/srv.log")" "$n0"
check "egress: sandbox rm" rl timeout -k 5 60 "$RL_BRIG" sandbox rm eg1
check "... ends the proxy" wait_until 10 sh -c "! pgrep -u $RL_UID -x brig-egress >/dev/null"
AL=$RL_HOME/.local/state/brig/audit.jsonl
check "egress: the allowed connection (written once the proxy ended) in the user's audit log" \
    grep -qE '"op":"egress","id":"eg1",.*"name":"127\.0\.0\.1".*"decision":"allow"' "$AL"
check "... and the refused one" grep -qE '"op":"egress","id":"eg1",.*"name":"localhost".*"decision":"deny"' "$AL"
sb_clean "egress"

# ---- the default runner rootfs ---------------------------------------------------
# root's, when a root brig built it (trusted as root's files are); else one of
# the user's own, built as the user (BRIG_ROOTFS_DIR names a cache of its own).
if [ -f /var/lib/brig/rootfs/default-2.manifest ]; then
    rl timeout -k 5 60 "$RL_BRIG" --debug sandbox run --policy "$T/opt.json" --workspace "$WS" --json -- true \
        >"$T/out.json" 2>"$T/err.txt"
    check_eq "no --rootfs: root's default runner rootfs, exit 0" \
        "$?:$(grep -m 1 -o "default runner rootfs: root's /var/lib/brig/rootfs/default-2\$" "$T/err.txt")" \
        "0:default runner rootfs: root's /var/lib/brig/rootfs/default-2"
else
    skip "no --rootfs: root's default runner rootfs" "a root brig has not built /var/lib/brig/rootfs/default-2 here"
fi
rl env BRIG_ROOTFS_DIR="$RL_HOME/rootfs" timeout -k 5 120 "$RL_BRIG" sandbox run --policy "$T/opt.json" \
    --workspace "$WS" --json -- sh -c 'echo from-own-rootfs' >"$T/out.json" 2>"$T/err.txt"
check_eq "no --rootfs, a cache of the user's own: built as the user, the command ran" \
    "$?:$(j .stdout.preview_head):$(stat -c %u "$RL_HOME/rootfs/default-2" 2>/dev/null)" "0:from-own-rootfs:$RL_UID"
sb_clean "default rootfs"

# ---- refusals --------------------------------------------------------------------
mkdir -p "$T/rootws"
rl timeout -k 5 60 "$RL_BRIG" sandbox run --policy "$T/opt.json" --rootfs "$ROOTFS" --workspace "$T/rootws" --json \
    -- true >"$T/out.json" 2>"$T/err.txt"
check_eq "a workspace that is not the caller's: exit 125" "$?" 125
check "... saying it must be the caller's" bash -c "jq -r .error '$T/out.json' | grep -qF 'workspace is a directory of the caller'"
rl env -u XDG_RUNTIME_DIR "$RL_BRIG" sandbox ls >"$T/noxdg.out" 2>&1
check "no XDG_RUNTIME_DIR: refused, naming it and --state-root" \
    bash -c "grep -qF 'XDG_RUNTIME_DIR is not set' '$T/noxdg.out' && grep -qF -- '--state-root' '$T/noxdg.out'"
sb_clean "refusals"

check_eq "nothing of the user's in /tmp, /var/tmp, /dev/shm, /dev/mqueue or /run" "$(rl_files_outside)" ""
