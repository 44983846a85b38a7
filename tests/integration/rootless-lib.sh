# A fresh unprivileged user for the rootless tests (sourced after lib.sh, or
# after tests/security/lib.sh; bash). rl_init makes it, with the subordinate
# ids useradd gives every new user (/etc/subuid, /etc/subgid), a home under
# $T and an XDG_RUNTIME_DIR of its own (/tmp/brl.*), and copies of brig, brig-init and
# brig-probe it can run whatever the build tree's permissions; at exit its
# processes are killed by pid, its containers deleted and the user removed,
# after RL_ON_EXIT (a command, e.g. the engine's own cleanup, run as the
# user still exists); then the test file's own exit runs (RL_FINISH, default
# it_finish).
#
#   rl CMD...        CMD as that user (setpriv: no PAM session, no sudo), with
#                    a clean environment: PATH, HOME, USER, XDG_RUNTIME_DIR
#   rb ARGS...       rl "$RL_BRIG" ARGS... within BRIG_TIMEOUT
#   rl_pids          the user's processes, by pid
#   rl_files_outside the files the user owns in the places an unprivileged
#                    user can write, but its own ($T holds its home, and
#                    RL_XDG): /tmp, /var/tmp, /dev/shm, /dev/mqueue, /run
# shellcheck shell=bash

RL_USER=
# A jq filter the tests apply to the policies they write: the rootless mode
# lets their limits go where no cgroup is delegated (rl_mode).
RL_POLICY_JQ=.
rl_init() {
    [ "$(id -u)" = 0 ] || skip_all "making a test user needs root"
    command -v useradd >/dev/null && command -v setpriv >/dev/null ||
        skip_all "useradd and setpriv (passwd, util-linux) are needed"
    RL_USER="brigrl$$"
    RL_HOME=$T/home
    useradd -M -d "$RL_HOME" -s /usr/sbin/nologin "$RL_USER" >/dev/null 2>&1 ||
        bail "useradd $RL_USER failed"
    RL_UID=$(id -u "$RL_USER") RL_GID=$(id -g "$RL_USER")
    trap 'rl_rc=$?; rl_cleanup; (exit $rl_rc); '"${RL_FINISH:-it_finish}" EXIT
    # Short: podman refuses a runroot ($XDG_RUNTIME_DIR/containers) of more
    # than 50 characters (its cleanup process fails, and `run` waits 20 s).
    RL_XDG=$(mktemp -d /tmp/brl.XXXXXX) || bail "mktemp failed"
    mkdir -p "$RL_HOME"
    chown "$RL_UID:$RL_GID" "$RL_HOME" "$RL_XDG"
    chmod 0700 "$RL_XDG"
    # Copies it can run (the build tree may be under a 0700 home), brig-init
    # next to brig where brig looks for it.
    RL_BIN=$T/rl-bin
    mkdir -p "$RL_BIN"
    cp "$BRIG" "$RL_BIN/brig"
    local init
    init=$(dirname "$BRIG")/../sandbox/brig-init
    [ -x "$init" ] && cp "$init" "$RL_BIN/brig-init"
    [ -n "${BRIG_PROBE:-}" ] && cp "$BRIG_PROBE" "$RL_BIN/brig-probe"
    chmod 0755 "$RL_BIN" "$RL_BIN"/*
    RL_BRIG=$RL_BIN/brig
    RL_SUBUID=$(awk -F: -v u="$RL_USER" '$1 == u { print $2 ":" $3; exit }' /etc/subuid 2>/dev/null)
    diag "rootless user $RL_USER (uid $RL_UID), subordinate ids ${RL_SUBUID:-none}"
}

rl() {
    setpriv --reuid="$RL_UID" --regid="$RL_GID" --init-groups --inh-caps=-all -- \
        env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME="$RL_HOME" USER="$RL_USER" LOGNAME="$RL_USER" \
        XDG_RUNTIME_DIR="$RL_XDG" "$@"
}

rb() { rl timeout -k 5 "${BRIG_TIMEOUT:-60}" "$RL_BRIG" "$@"; }
# rl_cmdline CMD...: what rl runs, as a command line for sh -c.
rl_cmdline() {
    printf 'setpriv --reuid=%s --regid=%s --init-groups --inh-caps=-all -- env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin' \
        "$RL_UID" "$RL_GID"
    printf ' %q' "HOME=$RL_HOME" "USER=$RL_USER" "LOGNAME=$RL_USER" "XDG_RUNTIME_DIR=$RL_XDG" "$@"
}

rl_pids() {
    local p
    for p in /proc/[0-9]*; do
        [ "$(stat -c %u "$p" 2>/dev/null)" = "$RL_UID" ] && echo "${p#/proc/}"
    done
}

rl_files_outside() {
    find /tmp /var/tmp /dev/shm /dev/mqueue /run -xdev \( -path "$T" -o -path "$RL_XDG" \) -prune -o \
        -user "$RL_UID" -print \
        2>/dev/null | head -n 20
}

rl_cleanup() {
    [ -n "$RL_USER" ] || return 0
    local id p
    [ -n "${RL_ON_EXIT:-}" ] && eval "$RL_ON_EXIT" >/dev/null 2>&1
    for id in "$RL_XDG"/brig/*; do
        [ -d "$id" ] && rb delete --force "${id##*/}" >/dev/null 2>&1
    done
    for id in "$RL_XDG"/brig-sandbox/*; do
        [ -d "$id" ] && rb sandbox rm --force "${id##*/}" >/dev/null 2>&1
    done
    for p in $(rl_pids); do kill -9 "$p" 2>/dev/null; done
    userdel "$RL_USER" >/dev/null 2>&1 || diag "userdel $RL_USER failed"
    rm -rf --one-file-system "$RL_XDG"
    RL_USER=
}

# ---- the rootless mode of a test written for root (BRIG_ROOTLESS=1) ----------
# tests/security/lib.sh runs it_init then rl_mode: every brig the test runs
# through b (run_ct, create_ct, state_field, ...) is the user's, its state
# root the user's ($STATE under RL_XDG, which rl_cleanup sweeps), and every
# bundle mkb makes gets a user namespace mapping the user to 0 and its
# subordinate ids to 1-65535 (as rootless podman's); the bundle directory is
# the user's, the rootfs stays root's (read-only to the user, as an image
# would be). Needs a subordinate range (devpts' gid 5, the probe's 1000).
rl_mode() {
    rl_init
    [ -n "$RL_SUBUID" ] || { rl_cleanup; skip_all "useradd gave the test user no /etc/subuid range"; }
    command -v newuidmap >/dev/null || { rl_cleanup; skip_all "newuidmap is missing (uidmap)"; }
    STATE=$RL_XDG/brig
    # the test's files brig writes (--log, --pid-file, sockets) are the user's
    chown "$RL_UID:$RL_GID" "$T"
    # a policy's limits cannot be enforced without a delegated cgroup here
    RL_POLICY_JQ='.rootless = {limits: "optional"}'
    SB_WS_OWNER=$RL_UID:$RL_GID
    SB_POLICY=$T/rl-agent.json
    "$BRIG" policy show agent | jq "$RL_POLICY_JQ" >"$SB_POLICY" && chmod 0644 "$SB_POLICY"
    diag "rootless mode: brig runs as $RL_USER (uid $RL_UID), state in $STATE"
    b() { rl timeout -k 5 "${BRIG_TIMEOUT:-60}" "$RL_BRIG" --root "$STATE" "$@"; }
    eval "$(declare -f mkb | sed '1s/^mkb /rl_root_mkb /')"
    mkb() {
        rl_root_mkb "$@" || return 1
        local name=$1 sub=${RL_SUBUID%%:*}
        cfg "$name" '.linux.namespaces = ((.linux.namespaces // []) | map(select(.type != "user")) + [{type: "user"}])
            | .linux.uidMappings = [{containerID: 0, hostID: $u, size: 1}, {containerID: 1, hostID: $s, size: 65535}]
            | .linux.gidMappings = [{containerID: 0, hostID: $g, size: 1}, {containerID: 1, hostID: $s, size: 65535}]' \
            --argjson u "$RL_UID" --argjson g "$RL_GID" --argjson s "$sub"
        chown "$RL_UID:$RL_GID" "$T/$name" "$T/$name/config.json"
    }
}
