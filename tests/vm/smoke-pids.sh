#!/bin/sh
# Runs inside the test VM: pids.max is enforced. With pids.max=4 the helper (one task)
# can fork 3 children, then fork fails with EAGAIN and pids.events counts it; with
# pids.max=max the same fork loop succeeds.
set -eu
helper=$1
cg=/sys/fs/cgroup/smoke-pids

in_cgroup() {
    sh -c 'echo $$ >"$1/cgroup.procs" && shift && exec "$@"' sh "$cg" "$@"
}

mkdir "$cg"
trap 'rmdir "$cg" 2>/dev/null || true' EXIT

echo max >"$cg/pids.max"
out=$(in_cgroup "$helper" fork 8) || { echo "FAIL: fork 8 without a limit: $out"; exit 1; }
echo "pids.max=max: $out"

echo 4 >"$cg/pids.max"
rc=0
out=$(in_cgroup "$helper" fork 8) || rc=$?
echo "pids.max=4: $out (exit $rc)"
[ "$rc" = 3 ] || { echo "FAIL: no fork failed with EAGAIN under pids.max=4"; exit 1; }
[ "$out" = "forked=3 failed=5" ] || { echo "FAIL: expected forked=3 failed=5"; exit 1; }
max=$(awk '$1 == "max" { print $2 }' "$cg/pids.events")
echo "pids.events max=$max"
[ "$max" -ge 1 ] || { echo "FAIL: pids.events shows no refused fork"; exit 1; }
echo PASS
