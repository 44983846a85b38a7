# Shared helpers for the attack tests (sourced, bash): the integration
# helpers plus a compiler for the hostile pieces.
# shellcheck shell=bash
# shellcheck source=tests/integration/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/../integration/lib.sh"

# BRIG_ROOTLESS=1 (meson's security-*-rootless): the same attacks on a brig
# run by a fresh unprivileged user (tests/integration/rootless-lib.sh, rl_mode).
RL_POLICY_JQ=.     # the rootless mode's filter of a test's policies (rl_mode)
SB_WS_OWNER=1000:1000   # a sandbox workspace's owner (rootless: the user's own)
SB_POLICY=agent         # the sandboxes' policy (rootless: agent, its limits optional)
if [ "${BRIG_ROOTLESS:-0}" = 1 ]; then
    # shellcheck source=tests/integration/rootless-lib.sh
    . "$(dirname "${BASH_SOURCE[0]}")/../integration/rootless-lib.sh"
    eval "$(declare -f it_init | sed '1s/^it_init /it_init_root /')"
    it_init() { it_init_root; rl_mode; }
fi

# as_brig_user CMD...: CMD as whoever runs brig in this mode (the rootless
# mode's user, else root as we are).
as_brig_user() {
    if [ "${BRIG_ROOTLESS:-0}" = 1 ]; then rl "$@"; else "$@"; fi
}

# as_brig_user_exec CMD...: the same, replacing the (sub)shell: `as_brig_user_exec
# CMD &` makes $! CMD's own pid.
as_brig_user_exec() {
    if [ "${BRIG_ROOTLESS:-0}" = 1 ]; then eval "exec $(rl_cmdline "$@")"; else exec "$@"; fi
}

# user_cmdline CMD...: CMD as a command line for sh -c, run as whoever runs
# brig in this mode.
user_cmdline() {
    if [ "${BRIG_ROOTLESS:-0}" = 1 ]; then rl_cmdline "$@"; else printf ' %q' "$@"; fi
}

# brig_cmd: the brig under test with the test's state root, as a command line
# for sh -c (script(1), a tty): in the rootless mode, the user's.
brig_cmd() {
    if [ "${BRIG_ROOTLESS:-0}" = 1 ]; then rl_cmdline "$RL_BRIG" --root "$STATE"
    else printf '%q --root %q' "$BRIG" "$STATE"; fi
}

# build_static OUT SRC.c [CFLAGS...]: a small static C program for the attack,
# compiled here from the test's own source. Bails when no static libc exists.
build_static() {
    local out=$1 src=$2; shift 2
    command -v cc >/dev/null || skip_all "no C compiler (bash scripts/setup.sh installs gcc)"
    cc -static -O1 -o "$out" "$src" "$@" 2>"$out.cc.log" ||
        bail "cannot compile $src: $(head -c 500 "$out.cc.log")"
}

# decoy_brig DIR: a copy of $BRIG as DIR/brig with its brig-init beside it
# (brig finds brig-init next to itself), for attacks that must only ever
# reach a copy; DEV and INO are the copy's, TDEV and TINO its brig-init's.
decoy_brig() {
    local d=$1 c
    mkdir -p "$d" && cp "$BRIG" "$d/brig" || bail "cannot copy brig"
    for c in "$(dirname "$BRIG")/brig-init" "$(dirname "$BRIG")/../sandbox/brig-init"; do
        [ -x "$c" ] && { cp "$c" "$d/brig-init"; break; }
    done
    [ -x "$d/brig-init" ] || bail "no brig-init beside $BRIG"
    read -r DEV INO < <(stat -c '%d %i' "$d/brig")
    read -r TDEV TINO < <(stat -c '%d %i' "$d/brig-init")
}

# busybox_rootfs DIR APPLET...: a sandbox rootfs of the host's static
# busybox, with the directories a sandbox mounts on and the applets named.
busybox_rootfs() {
    local r=$1 a; shift
    mkdir -p "$r"/{bin,dev,proc,sys,tmp,var/tmp,workspace,etc,usr/bin} && cp /bin/busybox "$r/bin/" ||
        bail "cannot make the rootfs"
    for a in "$@"; do ln -s busybox "$r/bin/$a"; done
}
