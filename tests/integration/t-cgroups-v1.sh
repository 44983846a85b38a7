#!/usr/bin/env bash
# The limits enforced on this host's cgroup layout, looked at from the kernel's side: on a
# hybrid host (v1 controllers, cgroup2 with hugetlb only) memory, pids, cpu, devices and
# the freezer go through the v1 fallback. Memory past the limit is OOM-killed and counted
# (state oomKills, events {"type":"oom"}); pids.max stops forks with EAGAIN, also after
# update lowered it; cpu quota/period reach cfs_*; a device node without an allow rule
# cannot be opened while /dev/null can; pause stops every process and resume restarts them;
# a real-time process.scheduler needs, and gets, the real-time budget of realtimeRuntime.
# The same checks on a pure cgroup v2 kernel run in the VM (tests/vm/vm-brig-cgroups.sh).
. "$(dirname "$0")/lib.sh"
it_init

[ -d /sys/fs/cgroup/memory ] && [ -d /sys/fs/cgroup/pids ] && [ -d /sys/fs/cgroup/cpu ] ||
    skip_all "no cgroup v1 memory/pids/cpu hierarchies: this file tests the v1 fallback (pure v2 is tested in the VM suite)"

v1() { echo "/sys/fs/cgroup/$1/brig-test/$2/$3"; }
cputime() { awk '{ sub(/^.*\) /, ""); print $12 + $13 }' "/proc/$1/stat" 2>/dev/null; }
alive() { [ -e "/proc/$1" ] && ! grep -q '^State:.*Z' "/proc/$1/status" 2>/dev/null; }

# ---- memory: OOM kill through memory.limit_in_bytes -----------------------------------
mkb oom -- /bin/dd if=/dev/zero of=/dev/null bs=64M count=1 || bail "cannot build a bundle"
cfg oom '.linux.resources = {memory: {limit: 16777216, swap: 16777216}}'
ID=$(cid oom)
run_ct oom --keep
check_eq "memory: dd of 64 MiB under a 16 MiB limit is SIGKILLed (run exits 137)" "$RC" 137
[ "$RC" = 137 ] || diag "$(cat "$T/oom.err")"
k=$(awk '$1 == "oom_kill" { print $2 }' "$(v1 memory "$ID" memory.oom_control)" 2>/dev/null)
check "memory: the kernel counted it (memory.oom_control oom_kill=${k:-none})" test "${k:-0}" -ge 1
check_eq "memory: brig state reports it (oomKills)" "$(state_field "$ID" oomKills)" "${k:-x}"
b delete "$ID" >/dev/null 2>&1
assert_clean oom

# A child killed while the container lives: events streams one {"type":"oom"}.
mkb oomev -- /bin/sh -c 'sleep 1; dd if=/dev/zero of=/dev/null bs=64M count=1; echo "dd=$?"; sleep 1' || true
cfg oomev '.linux.resources = {memory: {limit: 16777216, swap: 16777216}}'
ID=$(cid oomev)
create_ct oomev
b events --interval 300ms "$ID" >"$T/oomev.ev" 2>"$T/oomev.everr" &
EV=$!
sleep 0.2
b start "$ID" >/dev/null 2>&1
for _ in $(seq 200); do kill -0 "$EV" 2>/dev/null || break; sleep 0.1; done
if kill -0 "$EV" 2>/dev/null; then
    not_ok "memory: events ends when the container stops"; kill "$EV"
else
    ok "memory: events ends when the container stops"
fi
wait "$EV" 2>/dev/null
check "memory: the OOM-killed dd exited 137 inside" grep -qx 'dd=137' "$T/oomev.out"
check_eq "memory: events printed one oom event" \
    "$(jq -c 'select(.type == "oom")' "$T/oomev.ev" 2>/dev/null)" "{\"type\":\"oom\",\"id\":\"$ID\"}"
check "memory: events printed stats with the v1 memory limit" \
    jq -e 'select(.type == "stats") | .data.memory.usage.limit == 16777216' "$T/oomev.ev"
b delete "$ID" >/dev/null 2>&1
assert_clean oomev

# ---- blockIO throttles reach the four v1 blkio.throttle files ----------------------------
# A whole disk of this machine (the kernel refuses rules for a device that does not exist).
dev=$(for d in /sys/block/*; do case ${d##*/} in loop*|ram*) ;; *) cat "$d/dev"; break ;; esac; done)
if [ -n "$dev" ] && [ -f /sys/fs/cgroup/blkio/blkio.throttle.read_bps_device ]; then
    maj=${dev%%:*} min=${dev##*:}
    mkb thr -- /bin/true || true
    cfg thr '.linux.resources = {blockIO: {
        throttleReadBpsDevice: [{major: $M, minor: $m, rate: 1048576}],
        throttleWriteBpsDevice: [{major: $M, minor: $m, rate: 2097152}],
        throttleReadIOPSDevice: [{major: $M, minor: $m, rate: 300}],
        throttleWriteIOPSDevice: [{major: $M, minor: $m, rate: 400}]}}' \
        --argjson M "$maj" --argjson m "$min"
    ID=$(cid thr)
    create_ct thr
    for f in read_bps_device:1048576 write_bps_device:2097152 read_iops_device:300 write_iops_device:400; do
        check_eq "blkio: throttle.${f%%:*} of $dev" \
            "$(cat "$(v1 blkio "$ID" "blkio.throttle.${f%%:*}")" 2>/dev/null)" "$dev ${f##*:}"
    done
    b delete --force "$ID" >/dev/null 2>&1
    assert_clean thr
else
    skip "blkio throttles" "no block device or no v1 blkio hierarchy here"
fi

# ---- cpu quota and period reach the v1 cfs files; the kernel throttles -------------------
mkb cpu -- /bin/sh -c 'while :; do :; done' || true
cfg cpu '.linux.resources = {cpu: {quota: 10000, period: 50000}}'
ID=$(cid cpu)
run_ct cpu -d
check_eq "cpu: cfs_quota_us" "$(cat "$(v1 cpu "$ID" cpu.cfs_quota_us)" 2>/dev/null)" 10000
check_eq "cpu: cfs_period_us" "$(cat "$(v1 cpu "$ID" cpu.cfs_period_us)" 2>/dev/null)" 50000
# The first throttled 50 ms period counts: wait for it, not a fixed second.
throttled() { [ "$(awk '$1 == "nr_throttled" { print $2 }' "$(v1 cpu "$ID" cpu.stat)" 2>/dev/null)" -ge 1 ] 2>/dev/null; }
wait_until 10 throttled
t=$(awk '$1 == "nr_throttled" { print $2 }' "$(v1 cpu "$ID" cpu.stat)" 2>/dev/null)
check "cpu: the kernel throttled the busy loop (nr_throttled=${t:-none})" test "${t:-0}" -ge 1
s=$(b events --stats "$ID" 2>/dev/null)
check "cpu: events --stats reports usage and throttling" jq -e \
    '.data.cpu.usage.total > 0 and .data.cpu.throttling.throttled_periods >= 1' <<<"$s"
b delete --force "$ID" >/dev/null 2>&1
assert_clean cpu

# ---- real-time scheduling: the v1 cpu cgroup's real-time budget --------------------------
# With real-time group scheduling a new cgroup has cpu.rt_runtime_us 0 and
# root is refused SCHED_FIFO/SCHED_RR there (EPERM). brig sets the policy
# from create once the init is in its cgroups (as crun), gives the levels it
# makes the budget of linux.resources.cpu.realtimeRuntime, and names the fix
# when there is none. runc 1.1.5 and crun 1.8.1 ignore process.scheduler.
if [ -e /sys/fs/cgroup/cpu/cpu.rt_runtime_us ]; then
    sched_of() { sed -n 's/^policy *: *\([0-9]*\)$/\1/p' "$T/$1.out"; }
    RTP=/brig-rt-$TAG
    trap '_rc=$?; rmdir /sys/fs/cgroup/*$RTP/* /sys/fs/cgroup/*$RTP /sys/fs/cgroup/*$RTP-pre/* /sys/fs/cgroup/*$RTP-pre 2>/dev/null
          (exit $_rc); it_finish' EXIT
    mkb rt -- /bin/sh -c 'grep "^policy" /proc/self/sched; cat /sys/fs/cgroup/cpu/cpu.rt_runtime_us' || true
    cfg rt '.process.scheduler = {policy: "SCHED_RR", priority: 5}'
    run_ct rt
    check_refused_rc "SCHED_RR without a real-time budget: refused, naming the field" \
        "process.scheduler: sched_setattr SCHED_RR (a cgroup v1 cpu controller gives a new cgroup no real-time time: set linux.resources.cpu.realtimeRuntime)" \
        1 "$RC" "$T/rt.err"
    assert_clean rt
    if other_run runc rt; then
        check_eq "runc 1.1.5 runs it, ignoring process.scheduler (SCHED_OTHER)" "$(sed -n 's/^policy *: *\([0-9]*\)$/\1/p' "$T/rt.runc.out")" 0
    fi
    cfg rt '.linux.resources.cpu = {realtimeRuntime: 20000, realtimePeriod: 1000000}
            | .linux.cgroupsPath = $p' --arg p "$RTP/$(cid rt)"
    run_ct rt
    check_eq "with realtimeRuntime, in a parent brig makes: runs" "$RC" 0
    check_eq "... the process is SCHED_RR (2)" "$(sched_of rt)" 2
    check "... its cgroup has the budget" grep -qx 20000 "$T/rt.out"
    check_not "... and the parent brig made is gone after it" test -d "/sys/fs/cgroup/cpu$RTP"
    assert_clean rt
    if [ "$(cat /proc/sys/user/max_user_namespaces 2>/dev/null || echo 0)" != 0 ]; then
        mkdir -p "$T/rt-userns" && cp -a "$T/rt/rootfs" "$T/rt-userns/" && chown -R 100000:100000 "$T/rt-userns/rootfs" &&
            jq '.linux.namespaces += [{type: "user"}]
                | .linux.uidMappings = [{containerID: 0, hostID: 100000, size: 65536}]
                | .linux.gidMappings = [{containerID: 0, hostID: 100000, size: 65536}]
                | .process.scheduler.policy = "SCHED_FIFO" | .process.env[-1] = "BRIG_IT_TAG=" + $id
                | .linux.cgroupsPath = $p' --arg id "$(cid rt-userns)" --arg p "$RTP/$(cid rt-userns)" \
                "$T/rt/config.json" >"$T/rt-userns/config.json"
        run_ct rt-userns
        check_eq "SCHED_FIFO in a user namespace (set by create, as crun): runs" "$RC" 0
        check_eq "... the process is SCHED_FIFO (1)" "$(sched_of rt-userns)" 1
        assert_clean rt-userns
    fi
    # A parent that was there (made by the test, its own), with no budget to
    # share: named, not changed.
    mkdir -p "/sys/fs/cgroup/cpu$RTP-pre"
    cfg rt '.linux.cgroupsPath = $p' --arg p "$RTP-pre/$(cid rt)"
    run_ct rt
    check_refused_rc "realtimeRuntime under a parent without a budget: refused, naming it" \
        "linux.resources.cpu.realtimeRuntime: 20000 us is more than the parent cgroup /sys/fs/cgroup/cpu$RTP-pre can give (its cpu.rt_runtime_us is 0" \
        1 "$RC" "$T/rt.err"
    check_eq "... which brig left as it was" "$(cat "/sys/fs/cgroup/cpu$RTP-pre/cpu.rt_runtime_us")" 0
    check "... nor removed (it did not make it)" test -d "/sys/fs/cgroup/cpu$RTP-pre"
    check_eq "... and nothing of the container is left below it" "$(find /sys/fs/cgroup/*$RTP-pre -mindepth 1 -type d 2>/dev/null)" ""
    assert_clean rt
    rmdir "/sys/fs/cgroup/cpu$RTP-pre"
else
    skip "real-time scheduling" "no cpu.rt_runtime_us: this kernel has no real-time group scheduling"
fi

# ---- devices: v1 allowlist ---------------------------------------------------------
mkb dev -- /bin/sh -c '/usr/bin/brig-probe write /dev/null; /usr/bin/brig-probe read /dev/denied' || true
cfg dev '.linux.devices = [{path: "/dev/denied", type: "c", major: 1, minor: 11, fileMode: 438}]'
run_ct dev
check_eq "devices: /dev/null can be written" \
    "$(grep '"op":"write"' "$T/dev.out" | jq -r .result 2>/dev/null)" ok
check_eq "devices: a node with no allow rule cannot be opened (EPERM)" \
    "$(grep '"op":"read"' "$T/dev.out" | jq -r .result 2>/dev/null)" EPERM
assert_clean dev

# ---- pause / resume: no process makes progress while paused ----------------------------
mkb pause -- /bin/sh -c 'while :; do :; done & while :; do :; done' || true
ID=$(cid pause)
run_ct pause -d
nprocs() { [ "$(wc -l <"$(v1 pids "$ID" cgroup.procs)" 2>/dev/null)" -ge 2 ] 2>/dev/null; }
wait_until 10 nprocs
PIDS=$(cat "$(v1 pids "$ID" cgroup.procs)" 2>/dev/null | tr '\n' ' ')
check "pause: the container runs 2 processes ($PIDS)" test "$(echo $PIDS | wc -w)" -ge 2
check "pause: brig pause succeeds" b pause "$ID"
check_eq "pause: state says paused" "$(state_field "$ID" status)" paused
before=""; for p in $PIDS; do before="$before $(cputime "$p")"; done
sleep 1
after=""; for p in $PIDS; do after="$after $(cputime "$p")"; done
check "pause: CPU times were read" test -n "${before// /}"
check_eq "pause: no process accrued CPU time in 1 s" "$after" "$before"
check "resume: brig resume succeeds" b resume "$ID"
check_eq "resume: state says running" "$(state_field "$ID" status)" running
# all_moved: every process accrued CPU time since the pause (polled: each
# needs a tick of its own, not a fixed second).
all_moved() {
    moved=0
    set -- $before
    for p in $PIDS; do
        [ "$(cputime "$p")" -gt "${1:-0}" ] && moved=$((moved + 1)); shift
    done
    [ "$moved" = "$(echo $PIDS | wc -w)" ]
}
wait_until 10 all_moved
check_eq "resume: every process runs again" "$moved" "$(echo $PIDS | wc -w)"
b update --pids-limit 7 "$ID" >/dev/null 2>&1
check_eq "update: --pids-limit 7" "$(cat "$(v1 pids "$ID" pids.max)" 2>/dev/null)" 7
check "update: --pids-limit -1 lifts it" b update --pids-limit -1 "$ID"
check_eq "update: pids.max is max again" "$(cat "$(v1 pids "$ID" pids.max)" 2>/dev/null)" max
b delete --force "$ID" >/dev/null 2>&1
left=0; for p in $PIDS; do alive "$p" && left=$((left + 1)); done
check_eq "delete --force: every process is gone" "$left" 0
assert_clean pause

# ---- update lowers pids.max of a running container: forks then fail -------------------
mkb upd --rw -- /bin/sh -c 'while [ ! -e /tmp/go ]; do sleep 0.1; done; /usr/bin/brig-probe fork-bomb 40' || true
cfg upd '.linux.resources = {pids: {limit: 100}}'
ID=$(cid upd)
create_ct upd
b start "$ID" >/dev/null 2>&1
check "update: --pids-limit 5 on the running container" b update --pids-limit 5 "$ID"
check_eq "update: pids.max is 5" "$(cat "$(v1 pids "$ID" pids.max)" 2>/dev/null)" 5
touch "$T/upd/rootfs/tmp/go"
wait_status "$ID" stopped 20
# The probe and perhaps sh (busybox may exec the last command) are among the 5: the
# probe forks 3 or 4, never the 40 the old limit allowed.
check_probe "update: the fork bomb stops at the new limit" upd \
    '.forked >= 3 and .forked <= 4 and .result == "EAGAIN"'
b delete "$ID" >/dev/null 2>&1
assert_clean upd

# ---- swap 0 is "no swap": memory+swap capped at the memory limit -----------------------
# OCI memory.swap is memory+swap; 0 can only mean no swap at all. runc reads it as
# "not set", which leaves memory.memsw.limit_in_bytes unlimited: the container swaps
# as much as it likes while `policy check` judged it swapless.
if [ -f /sys/fs/cgroup/memory/memory.memsw.limit_in_bytes ]; then
    mkb swap0 -- /usr/bin/brig-probe sleep 30 || true
    cfg swap0 '.linux.resources = {memory: {limit: 33554432, swap: 0}}'
    ID=$(cid swap0)
    create_ct swap0
    check_eq "swap 0: create succeeds" "$RC" 0
    check_eq "swap 0: memory.memsw.limit_in_bytes is the memory limit" \
        "$(cat "$(v1 memory "$ID" memory.memsw.limit_in_bytes)" 2>/dev/null)" 33554432
    check_eq "swap 0: memory.limit_in_bytes is the limit" \
        "$(cat "$(v1 memory "$ID" memory.limit_in_bytes)" 2>/dev/null)" 33554432
    # update: --memory-swap 0 caps memsw at the current limit; with --memory at the new one
    check "update: --memory 64M --memory-swap 128M" b update --memory 67108864 --memory-swap 134217728 "$ID"
    check_eq "update: memsw 128M" "$(cat "$(v1 memory "$ID" memory.memsw.limit_in_bytes)" 2>/dev/null)" 134217728
    check "update: --memory-swap 0 alone" b update --memory-swap 0 "$ID"
    check_eq "update: --memory-swap 0 caps memsw at the current limit" \
        "$(cat "$(v1 memory "$ID" memory.memsw.limit_in_bytes)" 2>/dev/null)" 67108864
    b delete --force "$ID" >/dev/null 2>&1
    assert_clean swap0

    # Without a memory limit there is nothing to cap memory+swap at on v1: refused
    # (naming the field), not left unlimited, and nothing is left behind.
    mkb swap0nl -- /bin/true || true
    cfg swap0nl '.linux.resources = {memory: {swap: 0}}'
    create_ct swap0nl
    check "swap 0 without a memory limit: refused" test "$RC" != 0
    check "... naming linux.resources.memory.swap" grep -q 'linux.resources.memory.swap: 0 (no swap) needs linux.resources.memory.limit' "$T/swap0nl.err"
    assert_clean swap0nl
    cfg swap0nl '.linux.resources = {memory: {limit: -1, swap: 0}}'
    create_ct swap0nl
    check "swap 0 with memory limit -1: refused" grep -q 'linux.resources.memory.swap: 0 (no swap) cannot be enforced' "$T/swap0nl.err"
    assert_clean swap0nl
else
    skip "swap 0" "no swap accounting (memory.memsw.limit_in_bytes) on this kernel"
fi
