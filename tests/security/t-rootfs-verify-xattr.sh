#!/usr/bin/env bash
# A verified tree whose binary gained file capabilities (or an ACL, or any
# extended attribute) must fail `brig-rootfs verify`, in full as well as
# with --quick: a setcap changes no byte, size, mode or mtime, so a full
# check that compared only those and the content passed it. The full check
# is the quick one (types, modes, owners, sizes, mtimes, any ctime after the
# manifest's) plus each file's content and each entry's extended
# attributes, recorded in the manifest. Use side: the untouched tree, and
# the tree once its manifest is written again, verify clean.
# shellcheck source=tests/security/lib.sh
. "$(dirname "$0")/lib.sh"
it_init
BR=${BRIG_ROOTFS:?}

R=$T/tree
busybox_rootfs "$R" sh ping
mkdir -p "$R/etc/app" && echo conf > "$R/etc/app/app.conf" || bail "cannot make the tree"

# setx PATH NAME HEX: an extended attribute, set by the kernel's own call
# (no setcap/setfacl needed: the attack is the xattr, not the tool)
setx() {
    python3 -c 'import os, sys; os.setxattr(sys.argv[1], sys.argv[2], bytes.fromhex(sys.argv[3]), follow_symlinks=False)' "$@"
}
# security.capability: VFS_CAP_REVISION_2 | effective, permitted CAP_NET_RAW (13)
CAP=$(python3 -c 'import struct; print(struct.pack("<IIIII", 0x02000001, 1 << 13, 0, 0, 0).hex())')
# system.posix_acl_access: user::rw- user:4242:rwx group::r-- mask::r-- other::r--
# (the mask keeps the mode as it was: only the ACL shows the grant)
ACL=$(python3 -c 'import struct; print((struct.pack("<I", 2) + b"".join(struct.pack("<HHI", *e) for e in [(1, 6, 0xffffffff), (2, 7, 4242), (4, 4, 0xffffffff), (0x10, 4, 0xffffffff), (0x20, 4, 0xffffffff)])).hex())')

fresh() { check "$1: verify --write" "$BR" verify --write "$R"; }
clean() {
    check "$1: full verify is clean" "$BR" verify "$R"
    check "$1: verify --quick is clean" "$BR" verify --quick "$R"
}
# caught DESC PATH WHAT: both checks exit 1 and name PATH (the full one WHAT)
caught() {
    local out rc
    out=$("$BR" verify "$R" 2>&1); rc=$?
    if [ $rc = 1 ] && grep -qF "changed $2: $3" <<<"$out"; then ok "$1: full verify fails, naming $2 ($3)"
    else not_ok "$1: full verify fails, naming $2" "exit $rc" "$out"; fi
    out=$("$BR" verify --quick "$R" 2>&1); rc=$?
    if [ $rc = 1 ] && grep -qF "changed $2:" <<<"$out"; then ok "$1: verify --quick fails, naming $2"
    else not_ok "$1: verify --quick fails, naming $2" "exit $rc" "$out"; fi
}

fresh "the tree"
clean "untouched"
setx "$R/bin/busybox" security.capability "$CAP"
caught "file capabilities on a verified binary" /bin/busybox "extended attributes"
getcap "$R/bin/busybox" 2>/dev/null | grep -q cap_net_raw && diag "the binary has: $(getcap "$R/bin/busybox")"

fresh "with the capability recorded"
check "the manifest records it (format 2)" grep -qx '# brig-rootfs manifest 2' "$T/tree.manifest"
clean "recorded"
python3 -c 'import os, sys; os.removexattr(sys.argv[1], "security.capability")' "$R/bin/busybox"
caught "the capability removed" /bin/busybox "extended attributes"

fresh "again"
setx "$R/etc/app/app.conf" system.posix_acl_access "$ACL"
caught "an ACL granting another user access (mode unchanged)" /etc/app/app.conf "extended attributes"

fresh "again"
setx "$R/etc/app" user.brig-test 01
caught "a user xattr on a directory" /etc/app "extended attributes"

# the content rewritten with size and mtime restored: the hash and the
# ctime both say so
fresh "again"
cp -p "$R/etc/app/app.conf" "$T/ref" && echo CONF > "$R/etc/app/app.conf" && touch -r "$T/ref" "$R/etc/app/app.conf"
caught "content rewritten, size and mtime restored" /etc/app/app.conf "content (sha256)"

# a manifest of format 1 (no xattrs column, as older brig-rootfs wrote)
# still reads: a tree without xattrs verifies against it
rm -f "$R/etc/app/app.conf" && echo conf > "$R/etc/app/app.conf"
python3 -c 'import os, sys; os.removexattr(sys.argv[1], "user.brig-test")' "$R/etc/app" 2>/dev/null
python3 -c 'import os, sys; os.removexattr(sys.argv[1], "system.posix_acl_access")' "$R/etc/app/app.conf" 2>/dev/null
fresh "without any xattr"
check "... the manifest is format 1" grep -qx '# brig-rootfs manifest 1' "$T/tree.manifest"
clean "format 1"
