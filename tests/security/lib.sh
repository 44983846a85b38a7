# Shared helpers for the attack tests (sourced, bash): the integration
# helpers plus a compiler for the hostile pieces.
# shellcheck shell=bash
# shellcheck source=tests/integration/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/../integration/lib.sh"

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
