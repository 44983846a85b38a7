#!/usr/bin/env bash
# process.terminal: the pty comes from the container's own devpts, is the
# process's controlling terminal and stdio, /dev/console is bound to it;
# `run` relays it to the caller (raw mode restored afterwards), create and
# run -d hand the master to --console-socket (runc's protocol); without a
# place for the pty, create refuses before anything exists.
. "$(dirname "$0")/lib.sh"
it_init
: "${BRIG_RECVTTY:?BRIG_RECVTTY must point at the recvtty helper}"

TTY_SCRIPT='tty; test -t 0 && test -t 1 && test -t 2 && echo stdio-is-tty; stty size;
ls -l /dev/console | cut -c1; exit 7'

# tty_bundle NAME ARGS...: terminal true, a fixed console size.
tty_bundle() {
    local name=$1; shift
    mkb "$name" -- "$@" || return 1
    cfg "$name" '.process.terminal = true | .process.consoleSize = {height: 30, width: 100}'
}

# wait_socket PATH: recvtty listens once PATH exists.
wait_socket() {
    local n=50
    while [ $n -gt 0 ] && [ ! -S "$1" ]; do sleep 0.1; n=$((n - 1)); done
    [ -S "$1" ]
}

# ---- run, attached, stdin not a terminal -------------------------------------
tty_bundle tty-run /bin/sh -c "$TTY_SCRIPT" || bail "cannot build a bundle"
run_ct tty-run
check_eq "run: the container's exit status comes through the pty relay" "$RC" 7
out=$(cat "$T/tty-run.out")
check_eq "run: the process's stdio is the container's first pty, a terminal" \
    "$(printf '%s\n' "$out" | head -n 2 | tr '\n' ' ')" "/dev/pts/0 stdio-is-tty "
check "run: process.consoleSize is applied (30 rows, 100 columns)" grep -qx "30 100" "$T/tty-run.out"
check "run: /dev/console is a character device (the pty bound over it)" grep -qx "c" "$T/tty-run.out"
check "run: output to a file has no \\r (ONLCR cleared, as runc)" bash -c "! grep -q $'\r' '$T/tty-run.out'"
assert_clean tty-run

# ---- run under a terminal: raw mode while attached, restored after -------------
if command -v script >/dev/null; then
    tty_bundle tty-pty /bin/sh -c 'read -r line; echo "got:$line"'
    CLEAN_IDS+=("$(cid tty-pty)")
    # The pty of `script` is brig's terminal; stdin is a pipe here.
    inner="before=\$(stty -g); printf 'hello\\n' | timeout 30 $BRIG --root $STATE run --bundle $T/tty-pty $(cid tty-pty) >$T/tty-pty.out 2>$T/tty-pty.err; echo rc=\$? >$T/tty-pty.rc; after=\$(stty -g); [ \"\$before\" = \"\$after\" ] && echo restored >$T/tty-pty.mode"
    timeout 60 script -qec "$inner" /dev/null < <(exec sleep 15 2>/dev/null) >/dev/null 2>&1
    check_eq "run under script: exit status" "$(cat "$T/tty-pty.rc" 2>/dev/null)" "rc=0"
    check "run under script: stdin is relayed into the container's pty" grep -q "got:hello" "$T/tty-pty.out"
    # Here stdin is a pipe, so no raw mode: run again with the terminal as
    # stdin (--foreground: timeout's own process group could not set it).
    # The mode is read once it turns raw (10 s at most), while the container
    # waits on a fifo in its root; then the fifo lets it end.
    inner2="before=\$(stty -g); timeout --foreground 30 $BRIG --root $STATE run --bundle $T/tty-pty2 $(cid tty-pty2) </dev/tty >$T/tty-pty2.out 2>&1 & i=0; until stty -a | grep -q -- -icanon || [ \$i -ge 200 ]; do sleep 0.05; i=\$((i + 1)); done; stty -a > $T/tty-pty2.during; exec 3<>$T/tty-pty2/rootfs/go; echo go >&3; wait; after=\$(stty -g); [ \"\$before\" = \"\$after\" ] && echo restored >$T/tty-pty2.mode"
    tty_bundle tty-pty2 /bin/sh -c 'read -r x </go'
    mkfifo "$T/tty-pty2/rootfs/go"
    CLEAN_IDS+=("$(cid tty-pty2)")
    timeout 60 script -qec "$inner2" /dev/null < <(exec sleep 15 2>/dev/null) >/dev/null 2>&1
    check "run with a terminal as stdin: it is in raw mode while attached" grep -q -- "-icanon" "$T/tty-pty2.during"
    check "... and its mode is restored afterwards" grep -qx restored "$T/tty-pty2.mode"
    # SIGWINCH: the caller's terminal is resized while attached (once the
    # container said "ready" through the relay); the container then polls
    # its size for 5 s at most and prints the last it saw.
    tty_bundle tty-winch /bin/sh -c 'echo ready; i=0; while [ "$(stty size)" != "40 120" ] && [ $i -lt 100 ]; do sleep 0.05; i=$((i + 1)); done; stty size'
    CLEAN_IDS+=("$(cid tty-winch)")
    inner3="stty rows 20 cols 70; timeout --foreground 30 $BRIG --root $STATE run --bundle $T/tty-winch $(cid tty-winch) </dev/tty >$T/tty-winch.out 2>&1 & i=0; until grep -q ready $T/tty-winch.out || [ \$i -ge 200 ]; do sleep 0.05; i=\$((i + 1)); done; stty rows 40 cols 120; wait"
    timeout 60 script -qec "$inner3" /dev/null < <(exec sleep 15 2>/dev/null) >/dev/null 2>&1
    check_eq "a resize of the caller's terminal reaches the container's pty (SIGWINCH)" \
        "$(tr -d '\r' <"$T/tty-winch.out")" "ready
40 120"
    assert_clean tty-pty
    assert_clean tty-pty2
    assert_clean tty-winch
else
    skip "run under a terminal" "script(1) from util-linux is not installed"
fi

# ---- no devpts in the container: refused, naming the field ----------------------------
tty_bundle tty-nopts /bin/true
cfg tty-nopts '.mounts |= map(select(.destination != "/dev/pts"))'
run_ct tty-nopts
check "a terminal without a devpts in the container fails" test "$RC" -ne 0
check "... naming process.terminal and /dev/ptmx" grep -q "process.terminal: the container's /dev/ptmx" "$T/tty-nopts.err"
assert_clean tty-nopts

# ---- create without a console socket --------------------------------------------
tty_bundle tty-nosock /bin/true
create_ct tty-nosock
check "create with process.terminal and no --console-socket fails" test "$RC" -ne 0
check "... saying why (as runc)" grep -q "cannot allocate tty if brig will detach without setting console socket" "$T/tty-nosock.err"
assert_clean tty-nosock

run_ct tty-nosock -d
check "run -d with process.terminal and no --console-socket fails" test "$RC" -ne 0
assert_clean tty-nosock

mkb tty-false -- /bin/true
run_ct tty-false -d --console-socket "$T/none.sock"
check "--console-socket without process.terminal fails" grep -q "cannot use console socket" "$T/tty-false.err"
assert_clean tty-false

tty_bundle tty-badsock /bin/true
create_ct tty-badsock --console-socket "$T/missing.sock"
check "a console socket nobody listens on fails create" test "$RC" -ne 0
check "... naming the socket" grep -q "missing.sock" "$T/tty-badsock.err"
assert_clean tty-badsock

# ---- create + start with --console-socket ---------------------------------------
tty_bundle tty-sock /bin/sh -c 'read -r l; echo "in:$l"; tty; exit 0'
sock=$T/tty-sock.sock
"$BRIG_RECVTTY" --input $'ping\n' "$sock" >"$T/recv.out" 2>"$T/recv.err" &
recv_pid=$!
wait_socket "$sock" || not_ok "recvtty listens"
create_ct tty-sock --console-socket "$sock"
check_eq "create --console-socket succeeds" "$RC" 0
check "recvtty got a terminal fd" grep -qx "tty: yes" "$T/recv.err"
check "... with runc's payload (the master's name)" grep -qx "payload: /dev/ptmx" "$T/recv.err"
b start "$(cid tty-sock)" >/dev/null 2>&1
check "start succeeds" wait_status "$(cid tty-sock)" stopped 20
wait "$recv_pid"
check "the container read what was typed into the master" grep -q "in:ping" "$T/recv.out"
check "the container's output reached the master" grep -q "/dev/pts/0" "$T/recv.out"
b delete "$(cid tty-sock)" >/dev/null 2>&1
assert_clean tty-sock

# ---- run -d with --console-socket, exec -t -----------------------------------------
tty_bundle tty-d /usr/bin/brig-probe sleep 60
sock=$T/tty-d.sock
"$BRIG_RECVTTY" "$sock" >"$T/recv-d.out" 2>"$T/recv-d.err" &
recv_pid=$!
wait_socket "$sock"
run_ct tty-d -d --console-socket "$sock"
check_eq "run -d --console-socket succeeds" "$RC" 0
out=$(b exec -t "$(cid tty-d)" /bin/sh -c 'tty; test -t 0 && echo exec-tty' </dev/null 2>&1)
check_eq "exec -t: the process gets its own pty of the container's devpts" "$(printf '%s' "$out" | tr '\n' ' ')" "/dev/pts/1 exec-tty"
out=$(b exec "$(cid tty-d)" /bin/sh -c 'test -t 0 || echo no-tty' </dev/null 2>&1)
check_eq "exec without -t: no terminal (as runc, whatever the config says)" "$out" "no-tty"
b exec -t -d "$(cid tty-d)" /bin/true >/dev/null 2>"$T/tty-d.exec.err"
check "exec -t -d without --console-socket fails (as runc)" grep -q "cannot allocate tty" "$T/tty-d.exec.err"
sock2=$T/tty-d-exec.sock
"$BRIG_RECVTTY" "$sock2" >"$T/recv-e.out" 2>"$T/recv-e.err" &
recv2=$!
wait_socket "$sock2"
b exec -t -d --console-socket "$sock2" "$(cid tty-d)" /bin/sh -c 'echo via-socket; tty' >/dev/null 2>"$T/tty-d.exec2.err"
check_eq "exec -t -d --console-socket succeeds" "$?" 0
wait "$recv2"
check "... the exec'd process's pty master went to the socket" grep -q "via-socket" "$T/recv-e.out"
check "... and it is a pty of the container's devpts" grep -q "^/dev/pts/[0-9]" "$T/recv-e.out"
b delete -f "$(cid tty-d)" >/dev/null 2>&1
wait "$recv_pid"
check "the init's pty closed when the container went away (recvtty finished)" true
assert_clean tty-d
