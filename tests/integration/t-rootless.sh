#!/usr/bin/env bash
# brig as an OCI runtime run by a fresh unprivileged user (docs/rootless.md):
# `brig spec --rootless` and `runc spec --rootless` bundles run with no sudo
# and no setuid bit; the state goes under $XDG_RUNTIME_DIR/brig; the
# subordinate ids /etc/subuid grants go through newuidmap (an ungranted
# range is refused); limits are refused where no cgroup v2 subtree is
# delegated (this hybrid host), with the message saying how to get one;
# a bundle without a user namespace, a missing or shared XDG_RUNTIME_DIR are
# refused; nothing is left, nothing written outside the user's own.
# shellcheck disable=SC2016  # jq filters are single-quoted on purpose
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/rootless-lib.sh"
it_init
[ "$(cat /proc/sys/user/max_user_namespaces 2>/dev/null || echo 0)" -gt 0 ] ||
    skip_all "user namespaces are disabled (user.max_user_namespaces = 0)"
rl_init

mkb base || bail "cannot build the rootfs"
ROOTFS=$T/base/rootfs
XB=$RL_XDG/brig
# rlb NAME SPEC-TEXT: a bundle $T/NAME owned by the user whose config.json is
# SPEC-TEXT with the shared rootfs (absolute) and our tag in the environment.
rlb() {
    local name=$1 spec=$2; shift 2
    mkdir -p "$T/$name"
    jq --arg r "$ROOTFS" --arg id "$(cid "$name")" '.root.path = $r | .process.terminal = false
        | .process.env = ((.process.env // []) + ["BRIG_IT_TAG=" + $id])' <<<"$spec" >"$T/$name/config.json"
    [ $# -gt 0 ] && cfg "$name" "$@"
    chown -R "$RL_UID:$RL_GID" "$T/$name"
}
# rrun NAME [brig args before run]: brig run as the user; RC, $T/NAME.{out,err}.
rrun() {
    local name=$1; shift
    rb "$@" run --bundle "$T/$name" "$(cid "$name")" </dev/null >"$T/$name.out" 2>"$T/$name.err"
    RC=$?
}
user_clean() {
    local left
    left=$(rl_pids | tr '\n' ' ')
    check_eq "$1: no process of the user is left" "$left" ""
    check_eq "$1: no state left under \$XDG_RUNTIME_DIR/brig" "$(ls -A "$XB" 2>/dev/null)" ""
}

# ---- brig spec --rootless, run without --root ---------------------------------------
mkdir -p "$T/spec" && chown "$RL_UID:$RL_GID" "$T/spec"
rb spec --rootless --bundle "$T/spec" >/dev/null 2>"$T/spec.err"
check_eq "brig spec --rootless maps the user's uid to 0" \
    "$(jq -c '[.linux.uidMappings, .linux.gidMappings]' "$T/spec/config.json" 2>/dev/null)" \
    "[[{\"containerID\":0,\"hostID\":$RL_UID,\"size\":1}],[{\"containerID\":0,\"hostID\":$RL_GID,\"size\":1}]]"
SPEC=$(cat "$T/spec/config.json")
rlb run "$SPEC" '.process.args = ["/bin/sh", "-c", "cat /proc/self/uid_map; exec /usr/bin/brig-probe report"]'
rrun run
check_ran "run as uid $RL_UID, no --root: the probe ran" run
check_probe "uid 0 in a user namespace that is not the host's, with new pid and mount namespaces" run \
    '.uid == 0 and .namespaces.user != $u and .namespaces.pid != $p and .namespaces.mnt != $m' \
    --argjson u "$(host_ns user)" --argjson p "$(host_ns pid)" --argjson m "$(host_ns mnt)"
check_eq "its uid 0 is the user on the host" "$(awk 'NR == 1 { print $1, $2, $3 }' "$T/run.out")" "0 $RL_UID 1"
check "the state root was \$XDG_RUNTIME_DIR/brig, the user's, mode 0700" \
    test "$(stat -c '%u %a' "$XB" 2>/dev/null)" = "$RL_UID 700"
check "no state of it in root's /run/brig" test ! -e "/run/brig/$(cid run)"
user_clean run

# ---- create, start, exec, ps, kill --all, delete ------------------------------------
rlb life "$SPEC" '.process.args = ["/usr/bin/brig-probe", "sleep", "60"]'
ID=$(cid life)
rb create --bundle "$T/life" "$ID" </dev/null >"$T/life.out" 2>"$T/life.err"
check_eq "create" "$?" 0
check_eq "state: created, owner the user" "$(rb state "$ID" 2>/dev/null | jq -r '.status + " " + .owner')" \
    "created $RL_USER"
check "start" rb start "$ID"
PID=$(rb state "$ID" 2>/dev/null | jq -r .pid)
check_eq "the init runs as the user on the host" "$(awk '/^Uid:/ { print $2 }' "/proc/$PID/status" 2>/dev/null)" "$RL_UID"
rb exec "$ID" /usr/bin/brig-probe report >"$T/life-exec.out" 2>"$T/life-exec.err"
check_probe "exec: the process joined the container (uid 0, the init's pid and user namespaces)" life-exec \
    '.uid == 0 and .namespaces.pid == $p and .namespaces.user == $u' \
    --argjson p "$(stat -L -c %i "/proc/$PID/ns/pid")" --argjson u "$(stat -L -c %i "/proc/$PID/ns/user")"
check_eq "list shows it running" "$(rb list -q 2>/dev/null)" "$ID"
rb exec -d "$ID" /usr/bin/brig-probe sleep 60 >/dev/null 2>&1
check_eq "ps (no cgroup: the processes of its pid namespace) lists the init and a detached exec" \
    "$(rb ps --format json "$ID" 2>/dev/null | jq length)" 2
check "kill --all KILL" rb kill --all "$ID" KILL
wait_until 5 sh -c "[ \"\$(ls /proc/$PID 2>/dev/null)\" = '' ]"
check "delete" rb delete "$ID"
user_clean life

# ---- what users feed it: runc spec --rootless -------------------------------------
if command -v runc >/dev/null; then
    mkdir -p "$T/runcspec" && chown "$RL_UID:$RL_GID" "$T/runcspec"
    (cd "$T/runcspec" && rl runc spec --rootless) >/dev/null 2>&1
    rlb runcspec "$(cat "$T/runcspec/config.json")" '.process.args = ["/usr/bin/brig-probe", "report"]'
    rrun runcspec
    check_ran "a runc spec --rootless bundle runs" runcspec
    check_probe "as uid 0 of its user namespace" runcspec '.uid == 0 and .namespaces.user != $u' \
        --argjson u "$(host_ns user)"
else
    skip "a runc spec --rootless bundle runs" "runc is not installed"
fi

# ---- subordinate ids through newuidmap -----------------------------------------------
if [ -n "$RL_SUBUID" ] && command -v newuidmap >/dev/null; then
    SUB=${RL_SUBUID%%:*}
    rlb sub "$SPEC" '.linux.uidMappings += [{containerID: 1, hostID: $s, size: 65536}]
        | .linux.gidMappings += [{containerID: 1, hostID: $s, size: 65536}]
        | .process.user = {uid: 1000, gid: 1000} | .process.args = ["/usr/bin/brig-probe", "sleep", "60"]' \
        --argjson s "$SUB"
    ID=$(cid sub)
    rb run -d --bundle "$T/sub" "$ID" </dev/null >"$T/sub.out" 2>"$T/sub.err"
    check_eq "a config mapping the user's subordinate ids runs (newuidmap, newgidmap)" "$?" 0
    PID=$(rb state "$ID" 2>/dev/null | jq -r .pid)
    check_eq "its uid 1000 is subordinate id $SUB + 999 on the host" \
        "$(awk '/^Uid:/ { print $2 }' "/proc/$PID/status" 2>/dev/null)" "$((SUB + 999))"
    check_eq "uid_map has both ranges" "$(awk '{ print $1, $2, $3 }' "/proc/$PID/uid_map" 2>/dev/null | tr '\n' ,)" \
        "0 $RL_UID 1,1 $SUB 65536,"
    rb delete --force "$ID" >/dev/null 2>&1
    # A range /etc/subuid does not grant: newuidmap refuses, brig says which file.
    rlb nosub "$SPEC" '.linux.uidMappings += [{containerID: 1, hostID: 1879048192, size: 65536}]
        | .linux.gidMappings += [{containerID: 1, hostID: 1879048192, size: 65536}]'
    rrun nosub
    check_refused_rc "a range /etc/subuid does not grant the user is refused" \
        "linux.uidMappings: newuidmap failed" 1 "$RC" "$T/nosub.err"
    check "naming /etc/subuid" grep -qF "/etc/subuid" "$T/nosub.err"
    user_clean "subordinate ids"
else
    skip "subordinate ids through newuidmap" "no /etc/subuid range for new users or no newuidmap (uidmap package)"
fi

# ---- limits with no delegated cgroup v2 subtree -------------------------------------
rlb limit "$SPEC" '.linux.resources = {memory: {limit: 67108864}}'
rrun limit
check_refused_rc "a memory limit without a delegated cgroup is refused" \
    "linux.resources.memory: rootless brig (uid $RL_UID) has no cgroup to enforce it" 1 "$RC" "$T/limit.err"
check "the refusal says how to get one (cgroup v2, systemd's delegation)" \
    grep -qF "To get one, run brig on a host with cgroup v2 only" "$T/limit.err"
if [ "$(stat -f -c %T /sys/fs/cgroup)" != cgroup2fs ]; then
    check "and why there is none on this host (v1 controllers are never delegated)" \
        grep -qF "cgroups are hybrid: the controllers are in cgroup v1 hierarchies" "$T/limit.err"
fi
rlb pids "$SPEC" '.linux.resources = {pids: {limit: 10}}'
rrun pids
check_refused_rc "a pids limit too" "linux.resources.pids: rootless brig" 1 "$RC" "$T/pids.err"
user_clean "refused limits"

# ---- refusals ----------------------------------------------------------------------
rlb nouserns "$SPEC" '.linux.namespaces |= map(select(.type != "user")) | del(.linux.uidMappings, .linux.gidMappings)'
rrun nouserns
check_refused_rc "a config without a user namespace is refused" \
    "rootless brig (uid $RL_UID) needs a user namespace" 1 "$RC" "$T/nouserns.err"
check_refused "no XDG_RUNTIME_DIR: refused, naming it and --root" "XDG_RUNTIME_DIR is not set" \
    rl env -u XDG_RUNTIME_DIR "$RL_BRIG" list
mkdir -p "$T/shared" && chown "$RL_UID:$RL_GID" "$T/shared" && chmod 0770 "$T/shared"
check_refused "an XDG_RUNTIME_DIR others may write is refused" "writable by no one else" \
    rl env XDG_RUNTIME_DIR="$T/shared" "$RL_BRIG" list
check "--root DIR of the user's own works without XDG_RUNTIME_DIR" \
    rl env -u XDG_RUNTIME_DIR "$RL_BRIG" --root "$T/home/own" list
# root's state root as root's brig makes it (0700) on its first use: a fresh
# boot has none yet (/run is a tmpfs), and then there is nothing to refuse
made_run_brig=
[ -d /run/brig ] || { mkdir -m 0700 /run/brig && made_run_brig=1; }
check_refused "--root in root's /run/brig is refused" "/run/brig" rl "$RL_BRIG" --root /run/brig list
[ -z "$made_run_brig" ] || rmdir /run/brig
user_clean refusals

check_eq "nothing of the user's in /tmp, /var/tmp, /dev/shm, /dev/mqueue or /run" "$(rl_files_outside)" ""
