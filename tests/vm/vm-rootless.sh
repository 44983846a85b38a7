#!/bin/bash
# Runs inside the test VM (pure cgroup v2, every controller): a rootless brig sandbox
# (docs/rootless.md) in a cgroup subtree delegated to an unprivileged test user the way
# systemd delegates user@UID.service: the directory and its cgroup.procs,
# cgroup.subtree_control and cgroup.threads the user's, the controllers enabled above it
# by root, the user's processes in a leaf below it. Each check asserts what the kernel did:
#   a policy that requires its limits runs there, limits_applied true, its cgroup below the
#   delegated one;
#   memory: 64 MiB under a 32 MiB limit is OOM-killed, reported (oom_killed, limits_hit);
#   pids: a fork bomb is held at the policy's pids (EAGAIN, pids_peak within the limit);
#   the same brig outside the subtree is refused, naming the missing delegation;
#   nothing is left below the delegated cgroup.
# Usage: vm-rootless.sh BRIG BRIG_INIT BRIG_PROBE   (TAP; busybox-static, jq, setpriv and
# useradd come from the host's / that the VM shares)
set -u
BRIG=$1 INIT=$2 PROBE=$3
W=/tmp/brig-vm-rl
. "$(dirname "$0")/tap.sh"
bail() { echo "Bail out! $*"; exit 1; }

U=brigvm
cleanup() {
    [ -n "${LEAF:-}" ] && rmdir "$LEAF" 2>/dev/null
    echo "1..$N"
}
trap cleanup EXIT

rm -rf "$W"; mkdir -p "$W/bin" "$W/ws" "$W/xdg" "$W/home"
useradd -M -d "$W/home" -s /bin/sh "$U" >/dev/null 2>&1 || bail "useradd $U failed"
UID_=$(id -u "$U") GID_=$(id -g "$U")
cp "$BRIG" "$W/bin/brig" && cp "$INIT" "$W/bin/brig-init" && chmod 0755 "$W" "$W/bin" "$W/bin/"* ||
    bail "cannot copy brig"
chown "$UID_:$GID_" "$W/xdg" "$W/home" && chmod 0700 "$W/xdg"
# The workspace on a filesystem within workspace.maxSize (a rootless brig does not stage).
mount -t tmpfs -o size=16m,mode=0700,uid="$UID_",gid="$GID_" brig-vm-ws "$W/ws" || bail "mount the workspace"

# The rootfs: busybox and the probe, readable by the user.
R=$W/rootfs
for d in bin usr/bin etc proc sys dev tmp var/tmp workspace; do mkdir -p "$R/$d"; done
cp /bin/busybox "$R/bin/busybox" && cp "$PROBE" "$R/usr/bin/brig-probe" || bail "rootfs"
for a in sh dd sleep cat echo true; do ln -s busybox "$R/bin/$a"; done
echo 'root:x:0:0:root:/root:/bin/sh' >"$R/etc/passwd"
echo 'root:x:0:' >"$R/etc/group"
chmod -R a+rX "$R"

# The delegation, as systemd makes it for user@UID.service (Delegate=yes).
CG=/sys/fs/cgroup
D=user.slice/user-$UID_.slice/user@$UID_.service
mkdir -p "$CG/$D" || bail "mkdir $CG/$D"
for p in "" user.slice "user.slice/user-$UID_.slice"; do
    echo "+memory +pids +cpu" >"$CG/$p/cgroup.subtree_control" || bail "enable the controllers in /$p"
done
chown "$UID_:$GID_" "$CG/$D" "$CG/$D/cgroup.procs" "$CG/$D/cgroup.subtree_control" "$CG/$D/cgroup.threads" ||
    bail "chown the delegated cgroup"
# The user's leaf (its manager's init.scope, here made by the user itself).
setpriv --reuid="$UID_" --regid="$GID_" --init-groups -- mkdir "$CG/$D/init.scope" || bail "the user's leaf"
LEAF=$CG/$D/init.scope

POL=$W/limits.json
"$BRIG" policy show agent | jq '.name = "agent-vm" | .limits = {memory: "32MiB", swap: "0", pids: 16, cpus: "1"}' \
    >"$POL" && chmod 0644 "$POL" || bail "the policy"

# sb IN_LEAF ARGS...: a rootless sandbox run as the user, from its leaf (1) or from
# the root cgroup (0); the JSON result in $W/out.json, status RC.
sb() {
    local leaf=$1; shift
    sh -c '[ "$1" = 0 ] || echo $$ >"$2/cgroup.procs" || exit 99; shift 2; exec "$@"' sh "$leaf" "$LEAF" \
        setpriv --reuid="$UID_" --regid="$GID_" --init-groups --inh-caps=-all -- \
        env -i PATH=/usr/bin:/bin HOME="$W/home" XDG_RUNTIME_DIR="$W/xdg" \
        timeout -k 5 200 "$W/bin/brig" "$@" >"$W/out.json" 2>"$W/err.txt"
    RC=$?
}
j() { jq -r "$1" "$W/out.json" 2>/dev/null; }
diag "kernel $(uname -r); delegated to uid $UID_: /$D ($(cat "$CG/$D/cgroup.controllers"))"

# ---- limits required, in the delegated subtree ---------------------------------------
sb 1 --debug sandbox run --policy "$POL" --rootfs "$R" --workspace "$W/ws" --json -- \
    sh -c 'cat /proc/self/cgroup; echo ok > /workspace/f'
check_eq "limits required, in the delegated subtree: exit 0" "$RC" 0
[ "$RC" = 0 ] || diag "out: $(head -c 600 "$W/out.json")" "err: $(grep -v "expected a boolean" "$W/err.txt" | tail -n 8)"
check_eq "... limits_applied" "$RC:$(j .limits_applied)" 0:true
check "... its cgroup was made below the delegated one" grep -qF "/$D/" "$W/err.txt"
check_eq "... the workspace written as the user" "$(stat -c %u "$W/ws/f" 2>/dev/null)" "$UID_"

# ---- memory: OOM kill ----------------------------------------------------------------
sb 1 sandbox run --policy "$POL" --rootfs "$R" --workspace "$W/ws" --json -- \
    dd if=/dev/zero of=/dev/null bs=64M count=1
check_eq "memory: 64 MiB under 32 MiB: killed (137), oom_killed" "$RC:$(j .oom_killed)" "137:true"
check "memory: limits_hit names limits.memory" jq -e '.limits_hit | index("limits.memory")' "$W/out.json"

# ---- pids: a fork bomb held ----------------------------------------------------------
sb 1 sandbox run --policy "$POL" --rootfs "$R" --workspace "$W/ws" --json -- /usr/bin/brig-probe fork-bomb 100
P=$(j .stdout.preview_head | grep '^{' | tail -n 1)
check_eq "pids: the fork bomb is refused (EAGAIN)" "$(jq -r .result <<<"$P" 2>/dev/null)" EAGAIN
check "pids: fewer than 16 forks went through ($(jq -r .forked <<<"$P" 2>/dev/null))" \
    test "$(jq -r '.forked // 99' <<<"$P" 2>/dev/null)" -lt 16
pk=$(j .pids_peak)
if [ "$pk" = null ]; then
    N=$((N + 1)); echo "ok $N - pids: pids_peak within the limit # SKIP this kernel has no pids.peak"
else
    check "pids: pids_peak within the limit ($pk)" test "${pk:-99}" -le 16
fi

# ---- outside the subtree: refused ------------------------------------------------------
sb 0 sandbox run --policy "$POL" --rootfs "$R" --workspace "$W/ws" --json -- true
check_eq "outside the delegated subtree: refused (125)" "$RC" 125
check "... naming the missing delegation" bash -c "jq -r .error '$W/out.json' | grep -qF 'is in no cgroup v2 subtree delegated to uid $UID_'"

check_eq "no sandbox's cgroup left below the delegated one" "$(find "$CG/$D" -mindepth 1 -type d -name 'sb-*')" ""
[ $FAILED = 0 ]
