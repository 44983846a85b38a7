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
