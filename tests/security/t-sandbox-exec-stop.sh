#!/usr/bin/env bash
# brig sandbox exec --timeout holds from the start: once brig's exec child
# has switched to the sandbox's uid, a process of the sandbox may send it
# SIGSTOP (kill(2) allows the same uid) before its execve. brig waited for
# that execve with no limit, so one command left running in the sandbox
# (the agent's) could hang every later `sandbox exec` of its worker for
# ever, past its --timeout, with a stopped brig child in the exec's cgroup.
# The attack: a stopper exec'd in the sandbox SIGSTOPs everything of its uid
# in a loop while execs with --timeout 1s come and go; each must end within
# its limit (124 when caught: killed, "ran": false when before its execve).
# The stopper also probes what it stopped (/proc/PID/exe, /proc/PID/maps):
# brig's child, held stopped after its uid switch, must stay non-dumpable
# to it (docs/security.md, "sandbox exec without the sealed copy").
# The brig that runs is a decoy copy in the test's temp dir, brig-init beside it.
# shellcheck source=tests/security/lib.sh
. "$(dirname "$0")/lib.sh"
it_init
SRC=$BRIG_SECURITY_SRC/sandbox-exec-stop

D=$T/decoy
decoy_brig "$D"

ROOTFS=$T/rootfs
busybox_rootfs "$ROOTFS" sh true
build_static "$ROOTFS/usr/bin/stopper" "$SRC/stopper.c"
WS=$T/ws
mkdir -p "$WS" && chown "$SB_WS_OWNER" "$WS"
SB_STATE=$T/sbstate
NAME=stop-$TAG
sbx() { as_brig_user timeout -k 5 60 "$D/brig" sandbox "$1" --state-root "$SB_STATE" "${@:2}"; }
trap 'rc=$?; sbx rm --force "$NAME" >/dev/null 2>&1; [ -n "${RL_USER:-}" ] && rl_cleanup; (exit $rc); it_finish' EXIT
sbx create --policy "$SB_POLICY" --rootfs "$ROOTFS" --workspace "$WS" --env "BRIG_IT_TAG=$TAG-sb" "$NAME" >/dev/null
check_eq "create (agent policy): exit 0" "$?" 0

N=12
# Rootless: the same race, fewer rounds (the root run has the twelve).
[ "${BRIG_ROOTLESS:-0}" = 1 ] && N=4
sbx exec --json --timeout 60s "$NAME" -- /usr/bin/stopper 15 "$DEV" "$INO" >"$T/stopper.json" 2>&1 &
SP=$!
sleep 0.5
hung=0 caught=0 bad=""
for i in $(seq 1 $N); do
    # 1 s allowed; a brig still there 4 s later waits for a stopped child
    t0=$(date +%s%N)
    as_brig_user timeout -k 1 4 "$D/brig" sandbox exec --state-root "$SB_STATE" --json --timeout 1s "$NAME" -- true \
        >"$T/x.json" 2>&1
    rc=$?
    if [ $(($(date +%s%N) - t0)) -gt 3500000000 ]; then
        hung=$((hung + 1))
    elif [ "$rc" = 124 ]; then
        [ "$(jq -r .ran "$T/x.json")" = false ] && caught=$((caught + 1))
    elif [ "$rc" != 0 ]; then
        bad="$bad $i:$rc"
    fi
done
wait "$SP"
res=$(jq -r '.stdout.preview_head' "$T/stopper.json")
diag "stopper: $(tail -1 <<<"$res")"
check "the stopper ran to its end" grep -q '^STOPPED_BRIG [0-9]* HITS' <<<"$res"
check_not "nothing it stopped showed the host brig as its exe or in its maps" grep -q '^HIT' <<<"$res"
diag "$N execs beside the stopper: $hung outlived their --timeout, $caught stopped before their execve (killed at the limit)"
check_eq "no exec outlived its --timeout while the sandbox stopped its processes" "$hung" 0
check_eq "every exec ended 0 or 124 (no brig failure)" "$bad" ""
if [ "$caught" -gt 0 ]; then
    ok "a child stopped before its execve ended as a timeout (exit 124, \"ran\": false)"
else
    skip "a child stopped before its execve ended as a timeout" "the stopper caught none in its window this time"
fi
sbx rm --force "$NAME"
check_eq "rm --force: exit 0" "$?" 0
check_eq "rm: no process left" "$(tagged_pids "$TAG-sb")" ""
