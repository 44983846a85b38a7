#!/usr/bin/env bash
# Bind sources of a user-namespaced container must keep the host's locked
# mount flags. A source cloned by create (open_tree, to reach paths the
# namespace cannot) carries no kernel lock once moved in, so a container
# with CAP_SYS_ADMIN in its user namespace could remount a source the host
# keeps read-only writable. The attack: the host bind-mounts a directory
# read-only; the container (root in a user namespace, CAP_SYS_ADMIN) binds
# it without "ro", remounts it rw and writes. The write must fail.
# shellcheck source=tests/security/lib.sh
. "$(dirname "$0")/lib.sh"
it_init
command -v runc >/dev/null || skip_all "runc is not installed (bash scripts/setup.sh installs it)"

mkb base -- /usr/bin/brig-probe report || bail "cannot build the rootfs"
mkdir -p "$T/lock" "$T/rosrc" && mv "$T/base/rootfs" "$T/lock/rootfs" &&
    chown -R 100000:100000 "$T/lock/rootfs" "$T/rosrc" || bail "cannot build the bundle"
mount --bind "$T/rosrc" "$T/rosrc" && mount -o remount,bind,ro "$T/rosrc" || bail "cannot make the read-only source"
(cd "$T/lock" && runc spec) || bail "runc spec"
cfg lock '.process.terminal = false | .linux.cgroupsPath = "/brig-test/" + $id | .process.env += ["BRIG_IT_TAG=" + $id]
          | .process.args = ["/bin/busybox", "sh", "-c", "busybox mount -o remount,rw,bind /data; busybox touch /data/pwned && echo WROTE || echo BLOCKED"]
          | .linux.namespaces += [{type: "user"}]
          | .linux.uidMappings = [{containerID: 0, hostID: 100000, size: 65536}]
          | .linux.gidMappings = [{containerID: 0, hostID: 100000, size: 65536}]
          | .process.capabilities |= with_entries(.value += ["CAP_SYS_ADMIN"])
          | .mounts += [{destination: "/data", type: "bind", source: $s, options: ["rbind"]}]' \
    --arg s "$T/rosrc" --arg id "$(cid lock)"
run_ct lock
check_eq "the container ran (exit 0)" "$RC" 0
check "its write to the host's read-only source failed" grep -qx "BLOCKED" "$T/lock.out"
check_not "nothing was written on the host" test -e "$T/rosrc/pwned"
assert_clean lock
umount "$T/rosrc" 2>/dev/null
