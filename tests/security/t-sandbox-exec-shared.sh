#!/usr/bin/env bash
# brig sandbox exec starts its child in the root brig's own memory (clone
# CLONE_VM, runtime/linux/spawn_vm.c) instead of a fork: from its birth to
# its execve that child and the waiting brig are one address space.
# The attack: a peeker in the sandbox stops every process of its uid in a
# loop (brig's child among them, between its uid switch and its execve)
# and tries to reach the memory of each process of the sandbox's pid
# namespace: /proc/PID/mem for writing and reading, process_vm_writev and
# process_vm_readv. Reaching brig's child would be reaching the root brig:
# the mm stays non-dumpable across the uid switch (docs/security.md,
# "sandbox exec without the sealed copy"), so every try must be denied.
# (A regression guard: the fork it replaced was non-dumpable too.)
# The attack on brig's heap: a killer in the sandbox SIGKILLs and SIGSTOPs
# everything it may signal in a loop while the host runs execs into the
# sandbox, two at a time: brig's children are killed (by it, or stopped and
# then by brig's start timeout) anywhere between their switch to the
# sandbox's uid and their execve. Were one killed inside malloc or free,
# the root brig would go on with a torn heap (util/noheap.h): every exec
# must end with a well-formed JSON result or a clean error, never a crash
# by signal, a hang, or a sanitizer report, and the sandbox must work after.
# The use side: a child that fails during its setup reports its error and
# exit code as before, and brig's own state is intact afterwards (the next
# exec runs; the state dir's lock is released while a command runs, so two
# execs into one sandbox run at once).
# The brig that runs is a decoy copy in the test's temp dir, brig-init beside it.
# shellcheck source=tests/security/lib.sh
. "$(dirname "$0")/lib.sh"
it_init
SRC=$BRIG_SECURITY_SRC/sandbox-exec-shared

D=$T/decoy
decoy_brig "$D"

ROOTFS=$T/rootfs
busybox_rootfs "$ROOTFS" sh true cat sleep touch
build_static "$ROOTFS/usr/bin/peeker" "$SRC/peeker.c"
build_static "$ROOTFS/usr/bin/killer" "$SRC/killer.c"
WS=$T/ws
# its own small filesystem: the bound holds without staging, and the host
# sees the commands' files while they run
mkdir -p "$WS" && mount -t tmpfs -o size=64m,mode=0755 brig-test "$WS" && chown 1000:1000 "$WS"
SB_STATE=$T/sbstate
NAME=shared-$TAG
sbx() { timeout -k 5 60 "$D/brig" sandbox "$1" --state-root "$SB_STATE" "${@:2}"; }
trap 'rc=$?; sbx rm --force "$NAME" >/dev/null 2>&1; (exit $rc); it_finish' EXIT
sbx create --policy agent --rootfs "$ROOTFS" --workspace "$WS" --env "BRIG_IT_TAG=$TAG-sb" "$NAME" >/dev/null
check_eq "create (agent policy): exit 0" "$?" 0

# A child that fails in its setup: the error and exit code of before.
out=$(sbx exec "$NAME" --cwd /no-such-dir -- true 2>&1)
check_eq "a missing --cwd: exit 125" "$?" 125
check "a missing --cwd: the child's error names process.cwd" grep -q 'process.cwd (/no-such-dir): open /no-such-dir: No such file or directory' <<<"$out"
out=$(sbx exec "$NAME" -- /no-such-command 2>&1)
check_eq "a missing command: exit 127 (not found)" "$?" 127
check "a missing command: the child's error names it" grep -q 'exec: /no-such-command: No such file or directory' <<<"$out"
out=$(sbx exec "$NAME" -- sh -c 'echo after; exit 7' 2>/dev/null)
check_eq "the next exec runs: its exit code" "$?" 7
check_eq "the next exec runs: its output" "$out" after

# Two at once: the first runs until the second has run.
sbx exec --timeout 20s "$NAME" -- sh -c 'touch /workspace/a; while [ ! -e /workspace/b ]; do sleep 0.05; done; echo first' \
    >"$T/first.out" 2>/dev/null &
FP=$!
for _ in $(seq 1 100); do [ -e "$WS/a" ] && break; sleep 0.05; done
check "the first exec's command runs" test -e "$WS/a"
sbx exec --timeout 10s "$NAME" -- sh -c 'touch /workspace/b; echo second' >"$T/second.out" 2>/dev/null
check_eq "a second exec runs while the first's command does: exit 0" "$?" 0
wait "$FP"
check_eq "the first exec ends once the second ran: exit 0" "$?" 0
check_eq "both commands ran to their end" "$(cat "$T/first.out" "$T/second.out")" "$(printf 'first\nsecond')"

# The attack.
sbx exec --json --timeout 30s "$NAME" -- /usr/bin/peeker 4 "$INO" >"$T/peeker.json" 2>&1 &
PP=$!
sleep 0.3
n=0 bad=""
end=$(($(date +%s) + 4))
while [ "$(date +%s)" -lt "$end" ]; do
    timeout -k 1 8 "$D/brig" sandbox exec --state-root "$SB_STATE" --timeout 5s "$NAME" -- true >/dev/null 2>&1
    rc=$?
    n=$((n + 1))
    [ "$rc" = 0 ] || bad="$bad $n:$rc"
done
wait "$PP"
res=$(jq -r '.stdout.preview_head' "$T/peeker.json")
diag "peeker: $(tail -1 <<<"$res"); $n execs beside it"
check "the peeker ran to its end" grep -q '^SEEN_BRIG [0-9]* HITS' <<<"$res"
grep '^HIT' <<<"$res" | head -5 | while read -r l; do diag "$l"; done
check_not "no process of the sandbox reached brig's memory (mem, process_vm_readv/writev)" grep -q '^HIT' <<<"$res"
check_eq "every exec beside the peeker ran (exit 0)" "$bad" ""
seen=$(sed -n 's/^SEEN_BRIG \([0-9]*\) .*/\1/p' <<<"$res")
if [ "${seen:-0}" -gt 0 ]; then
    ok "the peeker held brig's child before its execve and tried it"
else
    skip "the peeker held brig's child before its execve and tried it" "it caught none in its window this time"
fi
# The attack on the heap.
sbx exec --json --timeout 20s "$NAME" -- /usr/bin/killer 3 >"$T/killer.json" 2>&1 &
KP=$!
sleep 0.3
exec_loop() {
    local i=0 end=$(($(date +%s) + 3))
    while [ "$(date +%s)" -lt "$end" ]; do
        i=$((i + 1))
        timeout -s KILL 15 "$D/brig" sandbox exec --json --state-root "$SB_STATE" --timeout 1s "$NAME" -- true \
            >"$T/heap.$1.$i.out" 2>"$T/heap.$1.$i.err"
        echo "$1.$i $?" >>"$T/heap.rc"
    done
}
exec_loop a &
LA=$!
exec_loop b &
LB=$!
wait "$LA" "$LB" "$KP"
rounds=$(jq -r '.stdout.preview_head' "$T/killer.json" | sed -n 's/^ROUNDS //p')
n=0 json=0 clean=0 bad=""
while read -r k rc; do
    n=$((n + 1))
    # The exit status the result's JSON gives (sandbox_exit_status): a brig
    # killed by a signal, even after it printed, would not match it.
    want=$(jq -r 'if type != "object" then "none" elif .error != null then (.exit_code // 125)
                  elif .timed_out or .idle_timed_out then 124 elif .signal != null then 128 + .signal
                  elif .exit_code != null then .exit_code else 125 end' "$T/heap.$k.out" 2>/dev/null)
    if grep -qE 'AddressSanitizer|LeakSanitizer|runtime error|BUG' "$T/heap.$k.err"; then
        bad="$bad $k:report"
    elif [ -n "$want" ] && [ "$want" != none ]; then
        if [ "$rc" = "$want" ]; then json=$((json + 1)); else bad="$bad $k:$rc:json-says-$want"; fi
    elif [ "$rc" -lt 124 ] && grep -q '^brig' "$T/heap.$k.err"; then
        clean=$((clean + 1))
    else
        bad="$bad $k:$rc:no-result"     # a crash by signal (>= 128) or a hang (timeout's 137)
    fi
done <"$T/heap.rc"
diag "killer: ${rounds:-?} rounds; $n execs beside it: $json JSON results, $clean clean errors"
for k in $bad; do diag "bad: $k: $(head -c 300 "$T/heap.${k%%:*}.err" 2>/dev/null) $(head -c 300 "$T/heap.${k%%:*}.out" 2>/dev/null)"; done
check "the killer ran to its end" test -n "$rounds"
check "execs ran beside the killer" test "$n" -ge 10
check_eq "every exec under the killer ended with a JSON result or a clean error (no crash, hang or sanitizer report)" "$bad" ""
out=$(sbx exec --json "$NAME" -- sh -c 'echo alive' 2>&1)
check_eq "the sandbox works after the attack" "$(jq -r '.stdout.preview_head' <<<"$out" 2>/dev/null)" alive

# What brig's choice cannot see: a root process an earlier `brig exec --user
# 0` left in the sandbox kills brig's children also before their uid
# switch, where they allocate. A brig whose child died there exits at once
# (125, and says so) without touching its heap: never a crash.
timeout -k 2 10 "$D/brig" --root "$SB_STATE" exec -d --user 0:0 "$NAME" /usr/bin/killer 2 >"$T/rootkiller.out" 2>&1
check_eq "a root killer started by brig exec --user 0" "$?" 0
n=0 early=0 bad=""
end=$(($(date +%s) + 2))
while [ "$(date +%s)" -lt "$end" ]; do
    n=$((n + 1))
    timeout -s KILL 15 "$D/brig" sandbox exec --json --state-root "$SB_STATE" --timeout 1s "$NAME" -- true \
        >"$T/root.$n.out" 2>"$T/root.$n.err"
    rc=$?
    if grep -qE 'AddressSanitizer|runtime error|BUG' "$T/root.$n.err"; then bad="$bad $n:report"
    elif [ -s "$T/root.$n.out" ] && jq -e 'type == "object"' "$T/root.$n.out" >/dev/null 2>&1; then :
    elif [ "$rc" = 125 ] && grep -q "^brig: exec: the process was killed before it was done with brig's memory" "$T/root.$n.err"; then
        early=$((early + 1))
    else bad="$bad $n:$rc"
    fi
done
diag "root killer: $n execs, $early ended early (125)"
check_eq "every exec beside a root killer ended with its result or 125 and its message (no crash, hang or report)" "$bad" ""
sleep 1
out=$(sbx exec --json "$NAME" -- sh -c 'echo alive' 2>&1)
check_eq "the sandbox works after it" "$(jq -r '.stdout.preview_head' <<<"$out" 2>/dev/null)" alive

sbx rm --force "$NAME"
check_eq "rm --force: exit 0" "$?" 0
check_eq "rm: no process left" "$(tagged_pids "$TAG-sb")" ""
