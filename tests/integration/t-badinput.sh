#!/usr/bin/env bash
# Bad and hostile input: each case fails with a clear error (or, for hostile
# symlinks, lands inside the root) and leaves nothing behind on the host.
# shellcheck disable=SC2016  # jq filters are single-quoted on purpose
. "$(dirname "$0")/lib.sh"
it_init

# refused NAME DESC [GREP-PATTERN]: create must fail with a message (that
# matches the pattern, when given), nothing may run, nothing may remain.
refused() {
    local name=$1 desc=$2 pat=${3:-}
    create_ct "$name"
    if [ "$RC" -ne 0 ] && [ -s "$T/$name.err" ]; then
        ok "$desc: create fails with a message"
    else
        not_ok "$desc: create fails with a message" "exit status $RC" "stderr: $(cat "$T/$name.err")"
    fi
    if [ -n "$pat" ]; then
        if grep -qiE -- "$pat" "$T/$name.err"; then ok "$desc: the message names $pat"
        else not_ok "$desc: the message names $pat" "stderr: $(cat "$T/$name.err")"; fi
    fi
    check_refused "$desc: the container does not exist" "does not exist" 1 b state "$(cid "$name")"
    assert_clean "$name"
}

# ---- config errors -------------------------------------------------------------
mkb malformed || bail "cannot build a bundle"
printf '{"ociVersion": "1.2.1", "process": {"args": ["sh"' > "$T/malformed/config.json"
refused malformed "malformed JSON" "config.json|json|parse"

mkb noconfig
rm -f "$T/noconfig/config.json"
refused noconfig "missing config.json" "config.json"

mkb type-args
cfg type-args '.process.args = "sh"'
refused type-args "process.args is a string" "process\.args"

mkb type-mem
cfg type-mem '.linux.resources.memory.limit = "1g"'
refused type-mem "memory.limit is a string" "linux\.resources\.memory\.limit"

mkb type-root
cfg type-root '.root = "rootfs"'
refused type-root "root is a string" "root"

mkb type-ns
cfg type-ns '.linux.namespaces += [{type: "bogus"}]'
refused type-ns "unknown namespace type" "linux\.namespaces|bogus"

mkb type-cap
cfg type-cap '.process.capabilities.bounding = "CAP_KILL"'
refused type-cap "capability set is a string" "process\.capabilities\.bounding"

mkb no-rootfs
rm -rf "$T/no-rootfs/rootfs"
refused no-rootfs "missing rootfs" "rootfs|root"

# ---- hostile rootfs: /proc is a symlink to a host path ---------------------------
# hostile NAME DESC: brig either refuses (clear error) or runs with the link
# resolved inside the root; the host directory it points at stays untouched.
hostile_proc() {
    local name=$1 target=$2
    mkdir -p "$T/hostproc" && echo marker > "$T/hostproc/marker"
    mkb "$name" --rw || return
    rm -rf "$T/$name/rootfs/proc"
    ln -s "$target" "$T/$name/rootfs/proc"
    run_ct "$name"
    if [ "$RC" -ne 0 ]; then
        check "/proc -> $target: refused with a message" test -s "$T/$name.err"
    else
        check_probe "/proc -> $target: ran, and procfs works inside" "$name" '.caps.CapEff != null'
    fi
    check_eq "/proc -> $target: the host directory is untouched" "$(find "$T/hostproc" -mindepth 1 -printf '%f ')" "marker "
    check "/proc -> $target: no mount on the host at the target" test -z "$(mounts_under "$T/hostproc")"
    assert_clean "$name"
}
hostile_proc proc-abs "$T/hostproc"
hostile_proc proc-rel "../../hostproc"

# ---- hostile rootfs: /dev is a symlink (to a host path, or to where a bind lands)
# The device nodes and /dev/shm would be made in what it points at: refused,
# with or without a /dev mount in the config, and that directory untouched.
hostile_dev() {
    local name=$1 link=$2 want=$3; shift 3
    mkdir -p "$T/hostdev" && echo marker > "$T/hostdev/marker"
    mkb "$name" --rw || return
    rm -rf "$T/$name/rootfs/dev"
    ln -s "$link" "$T/$name/rootfs/dev"
    [ $# -gt 0 ] && cfg "$name" "$@"
    run_ct "$name"
    check "$name: refused (exit 1) naming /dev" eval '[ "$RC" = 1 ] && grep -q "$want" "$T/$name.err"'
    check_eq "$name: the directory /dev points at is untouched" "$(find "$T/hostdev" -mindepth 1 -printf '%f ')" "marker "
    check "$name: no mount on the host at the target" test -z "$(mounts_under "$T/hostdev")"
    assert_clean "$name"
}
hostile_dev dev-mounted ../../hostdev "mounts\[[0-9]*\] (/dev): tmpfs must be mounted on a directory, /dev is a symlink"
# (no /dev mounts at all: the nodes would go into the rootfs's /tmp)
hostile_dev dev-unmounted tmp "the rootfs's /dev is a symlink" '.mounts |= map(select(.destination | startswith("/dev") | not))'
check_eq "dev-unmounted: no node made where /dev points" "$(find "$T/dev-unmounted/rootfs/tmp" -mindepth 1 | wc -l)" 0

# ---- hostile mount destinations: symlinks to / and ../../.. ---------------------
# The bundle is $T/NAME, so on the host "rootfs/up/../../.." is dirname($T).
ESC_ROOT=/brig-esc-$TAG
ESC_UP=$(dirname "$T")/brig-esc-up-$TAG
# hostile_dest NAME LINK LEAF HOSTPATH [DEST]: rootfs/evil -> LINK, a tmpfs
# at DEST (default /evil/LEAF); HOSTPATH is where it would land if followed
# on the host.
hostile_dest() {
    local name=$1 link=$2 leaf=$3 hostpath=$4 dest=${5:-/evil/$3}
    mkb "$name" --rw -- /usr/bin/brig-probe report || return
    ln -s "$link" "$T/$name/rootfs/evil"
    cfg "$name" '.mounts += [{destination: $dest, type: "tmpfs", source: "tmpfs",
                               options: ["nosuid", "size=64k"]}]' --arg dest "$dest"
    run_ct "$name"
    if [ "$RC" -ne 0 ]; then
        check "dest $dest (evil -> $link): refused with a message" test -s "$T/$name.err"
    else
        check_probe "dest $dest (evil -> $link): the tmpfs landed inside the root" "$name" \
            '[.mounts[] | select(.fstype == "tmpfs" and (.mount_point == ("/" + $l) or .mount_point == ("/evil/" + $l)))] | length == 1' \
            --arg l "$leaf"
    fi
    if [ -e "$hostpath" ]; then
        not_ok "dest $dest (evil -> $link): nothing created at $hostpath on the host" "it exists: $(ls -ld "$hostpath")"
        umount -l "$hostpath" 2>/dev/null; rmdir "$hostpath" 2>/dev/null
    else
        ok "dest $dest (evil -> $link): nothing created at $hostpath on the host"
    fi
    check "dest $dest (evil -> $link): no host mount at $hostpath" bash -c "! grep -qF ' $hostpath ' /proc/self/mountinfo"
    assert_clean "$name"
}
hostile_dest dest-root / "${ESC_ROOT#/}" "$ESC_ROOT"
hostile_dest dest-up ../../.. "$(basename "$ESC_UP")" "$ESC_UP"
# A relative destination is relative to the container's "/" (deprecated but
# allowed by the spec); its ".." must not climb out either.
hostile_dest dest-rel / "$(basename "$ESC_UP")" "$ESC_UP" "../../$(basename "$ESC_UP")"

# ---- hostile rootfs: /dev/null is a symlink to a host file -----------------------
# Without a /dev tmpfs the runtime creates device nodes in the image's /dev:
# it must not follow a planted symlink to the host (mknod, bind, chmod or
# chown through it would hit the host file).
echo host-secret > "$T/hostfile" && chmod 0600 "$T/hostfile"
before=$(stat -c '%a %u %g %s' "$T/hostfile")
mkb devnull --rw -- /usr/bin/brig-probe report --read /dev/null || true
cfg devnull '.mounts |= map(select(.destination != "/dev"))'
rm -f "$T/devnull/rootfs/dev/null"
ln -s "$T/hostfile" "$T/devnull/rootfs/dev/null"
run_ct devnull
if [ "$RC" -ne 0 ]; then
    check "/dev/null -> host file: refused with a message" test -s "$T/devnull.err"
else
    check_probe "/dev/null -> host file: /dev/null is the real character device inside" devnull \
        '.reads["/dev/null"].type == "char" and .reads["/dev/null"].bytes == 0'
fi
check_eq "/dev/null -> host file: the host file keeps its mode, owner and size" \
    "$(stat -c '%a %u %g %s' "$T/hostfile")" "$before"
check "/dev/null -> host file: and its content" grep -qx host-secret "$T/hostfile"
assert_clean devnull

# ---- a bind source that does not exist -------------------------------------------
mkb bind-missing
cfg bind-missing '.mounts += [{destination: "/x", type: "bind", source: "/no/such/dir", options: ["rbind"]}]'
refused bind-missing "bind mount of a missing source" "/no/such/dir|mounts\[[0-9]+\]"

# ---- an unknown mount option must not be silently dropped --------------------------
mkb bad-opt
cfg bad-opt '.mounts += [{destination: "/x", type: "tmpfs", source: "tmpfs", options: ["nosuid", "bogus-option=1"]}]'
create_ct bad-opt
if [ "$RC" -ne 0 ]; then
    check "unknown tmpfs option: refused with a message" test -s "$T/bad-opt.err"
    check_refused "unknown tmpfs option: the container does not exist" "does not exist" 1 b state "$(cid bad-opt)"
else
    # Unknown options go to the filesystem as data, and tmpfs rejects them.
    not_ok "unknown tmpfs option: refused" "create succeeded"
    b delete --force "$(cid bad-opt)" >/dev/null 2>&1
fi
assert_clean bad-opt
