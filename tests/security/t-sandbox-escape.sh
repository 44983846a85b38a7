#!/usr/bin/env bash
# brig sandbox run (docs/sandbox.md): a hostile command tries to outlive its
# sandbox (double fork + setsid + every catchable signal ignored, writing a
# heartbeat into the workspace), to write outside /workspace (the rootfs,
# brig's init) and to read the caller's environment. All fail: when the
# command exits or times out nothing of it remains on the host, the rootfs
# is unchanged, and the caller's environment is nowhere to be read.
# The use side (the same runs doing legitimate work) is t-sandbox.sh.
# shellcheck source=tests/security/lib.sh
. "$(dirname "$0")/lib.sh"
it_init

"$BRIG_MKBUNDLE" --probe "$BRIG_PROBE" --brig "$BRIG" --no-config "$T/b" >/dev/null 2>&1 ||
    bail "brig-mkbundle failed"
ROOTFS=$T/b/rootfs
build_static "$ROOTFS/usr/bin/escape" "$BRIG_SECURITY_SRC/sandbox-escape/escape.c"
WS=$T/ws
mkdir -p "$WS" && chown "$SB_WS_OWNER" "$WS"
SB_STATE=$T/sbstate
sum_before=$(sha256sum "$ROOTFS/bin/busybox" "$ROOTFS/etc/passwd" | sha256sum)
NEEDLE="caller-secret-$RANDOM$RANDOM"

# run_escape [flags] -- ARGS: the escaper in a sandbox, the caller holding
# a secret in an innocuous-looking variable.
run_escape() {
    rm -f "$WS/heartbeat"
    as_brig_user env BRIG_CALLER_VALUE="$NEEDLE" timeout -k 5 120 "$BRIG" sandbox run --policy "$SB_POLICY" \
        --state-root "$SB_STATE" --rootfs "$ROOTFS" --workspace "$WS" --env "BRIG_IT_TAG=$TAG-sb" --json "$@" \
        > "$T/out.json" 2> "$T/err.txt"
    RC=$?
    jq -r '.id // empty' "$T/out.json" >> "$T/ids" 2>/dev/null
}

# Nothing survives: no tagged process, and the heartbeat stops.
no_survivor() {
    local pids hb1 hb2
    sleep 0.5
    check "$1: the survivors did start (heartbeat written; a SIGKILL may have cut its last write)" test -e "$WS/heartbeat"
    pids=$(tagged_pids "$TAG-sb" | tr '\n' ' ')
    check "$1: no process of the sandbox left on the host" test -z "$pids" || diag "left: $pids"
    hb1=$(stat -c %Y.%s "$WS/heartbeat" 2>/dev/null; md5sum < "$WS/heartbeat" 2>/dev/null)
    sleep 1.5
    hb2=$(stat -c %Y.%s "$WS/heartbeat" 2>/dev/null; md5sum < "$WS/heartbeat" 2>/dev/null)
    check_eq "$1: the heartbeat in the workspace stopped" "$hb2" "$hb1"
    local c left=""
    # this test's sandboxes only: other runs on the host may be live
    for c in /sys/fs/cgroup/*/brig-sandbox/sb-*; do
        [ -d "$c" ] && grep -qxF "${c##*/}" "$T/ids" 2>/dev/null && left+="$c "
    done
    check "$1: no cgroup left" test -z "$left" || diag "$left"
    local st; st=$(ls -A "$SB_STATE" 2>/dev/null | grep -v '^.seccomp-cache$')
    check "$1: no state left" test -z "$st" || diag "$st"
}

# 1. the command exits, its detached children stay behind
run_escape -- /usr/bin/escape "$NEEDLE"
check_eq "escaper that exits: brig reports its exit" "$RC" 0
check "the escaper did detach (the attack ran)" grep -q "escaper detached" "$T/out.json"
no_survivor "after the command exits"

check_not "no write outside /workspace succeeded" grep -q WROTE "$T/out.json"
check_not "nothing written into the host rootfs" test -e "$ROOTFS/pwned"
check_eq "rootfs binaries unchanged" "$(sha256sum "$ROOTFS/bin/busybox" "$ROOTFS/etc/passwd" | sha256sum)" "$sum_before"
check_not "PID 1 (brig-init) cannot be ptraced by the command" grep -q "PTRACED" "$T/out.json"
check "the ptrace attempt was made" grep -q "refused ptrace 1" "$T/out.json"
check_not "the caller's environment is not readable inside" grep -q READ-ENV "$T/out.json"
check_not "the caller's secret appears nowhere in the result" grep -q "$NEEDLE" "$T/out.json" "$T/err.txt"

# 1b. the same from a terminal: the caller's tty is not reachable
if command -v script >/dev/null; then
    rm -f "$WS/heartbeat"
    timeout -k 5 120 script -qec "$(user_cmdline env BRIG_CALLER_VALUE="$NEEDLE" "$BRIG" sandbox run \
        --policy "$SB_POLICY" --state-root "$SB_STATE" --rootfs "$ROOTFS" --workspace "$WS" \
        --env "BRIG_IT_TAG=$TAG-sb" --stdin /dev/null --json -- /usr/bin/escape "$NEEDLE") > '$T/tty.json'" \
        "$T/typescript" >/dev/null 2>&1
    check "from a terminal: the escaper ran" grep -q "escaper detached" "$T/tty.json"
    check_not "from a terminal: nothing written to the caller's terminal" grep -q "TTY-WRITE-MARKER" "$T/typescript"
    check_not "from a terminal: /dev/tty not writable inside" grep -q "TTY-WROTE" "$T/tty.json"
    check_not "from a terminal: no input pushed into the caller's terminal (TIOCSTI)" grep -q "TTY-INJECTED" "$T/tty.json"
    no_survivor "from a terminal"
else
    skip "the caller's terminal" "script(1) is not installed"
fi

# Rootless: the timeouts' kill of detached children is t-sandbox-rootless's
# (its CI time kept small); the attacks above are the escaper's own.
[ "${BRIG_ROOTLESS:-0}" = 1 ] && exit

# 2. the command waits for the timeout, its children ignore SIGTERM
run_escape --timeout 3s -- /usr/bin/escape "$NEEDLE" wait
check_eq "escaper at the wall timeout: exit 124" "$RC" 124
check_eq "escaper at the wall timeout: timed_out" "$(jq -r .timed_out "$T/out.json")" true
no_survivor "after the wall timeout"

# 3. the same at the idle timeout
run_escape --idle-timeout 3s -- /usr/bin/escape "$NEEDLE" wait
check_eq "escaper at the idle timeout: exit 124" "$RC" 124
no_survivor "after the idle timeout"
