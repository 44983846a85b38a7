#!/usr/bin/env bash
# create's cleanup when the cleanup itself meets trouble: a
# createRuntime hook fails create after putting a process of its own into
# the container's cgroup, in one v1 hierarchy only (memory), so that the
# container's pid list (v2 on this host, or the pids hierarchy) does not
# show it and the rollback's rmdir of that cgroup is busy. brig must report
# the hook's error (the first one), kill what is in the cgroups it made,
# remove them, its state dir and its mounts, and leave nothing that blocks
# a later create or delete of the same id. Then the same with a process the
# rollback cannot kill (stopped by a frozen v1 freezer that is not the
# container's): the cgroup it holds cannot be removed, which brig reports
# by name, while everything else is still removed; once the process is
# gone, the id works again. Last, a state dir the rollback cannot remove
# (a mount over it): reported, the rest undone.
# shellcheck source=tests/integration/lib.sh disable=SC2016  # jq filters are single-quoted on purpose
. "$(dirname "$0")/lib.sh"
it_init

[ -d /sys/fs/cgroup/memory ] || skip_all "no v1 memory hierarchy: the busy-cgroup case needs one"

# the hook: a sleep of its own (tagged, to be found from here) moved into
# the container's memory cgroup only (the path is its cgroupsPath), then a
# failure. $1: the container id; $2 (optional): a foreign freezer cgroup
# to put the sleep in and freeze.
cat > "$T/hook.sh" <<'SH'
#!/bin/sh
cat >/dev/null
BRIG_IT_TAG=$1 sleep 300 </dev/null >/dev/null 2>&1 &
echo $! > "/sys/fs/cgroup/memory/brig-test/$1/cgroup.procs" || exit 9
echo $! > "$(dirname "$0")/hook-$1.pid"
if [ -n "${2:-}" ]; then
    echo $! > "$2/cgroup.procs" && echo FROZEN > "$2/freezer.state" || exit 9
fi
echo "hook: refusing on purpose" >&2
exit 3
SH
chmod 0755 "$T/hook.sh"

# left ID: what of ID remains on the host, one line per kind (empty: none)
left() {
    local id=$1 c
    local pids; pids=$(tagged_pids "$id" | tr '\n' ' ')
    [ -z "$pids" ] || echo "processes: $pids"
    [ ! -e "$STATE/$id" ] || echo "state dir: $STATE/$id"
    local m; m=$(mounts_under "$T/${id#"$TAG-"}")
    [ -z "$m" ] || echo "mounts: $m"
    for c in /sys/fs/cgroup/*/brig-test/"$id"; do
        [ ! -d "$c" ] || echo "cgroup: $c"
    done
}

# ---- a busy cgroup: killed and removed -------------------------------------
mkb busy -- /usr/bin/brig-probe sleep 60 || true
id=$(cid busy)
cfg busy '.hooks.createRuntime = [{path: $h, args: ["hook.sh", $id]}]' --arg h "$T/hook.sh" --arg id "$id"
create_ct busy
# the hook's error, not the cleanup's: brig's wording, exit 1
check_refused_rc "a failing createRuntime hook fails create, with the hook's error (the first one)" \
    "create $id: hooks.createRuntime[0] ($T/hook.sh): exited with status 3" 1 "$RC" "$T/busy.err"
hook_pid=$(cat "$T/hook-$id.pid" 2>/dev/null)
check "the hook's process did join the container's memory cgroup" test -n "$hook_pid"
check_eq "nothing of the container is left (process in the memory cgroup killed, cgroups removed)" \
    "$(left "$id")" ""
check "delete --force of the id afterwards succeeds" b delete --force "$id"
cfg busy '.hooks = {}'
create_ct busy
check_eq "a new create with the same id succeeds" "$RC" 0
b delete --force "$id" >/dev/null 2>&1
assert_clean busy

# ---- a cgroup that cannot be removed: reported, the rest still undone ------
F=/sys/fs/cgroup/freezer/brig-test/$TAG-foreign
# A frozen process outlives every kill: thaw it whatever happens.
trap 'rc=$?; echo THAWED > "$F/freezer.state" 2>/dev/null; (exit $rc); it_finish' EXIT
if [ ! -d /sys/fs/cgroup/freezer ] || ! mkdir -p "$F"; then
    skip "an unkillable process in the cgroup" "no v1 freezer hierarchy"
else
    # busy's bundle again (brig-mkbundle takes long on a loaded machine),
    # with stuck's id in its cgroup path and tag
    id=$(cid stuck)
    cp -a "$T/busy" "$T/stuck"
    cfg stuck '.linux.cgroupsPath = "/brig-test/" + $id | .process.env |= map(if startswith("BRIG_IT_TAG=") then "BRIG_IT_TAG=" + $id else . end)' --arg id "$id"
    cfg stuck '.hooks.createRuntime = [{path: $h, args: ["hook.sh", $id, $f]}]' \
        --arg h "$T/hook.sh" --arg id "$id" --arg f "$F"
    create_ct stuck
    check_refused_rc "create fails when its cleanup cannot remove a cgroup, with the hook's error" \
        "create $id: hooks.createRuntime[0] ($T/hook.sh): exited with status 3" 1 "$RC" "$T/stuck.err"
    if grep -qF "create $id: cleanup: cgroup: rmdir /sys/fs/cgroup/memory/brig-test/$id: Device or resource busy" "$T/stuck.err"; then
        ok "... and the cgroup left behind is reported by path"
    else
        not_ok "... and the cgroup left behind is reported by path" "stderr: $(head -c 2000 "$T/stuck.err")"
    fi
    got=$(left "$id" | grep -v "^processes: $(cat "$T/hook-$id.pid" 2>/dev/null) \$" \
          | grep -v "^cgroup: /sys/fs/cgroup/memory/brig-test/$id\$")
    check_eq "everything else is removed (state dir, mounts, the init, other cgroups)" "$got" ""
    # The frozen process holds the cgroup; thawed, it dies of the SIGKILL
    # the rollback sent it. Then the id is free again.
    echo THAWED > "$F/freezer.state"
    pid=$(cat "$T/hook-$id.pid" 2>/dev/null)
    n=50
    while [ -n "$pid" ] && [ -d "/proc/$pid" ] && [ $n -gt 0 ]; do sleep 0.1; n=$((n - 1)); done
    check "the thawed process died of the rollback's SIGKILL" test ! -d "/proc/$pid"
    check "delete --force of the id succeeds" b delete --force "$id"
    cfg stuck '.hooks = {}'
    create_ct stuck
    check_eq "a new create with the same id succeeds" "$RC" 0
    check "... and its delete works" b delete --force "$id"
    [ -n "$pid" ] && kill -9 "$pid" 2>/dev/null
    rmdir "/sys/fs/cgroup/memory/brig-test/$id" 2>/dev/null
    rmdir "$F" 2>/dev/null
    assert_clean stuck
fi

# ---- a state dir that cannot be removed: reported, the rest still undone ---
# The hook mounts over the container's state dir (brig never unmounts what
# it did not mount): the state dir stays, named in the warning; its
# cgroups and processes are gone; once the mount is gone, delete --force
# clears the id and it can be created again.
cat > "$T/hook-mnt.sh" <<'SH'
#!/bin/sh
cat >/dev/null
mount -t tmpfs brig-test-undo "$2/$1" || exit 9
exit 3
SH
chmod 0755 "$T/hook-mnt.sh"
id=$(cid mnt)
cp -a "$T/busy" "$T/mnt"
cfg mnt '.linux.cgroupsPath = "/brig-test/" + $id | .process.env |= map(if startswith("BRIG_IT_TAG=") then "BRIG_IT_TAG=" + $id else . end)
         | .hooks.createRuntime = [{path: $h, args: ["hook-mnt.sh", $id, $s]}]' \
    --arg id "$id" --arg h "$T/hook-mnt.sh" --arg s "$STATE"
create_ct mnt
check_refused_rc "create fails when its cleanup cannot remove the state dir, with the hook's error" \
    "create $id: hooks.createRuntime[0] ($T/hook-mnt.sh): exited with status 3" 1 "$RC" "$T/mnt.err"
check "... and the state dir left behind is reported" \
    grep -qF "create $id: cleanup: container $id: remove state: rmdir $id: Device or resource busy" "$T/mnt.err"
got=$(left "$id" | grep -v "^state dir: $STATE/$id\$")
check_eq "everything else is removed (processes, cgroups)" "$got" ""
umount "$STATE/$id"
check "once the mount is gone, delete --force clears the id" b delete --force "$id"
cfg mnt '.hooks = {}'
create_ct mnt
check_eq "... and a new create with the same id succeeds" "$RC" 0
b delete --force "$id" >/dev/null 2>&1
assert_clean mnt
