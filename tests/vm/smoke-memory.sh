#!/bin/sh
# Runs inside the test VM: memory.max is enforced. A 64 MiB allocation in a cgroup with
# memory.max=32M and no swap is OOM-killed and counted in memory.events; an 8 MiB one in
# the same cgroup succeeds (so the kill is the limit's doing, not the helper's).
set -eu
helper=$1
cg=/sys/fs/cgroup/smoke-memory

# Run the helper as a member of the cgroup: the shell joins, then execs it.
in_cgroup() {
    sh -c 'echo $$ >"$1/cgroup.procs" && shift && exec "$@"' sh "$cg" "$@"
}

mkdir "$cg"
trap 'rmdir "$cg" 2>/dev/null || true' EXIT
echo 32M >"$cg/memory.max"
echo 0 >"$cg/memory.swap.max"
echo "memory.max=$(cat "$cg/memory.max") memory.swap.max=$(cat "$cg/memory.swap.max")"
[ "$(cat "$cg/memory.max")" = 33554432 ] || { echo "FAIL: memory.max not set"; exit 1; }

in_cgroup "$helper" alloc 8 || { echo "FAIL: 8 MiB under a 32M limit failed ($?)"; exit 1; }

rc=0
in_cgroup "$helper" alloc 64 || rc=$?
echo "alloc 64 exited with $rc"
oom_kill=$(awk '$1 == "oom_kill" { print $2 }' "$cg/memory.events")
echo "memory.events oom_kill=$oom_kill"
[ "$rc" = 137 ] || { echo "FAIL: 64 MiB under a 32M limit was not SIGKILLed"; exit 1; }
[ "$oom_kill" -ge 1 ] || { echo "FAIL: memory.events shows no oom_kill"; exit 1; }
echo PASS
