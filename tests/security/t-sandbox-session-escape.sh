#!/usr/bin/env bash
# brig sandbox exec (docs/sandbox.md): a hostile command exec'd into a
# long-lived sandbox tries to outlive its exec's timeout (double fork +
# setsid + every catchable signal ignored, a heartbeat into the workspace)
# and to leave its exec's cgroup (its pid into every cgroup.procs it can
# reach, a cgroup filesystem mounted, also from a new user namespace). All
# fail: at the timeout nothing of it remains, the sandbox and another exec
# go on. And a sandbox NAME that is a path (.., /, ../x) is refused by
# create, exec and rm, touching nothing outside the state root.
# The use side is tests/integration/t-sandbox-session.sh.
# shellcheck source=tests/security/lib.sh
. "$(dirname "$0")/lib.sh"
it_init

ROOTFS=$T/rootfs
busybox_rootfs "$ROOTFS" sh cat sleep true
build_static "$ROOTFS/usr/bin/detach" "$BRIG_SECURITY_SRC/sandbox-session/detach.c"
build_static "$ROOTFS/usr/bin/forge-sigterm" "$BRIG_SECURITY_SRC/sandbox-session/forge-sigterm.c"
WS=$T/ws
# its own small filesystem: the bound holds without staging, and the host
# sees the exec's files while it runs
mkdir -p "$WS" && mount -t tmpfs -o size=64m,mode=0755 brig-test "$WS" && chown 1000:1000 "$WS"
SB_STATE=$T/sbstate
NAME=esc-$TAG
sbx() { timeout -k 5 60 "$BRIG" sandbox "$1" --state-root "$SB_STATE" "${@:2}"; }
trap 'rc=$?; sbx rm --force "$NAME" >/dev/null 2>&1; (exit $rc); it_finish' EXIT

sbx create --rootfs "$ROOTFS" --workspace "$WS" --env "BRIG_IT_TAG=$TAG-sb" "$NAME" > /dev/null
check_eq "create: exit 0" "$?" 0
INIT=$(sbx ls --json | jq -r --arg n "$NAME" '.[] | select(.name == $n) | .pid')

# ---- detaching does not escape an exec's timeout; leaving its cgroup is impossible ----
sbx exec --json "$NAME" -- sh -c 'for i in 1 2 3 4 5 6 7 8 9 10; do echo tick; sleep 0.3; done' \
    > "$T/other.json" 2>/dev/null &
OTHER=$!
(
    for _ in $(seq 100); do grep -q '^done' "$WS/attempts" 2>/dev/null && break; sleep 0.05; done
    # every process of the exec, seen from the host while it runs
    for p in $(tagged_pids "$TAG-sb"); do
        [ "$p" = "$INIT" ] && continue
        cmd=$(tr '\0' ' ' 2>/dev/null < "/proc/$p/cmdline") || continue
        case $cmd in *detach*) ;; *) continue ;; esac    # the other exec
        echo "pid $p"
        cat "/proc/$p/cgroup"
    done > "$T/cgroups.txt"
) &
WATCH=$!
sbx exec --json --timeout 2s "$NAME" -- /usr/bin/detach > "$T/out.json" 2> "$T/err.txt"
RC=$?
wait $WATCH
check_eq "the detaching exec: exit 124 at its timeout" "$RC" 124
check_eq "the detaching exec: timed_out" "$(jq -r .timed_out "$T/out.json")" true
check "the survivor did start (heartbeat written)" test -e "$WS/heartbeat"
check "the survivor tried every way out" grep -q '^done' "$WS/attempts"
check_not "no cgroup.procs write and no cgroup mount succeeded inside" grep -q "^MOVED\|^MOUNTED" "$WS/attempts" ||
    diag "$(grep "^MOVED\|^MOUNTED" "$WS/attempts")"
check "the exec's processes were seen from the host" grep -q '^pid' "$T/cgroups.txt"
# where the exec is killed, measured and listed (v2, freezer, memory, cpuacct,
# pids) and where it is locked (the sandbox's first hierarchy, one more):
# its own cgroup; in the other v1 hierarchies: the sandbox's own
# (cgroup_child.c, lean); never anywhere else, such as brig's
own_ctrl='[^:]*\(freezer\|memory\|cpuacct\|pids\)[^:]*'
check_eq "while it ran, each of its processes was in the exec's own cgroup where it is killed and measured" \
    "$(grep "^0::\|^[0-9]*:$own_ctrl:" "$T/cgroups.txt" | grep -v ":/brig-sandbox/$NAME/x-[0-9a-f]*\$")" ""
check_eq "... and in the exec's own or the sandbox's own cgroup in every other hierarchy" \
    "$(grep -v "^pid" "$T/cgroups.txt" | grep -v ":/brig-sandbox/$NAME\(/x-[0-9a-f]*\)\?\$")" ""
lock_only=$(grep -v "^pid\|^0::\|^[0-9]*:$own_ctrl:" "$T/cgroups.txt" | grep ":/brig-sandbox/$NAME/x-" |
    cut -d: -f2 | sort -u)
check "... its own in one other hierarchy at most (its lock's): ${lock_only:-none}" \
    test "$(printf '%s' "$lock_only" | grep -c .)" -le 1
check "... (the exec's own cgroups were seen)" grep -q "^\(0:\|[0-9]*:$own_ctrl\):/brig-sandbox/$NAME/x-" "$T/cgroups.txt"
grep -q "^[1-9][0-9]*:" "$T/cgroups.txt" &&     # v1 hierarchies (a pure v2 host has one cgroup)
    check "... (the sandbox's own was seen, in a hierarchy the exec joins)" grep -q ":/brig-sandbox/$NAME\$" "$T/cgroups.txt"
sleep 0.5
hb1=$(cat "$WS/heartbeat" 2>/dev/null; stat -c %Y "$WS/heartbeat")
sleep 1.2
hb2=$(cat "$WS/heartbeat" 2>/dev/null; stat -c %Y "$WS/heartbeat")
check_eq "after the timeout the heartbeat stopped (the setsid'd grandchild is dead)" "$hb2" "$hb1"
left=$(for p in $(tagged_pids "$TAG-sb"); do [ "$p" = "$INIT" ] || grep -l detach "/proc/$p/cmdline"; done 2>/dev/null)
check_eq "no process of the detaching exec left" "$left" ""
wait $OTHER
check_eq "the other exec ran to its end" "$(jq -r '.exit_code' "$T/other.json") $(jq -r .stdout.preview_head "$T/other.json" | grep -c tick)" "0 10"
check_eq "the sandbox's init still runs" "$(sbx ls --json | jq -r --arg n "$NAME" '.[] | select(.name == $n) | .status')" running
check_eq "no exec cgroup left" "$(ls -d /sys/fs/cgroup/*/brig-sandbox/"$NAME"/x-* 2>/dev/null)" ""

# ---- a command cannot end the sandbox by signalling its init ----
sbx exec --json "$NAME" -- sh -c 'kill -TERM 1; kill -INT 1; kill -HUP 1; kill -KILL 1; echo sent' > "$T/out.json" 2>/dev/null
check_eq "signals to PID 1 from inside: sent" "$(jq -r .stdout.preview_head "$T/out.json")" sent
sleep 0.3
check_eq "signals to PID 1 from inside: the init still runs" \
    "$(sbx ls --json | jq -r --arg n "$NAME" '.[] | select(.name == $n) | "\(.status) \(.pid)"')" "running $INIT"
sbx exec --json "$NAME" -- true > "$T/out.json" 2>/dev/null
check_eq "signals to PID 1 from inside: the next exec runs" "$?" 0
# rt_sigqueueinfo lets the sender write si_pid: a SIGTERM that reads as
# the host's (si_pid 0) but is queued (si_code SI_QUEUE)
sbx exec --json "$NAME" -- /usr/bin/forge-sigterm > "$T/out.json" 2>/dev/null
check_eq "a forged siginfo (si_pid 0) to PID 1: sent" "$(jq -r .stdout.preview_head "$T/out.json")" forged
sleep 0.3
check_eq "a forged siginfo (si_pid 0) to PID 1: the init still runs" \
    "$(sbx ls --json | jq -r --arg n "$NAME" '.[] | select(.name == $n) | "\(.status) \(.pid)"')" "running $INIT"

# ---- a NAME that is a path is refused; nothing outside the state root changes ----
mkdir -p "$T/victim" && echo precious > "$T/victim/state.json"
for bad in .. ../victim "/tmp/brig-decoy-$TAG" "a/b" "sb-$TAG"; do
    sbx create --rootfs "$ROOTFS" "$bad" > /dev/null 2> "$T/err.txt"
    rc=$?
    check_eq "create '$bad': exit 125" "$rc" 125
    check "create '$bad': refused as a NAME" grep -q "sandbox NAME.*\(expected 1-63 of\|one-shot sandboxes' ids\)" "$T/err.txt"
    sbx exec --json "$bad" -- true > "$T/out.json" 2>/dev/null
    rc=$?
    check "exec '$bad': exit 125, refused as a NAME" \
        bash -c "[ $rc = 125 ] && jq -r .error '$T/out.json' | grep -q 'sandbox NAME'"
    sbx rm --force "$bad" 2> "$T/err.txt"
    rc=$?
    check "rm '$bad': exit 125, refused as a NAME" bash -c "[ $rc = 125 ] && grep -q 'sandbox NAME' '$T/err.txt'"
done
check_eq "the decoy beside the state root is untouched" "$(cat "$T/victim/state.json")" precious
check_eq "nothing made outside the state root" \
    "$(ls -d "/tmp/brig-decoy-$TAG" /sys/fs/cgroup/*/brig-decoy-$TAG /sys/fs/cgroup/*/victim 2>/dev/null)" ""
check_eq "no state made for a refused NAME" "$(ls -A "$SB_STATE" | grep -v "^.seccomp-cache\$\|^$NAME\$")" ""

# the use side of the forged one: the host's SIGTERM (kill(2): SI_USER, and
# si_pid 0 across the namespace) still ends the sandbox
kill -TERM "$INIT"
for _ in $(seq 50); do kill -0 "$INIT" 2>/dev/null || break; sleep 0.1; done
check_eq "the host's SIGTERM to the init ends the sandbox" \
    "$(sbx ls --json | jq -r --arg n "$NAME" '.[] | select(.name == $n) | .status')" stopped
sbx rm --force "$NAME"
check_eq "rm: exit 0" "$?" 0
check_eq "rm: no process left" "$(tagged_pids "$TAG-sb")" ""
