#!/usr/bin/env bash
# linux.resources and cgroupsPath on this host's cgroup layout: limits are
# written where asked, enforced, unsupported requests fail closed, and the
# cgroup (and every process in it) is gone after delete.
# shellcheck disable=SC2016  # jq filters are single-quoted on purpose
. "$(dirname "$0")/lib.sh"
it_init

# cg_file CTRL ID FILE: the file in the container's cgroup for a v1
# controller (hybrid hosts), or in the unified hierarchy on a pure v2 host.
cg_file() {
    if [ -d "/sys/fs/cgroup/$1/brig-test/$2" ]; then
        echo "/sys/fs/cgroup/$1/brig-test/$2/$3"
    else
        echo "/sys/fs/cgroup/brig-test/$2/$4"
    fi
}
[ -d /sys/fs/cgroup/memory ] || [ -f /sys/fs/cgroup/cgroup.controllers ] ||
    skip_all "no cgroup memory controller mounted"

# ---- limits are written --------------------------------------------------------
mkb lim -- /usr/bin/brig-probe sleep 60 || bail "cannot build a bundle"
cfg lim '.linux.resources = {memory: {limit: 67108864}, pids: {limit: 50}, cpu: {shares: 512}}'
ID=$(cid lim)
create_ct lim
check_eq "create with resources succeeds" "$RC" 0
[ "$RC" = 0 ] || diag "$(cat "$T/lim.err")"
start_ct lim >/dev/null 2>&1
check_eq "memory limit is 64 MiB" "$(cat "$(cg_file memory "$ID" memory.limit_in_bytes memory.max)" 2>/dev/null)" 67108864
check_eq "pids limit is 50" "$(cat "$(cg_file pids "$ID" pids.max pids.max)" 2>/dev/null)" 50
f=$(cg_file cpu "$ID" cpu.shares cpu.weight)
if [ "${f##*/}" = cpu.shares ]; then
    check_eq "cpu shares are 512" "$(cat "$f" 2>/dev/null)" 512
else
    check "cpu.weight was set from shares" test -s "$f"
fi
PID=$(state_field "$ID" pid)
check "the init is in the memory cgroup" grep -qE "(memory|^0:):/brig-test/$ID\$" "/proc/${PID:-0}/cgroup"
b delete --force "$ID" >/dev/null 2>&1
assert_clean lim

# ---- pids.limit is enforced ------------------------------------------------------
mkb pids -- /usr/bin/brig-probe fork-bomb 40 || true
cfg pids '.linux.resources = {pids: {limit: 10}}'
run_ct pids
check_probe "a fork bomb stops at the pids limit" pids '.forked < 40 and .forked >= 1'
check_probe "... with EAGAIN" pids '.result == "EAGAIN"'
assert_clean pids

# ---- unsupported requests fail closed --------------------------------------------
# On a hybrid host, memory is a v1 controller: a unified (v2) key for it
# cannot be honoured and must not be ignored.
if [ -d /sys/fs/cgroup/memory ] && ! grep -qw memory /sys/fs/cgroup/unified/cgroup.controllers 2>/dev/null; then
    mkb unified -- /usr/bin/brig-probe sleep 60 || true
    cfg unified '.linux.resources = {unified: {"memory.max": "100000000"}}'
    create_ct unified
    check "linux.resources.unified memory.max on a v1 memory controller is refused" test "$RC" -ne 0
    check "... naming linux.resources.unified" grep -q "linux.resources.unified" "$T/unified.err"
    check_refused "... and the container does not exist" "does not exist" 1 b state "$(cid unified)"
    assert_clean unified
else
    skip "unified memory.max refused on a v1 memory controller" "memory is a v2 controller here"
fi

mkb rt -- /usr/bin/brig-probe sleep 60 || true
cfg rt '.linux.resources = {cpu: {realtimeRuntime: 999999999999, realtimePeriod: 1000000}}'
create_ct rt
if [ "$RC" -ne 0 ]; then
    check "an impossible cpu.rt_runtime is refused with a message" test -s "$T/rt.err"
else
    not_ok "an impossible cpu.rt_runtime is refused" "create succeeded"
fi
b delete --force "$(cid rt)" >/dev/null 2>&1
assert_clean rt

# ---- delete removes every process of the cgroup ----------------------------------
# Without a pid namespace, killing the init leaves its children alive unless
# the runtime kills the whole cgroup.
mkb orphan -- /bin/sh -c '/bin/sleep 300 & exec /usr/bin/brig-probe sleep 300' || true
cfg orphan '.linux.namespaces |= map(select(.type != "pid"))'
ID=$(cid orphan)
create_ct orphan
start_ct orphan >/dev/null 2>&1
n=50; while [ "$(tagged_pids "$ID" | wc -l)" -lt 2 ] && [ $n -gt 0 ]; do sleep 0.1; n=$((n - 1)); done
check "the container runs a child beside its init" test "$(tagged_pids "$ID" | wc -l)" -ge 2
b kill "$ID" KILL >/dev/null 2>&1
wait_status "$ID" stopped 10
check "delete succeeds" b delete "$ID"
sleep 0.2
assert_clean orphan
