#!/usr/bin/env bash
# A container without a mount namespace of its own (no "mount" in
# linux.namespaces, which the spec says inherits the runtime's) is in the
# host's mount table: its root is only a chroot into root.path, and its
# mounts are made in the host's namespace, below a bind of root.path that
# delete detaches. The hostile program below, run as root with runc spec's
# capabilities, tries every way out of a chroot: the classic chroot-in-chroot
# walk, a new user namespace (full capabilities there, chroot included),
# mounting, and reaching the decoy by its host path, without mounts and with
# a /proc and a tmpfs. None may read the decoy or leave a mount on the host;
# the image's symlinks cannot put a mount on a host path. The configs that
# would hand it the way out (CAP_SYS_CHROOT, CAP_SYS_ADMIN) are refused. Also: linux.memoryPolicy
# garbage and crun's --config pointed at a symlink to a secret or a fifo.
# shellcheck source=tests/security/lib.sh
. "$(dirname "$0")/lib.sh"
it_init
command -v runc >/dev/null || skip_all "runc is not installed (bash scripts/setup.sh installs it)"

cat >"$T/esc.c" <<'EOF'
#define _GNU_SOURCE
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *decoy;

static void try_read(const char *how)
{
    char buf[64] = {0};
    int fd = open(decoy, O_RDONLY);
    if (fd >= 0 && read(fd, buf, sizeof(buf) - 1) > 0) printf("ESCAPED via %s: %s\n", how, buf);
    else printf("blocked: %s\n", how);
    if (fd >= 0) close(fd);
}

static void walk_out(const char *how)
{
    mkdir("/x", 0700);
    if (chroot("/x") < 0) { printf("blocked: %s (chroot: %m)\n", how); return; }
    for (int i = 0; i < 64; i++) if (chdir("..") < 0) break;
    chroot(".");
    try_read(how);
}

int main(int argc, char **argv)
{
    decoy = argv[1];
    try_read("host path");
    if (mount("tmpfs", "/", "tmpfs", 0, NULL) == 0) printf("ESCAPED via mount on /\n");
    else printf("blocked: mount (%m)\n");
    walk_out("chroot walk");
    if (unshare(CLONE_NEWUSER | CLONE_NEWNS) == 0) walk_out("new user namespace");
    else printf("blocked: unshare user (%m)\n");
    /* the root inode (2, generation 0 on ext4) of the filesystem "/" is on */
    struct { struct file_handle fh; unsigned char b[8]; } h = { .fh = { .handle_bytes = 8, .handle_type = 1 } };
    unsigned int ino[2] = { 2, 0 };
    memcpy(h.fh.f_handle, ino, 8);
    int fsroot = open_by_handle_at(open("/", O_RDONLY | O_DIRECTORY), &h.fh, O_RDONLY | O_DIRECTORY);
    if (fsroot >= 0 && chdir("/") == 0 && fchdir(fsroot) == 0) { decoy++; try_read("open_by_handle_at"); }
    else printf("blocked: open_by_handle_at (%m)\n");
    return 0;
}
EOF
build_static "$T/esc" "$T/esc.c"
echo "TOP-SECRET-DECOY" >"$T/decoy"

mkb base -- /usr/bin/brig-probe report || bail "cannot build the rootfs"
mkdir -p "$T/esc-ct" && mv "$T/base/rootfs" "$T/esc-ct/rootfs" && cp "$T/esc" "$T/esc-ct/rootfs/esc" ||
    bail "cannot build the bundle"
(cd "$T/esc-ct" && runc spec) || bail "runc spec"
cfg esc-ct '.process.args = ["/esc", $d] | .process.terminal = false | .root.readonly = false
            | .linux.cgroupsPath = "/brig-test/" + $id | .process.env += ["BRIG_IT_TAG=" + $id]
            | .linux.namespaces = [.linux.namespaces[] | select(.type != "mount")]
            | del(.mounts) | del(.linux.maskedPaths) | del(.linux.readonlyPaths)' \
    --arg d "$T/decoy" --arg id "$(cid esc-ct)"
keys_before=$(host_key_mounts)
run_ct esc-ct
check_eq "the hostile program ran in brig's mount namespace (exit 0)" "$RC" 0
check "it tried all five ways" test "$(grep -c '^blocked\|^ESCAPED' "$T/esc-ct.out")" -ge 5
check_not "no way out of the chroot reached the decoy" grep -q "ESCAPED" "$T/esc-ct.out"
check_not "the decoy's content is nowhere in its output" grep -q "TOP-SECRET" "$T/esc-ct.out"
check_eq "not one mount was added to the host" "$(host_key_mounts)" "$keys_before"
diag "$(cat "$T/esc-ct.out")"
assert_clean esc-ct

# The same program given a capability that leaves a chroot: refused.
for c in CAP_SYS_CHROOT CAP_SYS_ADMIN CAP_DAC_READ_SEARCH; do
    cfg esc-ct '.process.capabilities.bounding += [$c] | .process.capabilities.permitted += [$c]
                | .process.capabilities.effective += [$c]' --arg c "$c"
    run_ct esc-ct
    check_eq "with $c: refused with exit 1" "$RC" 1
    check "naming the bounding set" grep -qF "process.capabilities.bounding: CAP_SYS_CHROOT, CAP_SYS_ADMIN and CAP_DAC_READ_SEARCH (open_by_handle_at) would let the process leave root.path" "$T/esc-ct.err"
    check_not "and the program never ran" grep -q "blocked\|ESCAPED" "$T/esc-ct.out"
    grep -q "ESCAPED" "$T/esc-ct.out" && diag "with $c: $(grep ESCAPED "$T/esc-ct.out")"
    cfg esc-ct '.process.capabilities |= with_entries(.value -= [$c])' --arg c "$c"
done
# With mounts (made in brig's namespace, below a bind of the root that
# delete detaches): the same program, now with a /proc and a tmpfs, gets
# no further; while it runs, every mount it has is under its root.
cfg esc-ct '.mounts = [{destination: "/proc", type: "proc", source: "proc"},
                       {destination: "/tmp", type: "tmpfs", source: "tmpfs"}]'
create_ct esc-ct
check_eq "with /proc and a tmpfs to mount: created" "$RC" 0
check "... its mounts are in the host's table" test -n "$(mounts_under "$T/esc-ct/rootfs")"
check_eq "... all of them under its root: no other mount point appeared or changed" \
    "$(host_key_mounts "$T/esc-ct/rootfs")" "$keys_before"
b start "$(cid esc-ct)" >/dev/null 2>&1
wait_status "$(cid esc-ct)" stopped 10
check "it tried all five ways again" test "$(grep -c '^blocked\|^ESCAPED' "$T/esc-ct.out")" -ge 5
check_not "no way out of the chroot reached the decoy" grep -q "ESCAPED" "$T/esc-ct.out"
check_not "the decoy's content is nowhere in its output" grep -q "TOP-SECRET" "$T/esc-ct.out"
b delete "$(cid esc-ct)" >/dev/null 2>&1
check_eq "after delete, not one mount is left on the host" "$(mounts_under "$T")" ""
diag "$(cat "$T/esc-ct.out")"
assert_clean esc-ct

# Where the parent mount is shared (systemd makes "/" shared), what is
# attached there propagates to its peers: only the root's bind may reach
# them (it is made private at once), none of the container's mounts, and
# its copies go when delete detaches it. Played in a mount namespace of the
# test's own whose "/" is shared with a peer.
cat >"$T/peer.sh" <<'SH'
unshare -m --propagation unchanged sleep 60 & peer=$!
sleep 0.3
before=$(wc -l <"/proc/$peer/mountinfo")
"$BRIG" --root "$STATE" create --bundle "$T/esc-ct" "$ID" </dev/null >/dev/null 2>"$T/peer.err" || echo "create failed"
echo "during $(( $(wc -l <"/proc/$peer/mountinfo") - before )) $(awk -v r="$T/esc-ct/rootfs" 'index($5, r) == 1 { print $5 }' "/proc/$peer/mountinfo" | tr '\n' ' ')"
"$BRIG" --root "$STATE" delete --force "$ID" >/dev/null 2>>"$T/peer.err" || echo "delete failed"
echo "after $(( $(wc -l <"/proc/$peer/mountinfo") - before ))"
kill "$peer"
SH
CLEAN_IDS+=("$(cid esc-ct)")
out=$(BRIG=$BRIG STATE=$STATE T=$T ID=$(cid esc-ct) timeout 60 unshare -m --propagation shared bash "$T/peer.sh" 2>&1)
check_eq "a shared parent mount: its peer gets the root's bind only, while the container lives" \
    "$(grep '^during' <<<"$out")" "during 1 $T/esc-ct/rootfs "
check_eq "... and nothing after delete" "$(grep '^after' <<<"$out")" "after 0"
[ -z "$(grep 'failed' <<<"$out")" ] || diag "$out" "$(cat "$T/peer.err")"
assert_clean esc-ct

# A hostile image: /proc a symlink to the host's "/", /scratch one to a host
# directory. Without a mount namespace a mount that followed them would
# land on the host itself: refused (/proc), or made inside the root
# (/scratch: the link's target, made in the root).
mkdir -p "$T/host-dir"
rm -rf "$T/esc-ct/rootfs/proc"
ln -s / "$T/esc-ct/rootfs/proc"
ln -s "$T/host-dir" "$T/esc-ct/rootfs/scratch"
root_before=$(awk '$5 == "/" { print $0 }' /proc/self/mountinfo)
run_ct esc-ct
check_eq "/proc -> / in the image: refused with exit 1" "$RC" 1
check "... naming it" grep -qF "proc must be mounted on a directory, /proc is a symlink" "$T/esc-ct.err"
check_eq "... the host's / has no new mount" "$(awk '$5 == "/" { print $0 }' /proc/self/mountinfo)" "$root_before"
check_eq "... not one mount is left" "$(mounts_under "$T")" ""
assert_clean esc-ct
rm -f "$T/esc-ct/rootfs/proc" && mkdir "$T/esc-ct/rootfs/proc"
cfg esc-ct '.mounts[1].destination = "/scratch" | .process.args = ["/bin/sh", "-c", "echo in-tmpfs > /scratch/f && echo WROTE"]'
run_ct esc-ct
check_eq "/scratch -> a host directory: runs" "$RC" 0
[ "$RC" = 0 ] || diag "$(cat "$T/esc-ct.err" "$T/esc-ct.out")"
check "... the process wrote through it" grep -qx WROTE "$T/esc-ct.out"
check_eq "... the tmpfs was mounted inside the root, not on the host directory" "$(mounts_under "$T/host-dir")" ""
check_not "... and nothing was written there" test -e "$T/host-dir/f"
check "... the link's target was made inside the root" test -d "$T/esc-ct/rootfs$T/host-dir"
check_eq "... not one mount is left" "$(mounts_under "$T")" ""
assert_clean esc-ct
rm -f "$T/esc-ct/rootfs/scratch"

# ---- linux.memoryPolicy garbage: refused at once, naming the field ---------
cfg esc-ct 'del(.mounts) | .linux.namespaces += [{type: "mount"}] | .process.args = ["/esc", "/nonexistent"]'
for nodes in "0-18446744073709551615" "$(printf '0,%.0s' $(seq 1 30000))x" "4294967296" "1-0" "0--1" " 0" "0-+1"; do
    cfg esc-ct '.linux.memoryPolicy = {mode: "MPOL_BIND", nodes: $n}' --arg n "$nodes"
    start=$(date +%s)
    run_ct esc-ct
    check_eq "memoryPolicy.nodes \"${nodes:0:24}\": refused with exit 1" "$RC" 1
    check "naming linux.memoryPolicy.nodes" grep -qF "linux.memoryPolicy.nodes:" "$T/esc-ct.err"
    check "within 5 s (no loop over a huge range)" test $(( $(date +%s) - start )) -le 5
done
cfg esc-ct '.linux.memoryPolicy = {mode: "MPOL_BIND", nodes: "0", flags: ["MPOL_F_STATIC_NODES", 5]}'
run_ct esc-ct
check_eq "a flag that is not a string: refused with exit 1" "$RC" 1
check "naming the field" grep -qF "linux.memoryPolicy.flags[1]" "$T/esc-ct.err"
assert_clean esc-ct

# ---- crun's --config at a symlink to a secret, or at a fifo -----------------
cfg esc-ct 'del(.linux.memoryPolicy)'
ln -s "$T/decoy" "$T/esc-ct/link.json"
mkfifo "$T/esc-ct/fifo.json"
(cd "$T/esc-ct" && b run --config link.json "$(cid esc-ct)" </dev/null >"$T/cf.out" 2>"$T/cf.err"); rc=$?
check_eq "--config at a symlink to a secret: refused with exit 1" "$rc" 1
check_not "the secret is not echoed" grep -q "TOP-SECRET" "$T/cf.err" "$T/cf.out"
(cd "$T/esc-ct" && b run --config fifo.json "$(cid esc-ct)" </dev/null >"$T/cf.out" 2>"$T/cf.err"); rc=$?
check_eq "--config at a fifo: refused with exit 1, without blocking" "$rc" 1
check "naming it" grep -qF "fifo.json: not a regular file" "$T/cf.err"
assert_clean esc-ct
