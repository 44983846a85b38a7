#!/usr/bin/env bash
# brig-init starts the command with clone(CLONE_VM | CLONE_VFORK): until its
# execve the child runs in PID 1's own memory, and PID 1 sleeps in its
# clone until that execve. A process of the sandbox's uid on the host
# (kill(2) allows the same uid; each sandbox's is its own, from a slot of
# brig's range: here the one slot of the test's own range, so that the
# catcher can take that uid beforehand) catches that child, SIGSTOPs it and tries
# to reach the shared memory through it (/proc/PID/mem and maps,
# process_vm_readv: with it, PID 1's status or what it reaps). The child
# shares PID 1's non-dumpable mm: all refused, as for a process of the
# same uid they are not (the control). Held stopped, it holds PID 1 in
# its clone: the run still ends at its --timeout (124) with nothing left.
# A PATH of many missing directories keeps the child in its PATH search
# long enough to be caught (init_execvp).
# shellcheck source=tests/security/lib.sh
. "$(dirname "$0")/lib.sh"
it_init
command -v setpriv >/dev/null || skip_all "setpriv (util-linux) is not installed"
SRC=$BRIG_SECURITY_SRC/sandbox-init-race

D=$T/decoy
decoy_brig "$D"
ROOTFS=$T/rootfs
busybox_rootfs "$ROOTFS" true
build_static "$T/catcher" "$SRC/catcher.c"
chmod 0755 "$T" "$T/catcher"
WS=$T/ws
mkdir -p "$WS"
SB_STATE=$T/sbstate
FIRST=2113994752        # 0x7E010000: one slot, so the sandbox's host uid is known
echo "{\"first\": $FIRST, \"count\": 1}" > "$T/ids.json" && chmod 0644 "$T/ids.json"
export BRIG_SANDBOX_IDS=$T/ids.json
UID_SB=$((FIRST + 1000))    # the agent policy's user 1000
AS_USER=(setpriv --reuid "$UID_SB" --regid "$UID_SB" --clear-groups)

# the control: the same probes reach a plain process of that uid
"${AS_USER[@]}" sleep 5 &
sp=$!
sleep 0.2
check "control: the probes reach a process of the same uid" \
    grep -q EXPOSED <("${AS_USER[@]}" "$T/catcher" probe "$sp")
kill "$sp"; wait "$sp" 2>/dev/null

# ~40 ms of a PATH search (15000 missing directories, under the kernel's
# 128 KB for one string) before each execve
P=$(for i in $(seq 15000); do printf '/n%d:' "$i"; done)/bin
# Only this test's sandboxes, by their command line (brig-init's until the
# child's execve: `true TAG`): another run on the host is never stopped.
"${AS_USER[@]}" "$T/catcher" 20 "$TAG" > "$T/caught" 2>&1 &
CP=$!
slow=0 held=0
for _ in 1 2 3; do
    t0=$(date +%s%N)
    timeout -k 5 30 "$D/brig" sandbox run --state-root "$SB_STATE" --rootfs "$ROOTFS" --workspace "$WS" \
        --timeout 1s --env "BRIG_IT_TAG=$TAG-sb" --env "PATH=$P" -- true "$TAG" > "$T/out" 2>&1
    rc=$?
    [ $(($(date +%s%N) - t0)) -gt 4000000000 ] && slow=$((slow + 1))
    [ "$rc" = 124 ] && held=$((held + 1))
    [ "$rc" = 124 ] || [ "$rc" = 0 ] || diag "run: exit $rc: $(tail -1 "$T/out")"
done
kill "$CP"; wait "$CP" 2>/dev/null
caught=$(grep "^stopped" "$T/caught" | sort -u | wc -l)
diag "vfork children caught before their execve: $caught; runs held to their timeout: $held"
check "the catcher caught brig-init's child before its execve" test "$caught" -gt 0
check_eq "the caught child's memory (PID 1's): nothing opened" "$(grep EXPOSED "$T/caught" | sort -u | head -3)" ""
check_eq "every run ended within its --timeout (+3 s)" "$slow" 0
sleep 0.3
check_eq "nothing of the sandboxes left on the host" "$(tagged_pids "$TAG-sb" | tr '\n' ' ')" ""
check_eq "no sandbox state left" "$(ls "$SB_STATE" 2>/dev/null | grep -v '^\.' | grep -c sb-)" 0

