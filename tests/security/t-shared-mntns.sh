#!/usr/bin/env bash
# A container without a mount namespace of its own (no "mount" in
# linux.namespaces, which the spec says inherits the runtime's) is in the
# host's mount table: its root is only a chroot into root.path. The hostile
# program below, run as root with runc spec's capabilities, tries every way
# out of a chroot: the classic chroot-in-chroot walk, a new user namespace
# (full capabilities there, chroot included), mounting, and reaching the
# decoy by its host path. None may read the decoy or add a mount to the
# host. The configs that would hand it the way out (CAP_SYS_CHROOT,
# CAP_SYS_ADMIN, any mount) are refused at create. Also: linux.memoryPolicy
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
mounts_before=$(wc -l </proc/self/mountinfo)
run_ct esc-ct
check_eq "the hostile program ran in brig's mount namespace (exit 0)" "$RC" 0
check "it tried all five ways" test "$(grep -c '^blocked\|^ESCAPED' "$T/esc-ct.out")" -ge 5
check_not "no way out of the chroot reached the decoy" grep -q "ESCAPED" "$T/esc-ct.out"
check_not "the decoy's content is nowhere in its output" grep -q "TOP-SECRET" "$T/esc-ct.out"
check_eq "not one mount was added to the host" "$(wc -l </proc/self/mountinfo)" "$mounts_before"
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
# A mount in that namespace would land on the host: refused, nothing mounted.
cfg esc-ct '.mounts = [{destination: "/proc", type: "proc", source: "proc"}]'
run_ct esc-ct
check_eq "a mount without a mount namespace: refused with exit 1" "$RC" 1
check_eq "nothing mounted on the host" "$(wc -l </proc/self/mountinfo)" "$mounts_before"
assert_clean esc-ct

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
