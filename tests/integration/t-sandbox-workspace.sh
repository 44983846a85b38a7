#!/usr/bin/env bash
# Workspaces owned by anyone (docs/sandbox.md, "--workspace"): the
# workspace is bound idmapped, its owner on the host being the policy's
# user inside (uid 1000 for agent), and what the command makes there is
# the owner's on the host. As a worker meets it, with no chown: a
# workspace of a fresh uid, of root, and of the caller (nobody), each
# written by `sandbox run` and by an exec into a long-lived sandbox; a
# file the worker put there is the command's to change; a file of another
# host user stays someone else's (nobody inside, not writable). On a
# filesystem that cannot be idmapped (ramfs) the run is refused before
# anything ran, naming the fix, instead of running with a workspace the
# command cannot write.
# shellcheck source=tests/integration/lib.sh
. "$(dirname "$0")/lib.sh"
it_init
ROOTFS=$T/rootfs
mkdir -p "$ROOTFS"/{bin,dev,proc,sys,tmp,var/tmp,workspace,etc} && cp /bin/busybox "$ROOTFS/bin/" || bail "rootfs"
for a in sh true cat ls stat touch mkdir id; do ln -s busybox "$ROOTFS/bin/$a"; done
SB_STATE=$T/sbstate
sbx() { timeout -k 5 60 "$BRIG" sandbox "$1" --state-root "$SB_STATE" "${@:2}"; }
j() { jq -r "$1" "$T/out.json" 2>/dev/null; }
NAME=ws-$TAG
trap 'rc=$?; sbx rm --force "$NAME" >/dev/null 2>&1; (exit $rc); it_finish' EXIT
write='set -e; touch /workspace/new; mkdir /workspace/dir; echo changed > /workspace/given;
       stat -c "%u:%g" /workspace /workspace/new; cat /workspace/given'

for owner in 43210:43211 0:0 65534:65534; do
    ws=$T/ws-${owner%%:*}
    mkdir -p "$ws" && echo given > "$ws/given" && chown -R "$owner" "$ws"
    sbx run --json --rootfs "$ROOTFS" --workspace "$ws" --env "BRIG_IT_TAG=$TAG-sb" -- sh -c "$write" \
        > "$T/out.json" 2>> "$T/brig.err"
    check_eq "run, workspace of $owner: the command writes it (exit 0)" "$(j .exit_status)" 0 ||
        diag "$(cat "$T/out.json")"
    check_eq "run, workspace of $owner: inside, it is the policy's user's (1000)" \
        "$(j .stdout.preview_head)" "$(printf '1000:1000\n1000:1000\nchanged')"
    check_eq "run, workspace of $owner: on the host, what it made is $owner's" \
        "$(stat -c %u:%g "$ws/new" "$ws/dir" "$ws/given" | sort -u)" "$owner"
done

# a long-lived sandbox: create, then execs with brig gone in between
ws=$T/ws-43210
sbx create --rootfs "$ROOTFS" --workspace "$ws" --env "BRIG_IT_TAG=$TAG-sb" "$NAME" > /dev/null
check_eq "create on a workspace of 43210: exit 0" "$?" 0
sbx exec --json "$NAME" -- sh -c 'echo x > /workspace/from-exec && id -u' > "$T/out.json" 2>> "$T/brig.err"
check_eq "exec: the command writes the workspace as 1000" "$(j .stdout.preview_head)" 1000
check_eq "exec: on the host the file is 43210's" "$(stat -c %u:%g "$ws/from-exec")" 43210:43211
sbx rm --force "$NAME" > /dev/null

# a file of another host user: someone else's inside too
ws=$T/ws-0
echo theirs > "$ws/other" && chown 43999:43999 "$ws/other" && chmod 0644 "$ws/other"
sbx run --json --rootfs "$ROOTFS" --workspace "$ws" -- sh -c 'stat -c %u /workspace/other; echo no >> /workspace/other' \
    > "$T/out.json" 2>> "$T/brig.err"
check_eq "another host user's file: nobody's inside (65534)" "$(j .stdout.preview_head)" 65534
check "another host user's file: the command cannot write it" grep -q "Permission denied" <<<"$(j .stderr.preview_head)"
check_eq "another host user's file: unchanged on the host" "$(cat "$ws/other")" theirs

# a filesystem that cannot be idmapped: refused, nothing ran, the fix named
mkdir -p "$T/ramfs" && mount -t ramfs none "$T/ramfs" || bail "cannot mount a ramfs"
mkdir "$T/ramfs/ws"
sbx run --json --rootfs "$ROOTFS" --workspace "$T/ramfs/ws" --env "BRIG_IT_TAG=$TAG-sb" -- touch /workspace/x \
    > "$T/out.json" 2>> "$T/brig.err"
check_eq "a workspace on ramfs: exit 125" "$?" 125
check "a workspace on ramfs: refused, naming it and the fix" \
    grep -qF "the filesystem of source $T/ramfs/ws cannot be idmapped (mount_setattr MOUNT_ATTR_IDMAP): use a directory on one that can" \
    <<<"$(j .error)" || diag "$(cat "$T/out.json")"
check_eq "a workspace on ramfs: nothing ran" "$(j .ran)" false
check_not "a workspace on ramfs: nothing written" test -e "$T/ramfs/ws/x"
umount "$T/ramfs"
check_eq "nothing of the sandboxes left" "$(tagged_pids "$TAG-sb" | tr '\n' ' ')" ""
check_eq "no state left" "$(ls "$SB_STATE" 2>/dev/null | grep -v '^\.' | tr '\n' ' ')" ""
